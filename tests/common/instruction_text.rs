//! One generated instruction as a line of VM assembly, in the canonical
//! syntax the disassembler prints: results first (`%a, %b = `), then
//! `vm.MNEMONIC`, then the operands, as a plain list or through the ISA
//! table's syntax template.
//!
//! The program generators of the tests (`all/asm.rs`,
//! `all/random_differential.rs`) and of the fuzz targets
//! (`fuzz/fuzz_targets/gen_program.rs`, by `#[path]`) print with it.

use irvm::bytecode::isa::{Access, Field, InstrInfo};

/// Whether `field` is written by the instruction (printed before ` = `
/// unless the syntax template places it).
fn is_result(field: &Field) -> bool {
    matches!(
        field,
        Field::Reg(_, Access::Write) | Field::RefMove(Access::Write) | Field::Results(_)
    )
}

/// The line for `info` with `operands[i]` the text of field `i` (an empty
/// text is left out, as for a field the syntax implies). No indentation
/// and no newline.
pub fn instruction_line(info: &InstrInfo, operands: &[String]) -> String {
    let mut placed = vec![false; operands.len()];
    let mut body = String::new();
    if info.syntax.is_empty() {
        let parts: Vec<&str> = info
            .fields
            .iter()
            .zip(operands)
            .filter(|(f, o)| !is_result(f) && !o.is_empty())
            .map(|(_, o)| o.as_str())
            .collect();
        body = parts.join(", ");
    } else {
        // `{N}` is field N's text; `{{` and `}}` are literal braces.
        let mut rest = info.syntax;
        while let Some(c) = rest.chars().next() {
            if let Some(r) = rest.strip_prefix("{{") {
                body.push('{');
                rest = r;
            } else if let Some(r) = rest.strip_prefix("}}") {
                body.push('}');
                rest = r;
            } else if let Some((i, r)) = rest
                .strip_prefix('{')
                .and_then(|r| r.split_once('}'))
                .and_then(|(n, r)| Some((n.parse::<usize>().ok()?, r)))
            {
                body.push_str(&operands[i]);
                placed[i] = true;
                rest = r;
            } else {
                body.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    let results: Vec<&str> = info
        .fields
        .iter()
        .zip(operands)
        .enumerate()
        .filter(|(i, (f, o))| is_result(f) && !placed[*i] && !o.is_empty())
        .map(|(_, (_, o))| o.as_str())
        .collect();
    let mut line = String::new();
    if !results.is_empty() {
        line.push_str(&results.join(", "));
        line.push_str(" = ");
    }
    line.push_str("vm.");
    line.push_str(info.mnemonic);
    if !body.is_empty() {
        line.push(' ');
        line.push_str(&body);
    }
    line
}
