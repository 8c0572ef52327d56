//! Results printed as `iree-run-module` prints them
//! (`iree_tooling_format_variant` in IREE's `tooling/function_io.c`).
//!
//! A value is `i32=5`, `f32=1.5` (C's `%g`), or `i8=44` for the element of
//! an i8 list. A ref prints its type name and a newline, then: a list its
//! elements, one `child_list[i]: <value>` line each (nested lists the same
//! way, without indentation); a buffer view its contents; anything else
//! `(no printer)`. A null ref or unset list element is `(null)`.

use std::collections::HashSet;
use std::sync::Arc;

use irvm::{ElementType, List, Ref, TypeDef, Value};

/// The text after `result[i]: ` for `value` (without the final newline);
/// buffer views, also those inside lists, print at most `max_elements`
/// elements (`--output_max_element_count`). Nested lists print without
/// recursion, so a chain of any depth prints in constant stack depth; a
/// list that holds itself (directly or through the lists in it) is an
/// error, where iree-run-module overflows its stack.
pub fn format_value(value: &Value, max_elements: usize) -> Result<String, String> {
    let mut out = String::new();
    let Value::Ref(Ref::List(top)) = value else {
        format_one(value, None, max_elements, &mut out)?;
        return Ok(out);
    };
    out.push_str("vm.list\n");
    // The lists being printed, outermost first, each with the index of its
    // next element.
    let mut path: Vec<(Arc<List>, u32)> = vec![(top.clone(), 0)];
    let mut on_path = HashSet::from([Arc::as_ptr(top)]);
    while let Some((list, next)) = path.last_mut() {
        let i = *next;
        if i as usize >= list.len() {
            on_path.remove(&Arc::as_ptr(list));
            path.pop();
            if !path.is_empty() {
                // The end of the nested list's line in its parent.
                out.push('\n');
            }
            continue;
        }
        *next += 1;
        let narrow = match list.element_type() {
            TypeDef::Value(t @ (ElementType::I8 | ElementType::I16)) => Some(t),
            _ => None,
        };
        let element = list
            .get(i)
            .map_err(|t| format!("{}; reading list element {i}: {}", t.code, t.message))?;
        out.push_str(&format!("child_list[{i}]: "));
        if let Value::Ref(Ref::List(inner)) = &element {
            if !on_path.insert(Arc::as_ptr(inner)) {
                return Err(format!(
                    "FAILED_PRECONDITION; the result list holds itself (element {i} of a list \
                     {} level(s) down is a list that encloses it), so it has no printed form",
                    path.len() - 1
                ));
            }
            out.push_str("vm.list\n");
            path.push((inner.clone(), 0));
            continue;
        }
        format_one(&element, narrow, max_elements, &mut out)?;
        out.push('\n');
    }
    Ok(out)
}

/// A value that is not a list (a list element's, `narrow` for an i8 or
/// i16 list's).
fn format_one(
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
        Value::Ref(Ref::List(_)) => {
            unreachable!("format_value prints lists, format_one what they hold")
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
