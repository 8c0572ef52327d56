//! Results printed as `iree-run-module` prints them
//! (`iree_tooling_format_variant` in IREE's `tooling/function_io.c`).
//!
//! A value is `i32=5`, `f32=1.5` (C's `%g`), or `i8=44` for the element of
//! an i8 list. A ref prints its type name and a newline, then: a list its
//! elements, one `child_list[i]: <value>` line each (nested lists the same
//! way, without indentation); a buffer view its contents; anything else
//! `(no printer)`. A null ref or unset list element is `(null)`.

use irvm::{ElementType, List, Ref, TypeDef, Value};

/// The text after `result[i]: ` for `value` (without the final newline);
/// buffer views, also those inside lists, print at most `max_elements`
/// elements (`--output_max_element_count`).
pub fn format_value(value: &Value, max_elements: usize) -> Result<String, String> {
    let mut out = String::new();
    format_into(value, None, max_elements, &mut out)?;
    Ok(out)
}

fn format_into(
    value: &Value,
    narrow: Option<ElementType>,
    max_elements: usize,
    out: &mut String,
) -> Result<(), String> {
    match value {
        Value::None | Value::Ref(Ref::Null) => out.push_str("(null)"),
        Value::I32(v) => match narrow {
            Some(ElementType::I8) => out.push_str(&format!("i8={}", *v as i8)),
            Some(ElementType::I16) => out.push_str(&format!("i16={}", *v as i16)),
            _ => out.push_str(&value.to_string()),
        },
        Value::I64(_) | Value::F32(_) | Value::F64(_) => out.push_str(&value.to_string()),
        Value::Ref(Ref::List(list)) => {
            out.push_str("vm.list\n");
            format_list(list, max_elements, out)?;
        }
        Value::Ref(Ref::Buffer(_)) => out.push_str("vm.buffer\n(no printer)"),
        Value::Ref(r @ Ref::Host(host)) => {
            let name = host.type_name().trim_start_matches('!');
            out.push_str(name);
            out.push('\n');
            let as_value = Value::Ref(r.clone());
            match irvm_hal::BufferView::from_value(&as_value) {
                Some(view) => {
                    let text = irvm_hal::format_buffer_view(view, max_elements).map_err(|t| {
                        format!("{}; formatting a buffer view: {}", t.code, t.message)
                    })?;
                    out.push_str(&text);
                }
                None => out.push_str("(no printer)"),
            }
        }
    }
    Ok(())
}

fn format_list(list: &List, max_elements: usize, out: &mut String) -> Result<(), String> {
    let narrow = match list.element_type() {
        TypeDef::Value(t @ (ElementType::I8 | ElementType::I16)) => Some(t),
        _ => None,
    };
    for i in 0..list.len() {
        let element = list
            .get(i as u32)
            .map_err(|t| format!("{}; reading list element {i}: {}", t.code, t.message))?;
        out.push_str(&format!("child_list[{i}]: "));
        format_into(&element, narrow, max_elements, out)?;
        out.push('\n');
    }
    Ok(())
}
