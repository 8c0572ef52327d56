//! One instruction line to bytecode, driven entirely by the ISA table: the
//! mnemonic selects an [`InstrInfo`], its syntax template (or the plain
//! comma list) says where each field's text is, and each [`Field`] kind
//! says how that text is parsed and encoded. Nothing here lists
//! instructions.

use crate::bytecode::disasm::{is_result, TemplatePiece, TemplatePieces};
use crate::bytecode::isa::{
    Access, Bank, Field, InstrInfo, ListKind, Opcode, OpcodeSet, INSTRUCTIONS, REF_BANK_BIT,
    REF_MOVE_BIT,
};
use crate::loader::schema::FeatureBits;

use super::calls::{self, CallSite};
use super::text::{
    edit_distance, find_word, match_literal, parse_quoted_bytes, parse_uint, split_commas,
};
use super::{Diag, FunctionState, ModuleDraft};
use crate::number_text::{assembler_f32, assembler_f64, atoi_i32, atoi_i64};
use crate::program::Signature;

/// Largest i32-bank register ordinal an operand can name.
const MAX_I32_REGISTER: u32 = 0x3FFF;
/// Largest ref register ordinal.
const MAX_REF_REGISTER: u32 = 0x3FFF;

/// The parsed text of one field, before encoding.
enum Parsed<'s> {
    U16(u16),
    U32(u32),
    U64(u64),
    Str(std::borrow::Cow<'s, [u8]>),
    List(Vec<u16>),
    Func(&'s str),
    Target(&'s str),
    Remap(Vec<(u16, u16)>),
    Cases(Vec<(&'s str, Vec<(u16, u16)>)>),
}

/// Assembles the instruction `text` (a sub-slice of the source line, with
/// comment and location removed) into `func`'s bytecode.
pub(super) fn assemble<'s>(
    draft: &mut ModuleDraft,
    func: &mut FunctionState,
    text: &'s str,
) -> Result<(), Diag<'s>> {
    let text = text.trim();
    let (results_text, rest) = match text.find('=') {
        Some(eq) if text.starts_with('%') => (Some(text[..eq].trim()), text[eq + 1..].trim_start()),
        _ => (None, text),
    };
    let mnemonic_end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    let mnemonic = &rest[..mnemonic_end];
    let operands = rest[mnemonic_end..].trim();
    let info = lookup(mnemonic)?;
    // MLIR's generic form ends a call with its function type
    // (`vm.call @f(%i0) : (i32) -> i32`); this assembly takes the types
    // from the callee's declaration, and says so instead of misreading the
    // type as operands.
    if let Some(at) = operands.find(" : (") {
        let signature = &operands[at + 1..];
        if signature.contains("->") && info.mnemonic.starts_with("call") {
            return Err(Diag::new(
                format!(
                    "vm.{} takes no function type after its operands (the callee's \
                     declaration gives it): remove '{signature}'",
                    info.mnemonic
                ),
                signature,
            ));
        }
    }

    let mut parsed: Vec<Option<Parsed<'s>>> = (0..info.fields.len()).map(|_| None).collect();
    let in_template = template_field_set(info);

    // Results: the written fields the template does not place, in order.
    let result_fields: Vec<usize> = (0..info.fields.len())
        .filter(|&i| is_result(&info.fields[i]) && !in_template.contains(&i))
        .collect();
    let result_items = results_text.map(split_commas).unwrap_or_default();
    let has_list = result_fields
        .iter()
        .any(|&i| matches!(info.fields[i], Field::Results(_)));
    if !has_list && result_items.len() != result_fields.len() {
        let at = results_text.unwrap_or(mnemonic);
        return Err(Diag::new(
            format!(
                "vm.{} has {} result{}, found {}",
                info.mnemonic,
                result_fields.len(),
                if result_fields.len() == 1 { "" } else { "s" },
                result_items.len()
            ),
            at,
        ));
    }
    assign_items(
        draft,
        func,
        info,
        &result_fields,
        &result_items,
        &mut parsed,
        results_text.unwrap_or(mnemonic),
    )?;

    if info.syntax.is_empty() {
        let fields: Vec<usize> = (0..info.fields.len())
            .filter(|&i| !is_result(&info.fields[i]))
            .collect();
        let items = split_commas(operands);
        assign_items(
            draft,
            func,
            info,
            &fields,
            &items,
            &mut parsed,
            operands_or(operands, mnemonic),
        )?;
    } else {
        match match_template(info.syntax, operands, mnemonic) {
            Ok(pieces) => {
                for (i, piece) in pieces {
                    parsed[i] = Some(parse_field(draft, func, info, i, piece)?);
                }
            }
            // iree-as-module also takes the operands as a plain comma list
            // in field order (`vm.print "n", %i0`,
            // `vm.global.store.indirect.i32 %offset, %value`): the
            // disassembler's spelling first, then that one.
            Err(template_error) => {
                let fields: Vec<usize> = (0..info.fields.len())
                    .filter(|&i| !is_result(&info.fields[i]))
                    .collect();
                let items = split_commas(operands);
                if assign_items(
                    draft,
                    func,
                    info,
                    &fields,
                    &items,
                    &mut parsed,
                    operands_or(operands, mnemonic),
                )
                .is_err()
                {
                    return Err(template_error);
                }
            }
        }
    }

    encode(draft, func, info, parsed, mnemonic)
}

fn operands_or<'s>(operands: &'s str, mnemonic: &'s str) -> &'s str {
    if operands.is_empty() {
        mnemonic
    } else {
        operands
    }
}

/// The table entry for `vm.<mnemonic>` (internal superinstructions and the
/// block marker are not assembly).
fn lookup(mnemonic: &str) -> Result<&'static InstrInfo, Diag<'_>> {
    let found = mnemonic
        .strip_prefix("vm.")
        .and_then(Opcode::from_mnemonic)
        .map(Opcode::info)
        .filter(|info| info.set != OpcodeSet::Internal && info.op != Opcode::Block);
    found.ok_or_else(|| {
        let bare = mnemonic.strip_prefix("vm.").unwrap_or(mnemonic);
        let best = INSTRUCTIONS
            .iter()
            .filter(|i| i.set != OpcodeSet::Internal && i.op != Opcode::Block)
            .map(|i| (edit_distance(bare, i.mnemonic), i.mnemonic))
            .min();
        let hint = match best {
            Some((d, name)) if d <= 3 => format!("; did you mean 'vm.{name}'?"),
            _ => String::new(),
        };
        Diag::new(format!("unknown instruction '{mnemonic}'{hint}"), mnemonic)
    })
}

fn template_field_set(info: &InstrInfo) -> Vec<usize> {
    TemplatePieces::new(info.syntax)
        .filter_map(|p| match p {
            TemplatePiece::Field(i) => Some(i),
            TemplatePiece::Text(_) => None,
        })
        .collect()
}

/// Hands plain comma-separated items to `fields`; a list field takes every
/// item the fixed fields after it leave.
fn assign_items<'s>(
    draft: &mut ModuleDraft,
    func: &mut FunctionState,
    info: &'static InstrInfo,
    fields: &[usize],
    items: &[&'s str],
    parsed: &mut [Option<Parsed<'s>>],
    whole: &'s str,
) -> Result<(), Diag<'s>> {
    let is_list = |i: usize| {
        matches!(
            info.fields[i],
            Field::Operands(_) | Field::Results(_) | Field::SegmentSizes
        )
    };
    // A register followed by a type field is written `%i0 : !vm.buffer` in
    // one item (iree-as-module's spelling of the indirect ref globals).
    let split;
    let items = if fields.iter().any(|&i| info.fields[i] == Field::TypeId) {
        split = items
            .iter()
            .flat_map(|item| match spaced_colon(item) {
                Some(at) => vec![item[..at].trim(), item[at + 1..].trim()],
                None => vec![*item],
            })
            .collect::<Vec<&'s str>>();
        &split[..]
    } else {
        items
    };
    let fixed = fields.iter().filter(|&&i| !is_list(i)).count();
    let has_list = fields.iter().any(|&i| is_list(i));
    if items.len() < fixed || (!has_list && items.len() != fixed) {
        let expected: Vec<&str> = fields
            .iter()
            .map(|&i| field_noun(&info.fields[i]))
            .collect();
        let at = if items.len() > fixed {
            items[fixed]
        } else {
            whole
        };
        return Err(Diag::new(
            format!(
                "vm.{} expects {} operand{} ({}), found {}",
                info.mnemonic,
                fields.len(),
                if fields.len() == 1 { "" } else { "s" },
                expected.join(", "),
                items.len()
            ),
            at,
        ));
    }
    let list_len = items.len() - fixed;
    let mut next = 0;
    for &i in fields {
        if is_list(i) {
            let list = &items[next..next + list_len];
            next += list_len;
            parsed[i] = Some(parse_list(func, &info.fields[i], list, whole)?);
        } else {
            parsed[i] = Some(parse_field(draft, func, info, i, items[next])?);
            next += 1;
        }
    }
    Ok(())
}

/// What a field is called in "expects ..." messages.
fn field_noun(field: &Field) -> &'static str {
    match field {
        Field::Reg(bank, _) => match bank {
            Bank::I32 => "i32 register",
            Bank::I64 => "i64 register pair",
            Bank::F32 => "f32 register",
            Bank::F64 => "f64 register pair",
            Bank::Ref => "ref register",
        },
        Field::RefMove(_) => "ref register",
        Field::ConstI16 => "count",
        Field::Const(_) => "constant",
        Field::GlobalAttr => "global",
        Field::FuncAttr => "function",
        Field::RodataAttr => "rodata ordinal",
        Field::TypeId => "type",
        Field::StringAttr => "string",
        Field::Operands(_) | Field::Results(_) => "register list",
        Field::SegmentSizes => "segment sizes",
        Field::BranchTarget => "block",
        Field::BranchOperands => "block arguments",
        Field::BranchTableCases => "cases",
    }
}

/// Cuts `operands` into the pieces the template's fields cover.
fn match_template<'s>(
    template: &'static str,
    operands: &'s str,
    mnemonic: &'s str,
) -> Result<Vec<(usize, &'s str)>, Diag<'s>> {
    // Adjacent text pieces (`{{` splits them) are one literal.
    let mut pieces: Vec<(Option<usize>, String)> = Vec::new();
    for piece in TemplatePieces::new(template) {
        match piece {
            TemplatePiece::Field(i) => pieces.push((Some(i), String::new())),
            TemplatePiece::Text(t) => match pieces.last_mut() {
                Some((None, lit)) => lit.push_str(t),
                _ => pieces.push((None, t.to_string())),
            },
        }
    }
    let mut out = Vec::new();
    let mut rest = operands;
    let expected = |lit: &str, at: &'s str| {
        let at = if at.trim().is_empty() {
            operands_or(operands, mnemonic)
        } else {
            at
        };
        Diag::new(format!("expected '{}'", lit.trim()), at)
    };
    let mut skip_to = 0;
    for (k, (field, lit)) in pieces.iter().enumerate() {
        if k < skip_to {
            continue;
        }
        match field {
            None => {
                if let Some(after) = match_literal(rest, lit) {
                    rest = after;
                    continue;
                }
                // A named global (`@g`) where the template has `.rwdata[N]`
                // or `.refs[N]`.
                let storage = [".rwdata[", ".refs["]
                    .into_iter()
                    .find_map(|p| lit.strip_suffix(p));
                let named = storage
                    .and_then(|prefix| match_literal(rest, prefix))
                    .filter(|r| r.starts_with('@'));
                let (Some(after), Some((Some(field), _)), Some((None, closing))) =
                    (named, pieces.get(k + 1), pieces.get(k + 2))
                else {
                    return Err(expected(lit, rest));
                };
                let end = after
                    .find(|c: char| c.is_whitespace() || c == ',')
                    .unwrap_or(after.len());
                out.push((*field, &after[..end]));
                let closing = closing.strip_prefix(']').unwrap_or(closing);
                rest = match_literal(&after[end..], closing)
                    .ok_or_else(|| expected(closing, &after[end..]))?;
                skip_to = k + 3;
            }
            Some(i) => {
                let text = match pieces.get(k + 1) {
                    None => std::mem::take(&mut rest),
                    Some((_, next)) => {
                        let core = next.trim();
                        let word = core.split_whitespace().next().unwrap_or(core);
                        let last = k + 2 == pieces.len();
                        let at = if last && next.trim_start() == core {
                            let body = rest.trim_end();
                            body.ends_with(core).then(|| body.len() - core.len())
                        } else {
                            find_word(rest, word, next.starts_with(' '), false)
                        };
                        let at = at.ok_or_else(|| expected(next, rest))?;
                        let (field_text, after) = rest.split_at(at);
                        rest = after;
                        field_text
                    }
                };
                out.push((*i, text.trim()));
            }
        }
    }
    if !rest.trim().is_empty() {
        return Err(Diag::new("unexpected text after the operands", rest.trim()));
    }
    Ok(out)
}

/// Parses the text of field `i`.
fn parse_field<'s>(
    draft: &mut ModuleDraft,
    func: &mut FunctionState,
    info: &'static InstrInfo,
    i: usize,
    text: &'s str,
) -> Result<Parsed<'s>, Diag<'s>> {
    let field = &info.fields[i];
    let bad = |what: &str| Diag::new(format!("expected {what}, found '{text}'"), text);
    Ok(match *field {
        Field::Reg(bank, _) => Parsed::U16(parse_register(func, bank, false, text)?),
        Field::RefMove(_) => Parsed::U16(parse_register(func, Bank::Ref, true, text)?),
        Field::ConstI16 => Parsed::U16(
            parse_uint(text, u64::from(u16::MAX)).ok_or_else(|| bad("a count (0..65535)"))? as u16,
        ),
        Field::Const(bank) => match bank {
            // The reference's `iree_string_view_atoi_*` and `strtof`/
            // `strtod` (crate::number_text): `017` is octal, trailing text
            // after an integer is ignored, an i32 keeps the low bits.
            Bank::I32 => Parsed::U32(atoi_i32(text).ok_or_else(|| bad("an i32 constant"))? as u32),
            Bank::I64 => Parsed::U64(
                atoi_i64(text).ok_or_else(|| bad("an i64 constant (-2^63..2^63-1)"))? as u64,
            ),
            Bank::F32 => Parsed::U32(
                assembler_f32(text)
                    .ok_or_else(|| bad("an f32 constant (finite values must stay normal f32s)"))?
                    .to_bits(),
            ),
            Bank::F64 => Parsed::U64(
                assembler_f64(text)
                    .ok_or_else(|| bad("an f64 constant (finite values must stay normal f64s)"))?
                    .to_bits(),
            ),
            Bank::Ref => return Err(bad("a constant")),
        },
        Field::GlobalAttr => {
            let width = global_width(info);
            if text.starts_with('@') {
                let ordinal = draft
                    .global_ordinal(text, width as u32)
                    .map_err(|m| Diag::new(m, text))?;
                return Ok(Parsed::U32(ordinal));
            }
            let ordinal =
                parse_uint(text, u64::from(u32::MAX)).ok_or_else(|| bad("a global offset"))? as u32;
            if width == 0 {
                draft.global_refs = draft.global_refs.max(u64::from(ordinal) + 1);
            } else {
                draft.global_bytes = draft.global_bytes.max(u64::from(ordinal) + width);
            }
            Parsed::U32(ordinal)
        }
        Field::FuncAttr => {
            if !text.starts_with('@') || text.len() < 2 {
                return Err(bad("a function symbol like @module.name"));
            }
            Parsed::Func(text)
        }
        Field::RodataAttr => {
            let ordinal =
                parse_uint(text, u64::from(u32::MAX)).ok_or_else(|| bad("a rodata ordinal"))?;
            if ordinal >= draft.rodata.len() as u64 {
                return Err(Diag::new(
                    format!(
                        "rodata segment {ordinal} is not declared (the module has {})",
                        draft.rodata.len()
                    ),
                    text,
                ));
            }
            Parsed::U32(ordinal as u32)
        }
        Field::TypeId => {
            if !is_type_name(text) {
                return Err(bad("a type (such as i32, !vm.buffer or !vm.list<?>)"));
            }
            Parsed::U32(draft.type_ordinal(text))
        }
        Field::StringAttr => match parse_quoted_bytes(text) {
            Some((s, tail)) if tail.trim().is_empty() => {
                if s.len() > usize::from(u16::MAX) {
                    return Err(Diag::new("string longer than 65535 bytes", text));
                }
                Parsed::Str(s)
            }
            _ => return Err(bad("a quoted string")),
        },
        Field::Operands(_) | Field::Results(_) | Field::SegmentSizes => {
            return parse_list(func, field, &split_commas(text), text);
        }
        Field::BranchTarget => Parsed::Target(parse_label(text)?),
        Field::BranchOperands => Parsed::Remap(parse_remap(func, text)?),
        Field::BranchTableCases => {
            let mut cases = Vec::new();
            for (n, case) in split_commas(text).into_iter().enumerate() {
                if n == 0 && case.is_empty() {
                    continue;
                }
                let (index, dest) = case
                    .split_once(':')
                    .ok_or_else(|| Diag::new("expected a case like '0: ^bb1()'", case))?;
                if cases.len() >= usize::from(u16::MAX) {
                    return Err(Diag::new(
                        format!(
                            "too many cases: a br_table has at most {} (the bytecode counts \
                             them in 16 bits)",
                            u16::MAX
                        ),
                        index.trim(),
                    ));
                }
                if parse_uint(index, u64::from(u16::MAX)) != Some(cases.len() as u64) {
                    return Err(Diag::new(
                        format!(
                            "expected case {} here (cases are numbered in order)",
                            cases.len()
                        ),
                        index.trim(),
                    ));
                }
                let (label, remap) = split_block_call(dest.trim())?;
                cases.push((label, parse_remap(func, remap)?));
            }
            Parsed::Cases(cases)
        }
    })
}

/// Bytes of rwdata a global access of this instruction covers (0: a ref
/// global), from the bank of its value register.
fn global_width(info: &InstrInfo) -> u64 {
    info.fields
        .iter()
        .find_map(|f| match f {
            Field::Reg(bank, _) => Some(*bank),
            Field::RefMove(_) => Some(Bank::Ref),
            _ => None,
        })
        .map_or(4, |bank| match bank {
            Bank::I32 | Bank::F32 => 4,
            Bank::I64 | Bank::F64 => 8,
            Bank::Ref => 0,
        })
}

fn parse_list<'s>(
    func: &mut FunctionState,
    field: &Field,
    items: &[&'s str],
    whole: &'s str,
) -> Result<Parsed<'s>, Diag<'s>> {
    let mut list = Vec::with_capacity(items.len());
    for &item in items {
        let value = match field {
            Field::SegmentSizes => parse_uint(item, u64::from(u16::MAX)).ok_or_else(|| {
                Diag::new(format!("expected a segment size, found '{item}'"), item)
            })? as u16,
            Field::Operands(ListKind::Of(bank)) | Field::Results(ListKind::Of(bank))
                if *bank == Bank::Ref =>
            {
                parse_register(func, Bank::Ref, true, item)?
            }
            _ => parse_any_register(func, item)?,
        };
        list.push(value);
    }
    if list.len() > usize::from(u16::MAX) {
        return Err(Diag::new("list longer than 65535 entries", whole));
    }
    Ok(Parsed::List(list))
}

/// `^bbN`: the label name.
fn parse_label(text: &str) -> Result<&str, Diag<'_>> {
    match text.strip_prefix('^') {
        Some(name)
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
        {
            Ok(text)
        }
        _ => Err(Diag::new(
            format!("expected a block label like ^bb1, found '{text}'"),
            text,
        )),
    }
}

/// `^bb1(%i0->%i1)`: the label and the remap text.
fn split_block_call(text: &str) -> Result<(&str, &str), Diag<'_>> {
    let open = text
        .find('(')
        .ok_or_else(|| Diag::new("expected '(' after the block label", text))?;
    let inner = text[open + 1..]
        .trim_end()
        .strip_suffix(')')
        .ok_or_else(|| Diag::new("expected ')' to close the block arguments", text))?;
    Ok((parse_label(text[..open].trim())?, inner))
}

fn parse_remap<'s>(func: &mut FunctionState, text: &'s str) -> Result<Vec<(u16, u16)>, Diag<'s>> {
    let mut pairs = Vec::new();
    for item in split_commas(text) {
        let (src, dst) = item
            .split_once("->")
            .ok_or_else(|| Diag::new("expected a block argument like %i0->%i1", item))?;
        pairs.push((
            parse_any_register(func, src.trim())?,
            parse_any_register(func, dst.trim())?,
        ));
    }
    if pairs.len() > usize::from(u16::MAX) {
        return Err(Diag::new("more than 65535 block arguments", text));
    }
    Ok(pairs)
}

/// A register in a list or remap: `%iN` (or a pair `%iN:M`), `%rN`, `%RN`.
fn parse_any_register<'s>(func: &mut FunctionState, text: &'s str) -> Result<u16, Diag<'s>> {
    if text.starts_with("%r") || text.starts_with("%R") {
        parse_register(func, Bank::Ref, true, text)
    } else if text.contains(':') {
        parse_register(func, Bank::I64, false, text)
    } else {
        parse_register(func, Bank::I32, false, text)
    }
}

/// `%r0 : (!vm.list<i32>) -> i32`, MLIR's trailing type annotation after
/// an operand: the register and the annotation from its `:`. `None` when
/// `text` has no whitespace-separated `:` followed by a type (the register
/// pair `%i0:1` is not an annotation).
fn split_type_annotation(text: &str) -> Option<(&str, &str)> {
    let space = text.find(char::is_whitespace)?;
    let rest = text[space..].trim_start();
    let after_colon = rest.strip_prefix(':')?.trim_start();
    let starts_a_type = after_colon
        .chars()
        .next()
        .is_some_and(|c| c == '(' || c == '!' || c.is_ascii_alphabetic());
    starts_a_type.then(|| (&text[..space], rest))
}

/// A register operand of `bank` (`move_ok`: `%RN` is allowed), counting it
/// toward the function's register totals.
fn parse_register<'s>(
    func: &mut FunctionState,
    bank: Bank,
    move_ok: bool,
    text: &'s str,
) -> Result<u16, Diag<'s>> {
    if let Some((register, annotation)) = split_type_annotation(text) {
        return Err(Diag::new(
            format!(
                "unexpected type annotation '{annotation}' after the register {register}: \
                 VM assembly writes no operand or result types (remove it)"
            ),
            annotation,
        ));
    }
    let number = |digits: &str, max: u32| -> Option<u32> {
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse::<u32>().ok())
            .flatten()
            .filter(|&n| n <= max)
    };
    if bank == Bank::Ref {
        let (moved, digits) = if let Some(d) = text.strip_prefix("%R") {
            (true, d)
        } else if let Some(d) = text.strip_prefix("%r") {
            (false, d)
        } else {
            return Err(Diag::new(
                format!("expected a ref register like %r0, found '{text}'"),
                text,
            ));
        };
        if moved && !move_ok {
            return Err(Diag::new(
                "this operand cannot move its ref (write %r, not %R)",
                text,
            ));
        }
        let n = number(digits, MAX_REF_REGISTER).ok_or_else(|| {
            Diag::new(
                format!("ref register '{text}' out of range (%r0..%r{MAX_REF_REGISTER})"),
                text,
            )
        })?;
        func.ref_count = func.ref_count.max(n + 1);
        func.body_registers.1 = func.body_registers.1.max(n + 1);
        return Ok(REF_BANK_BIT | if moved { REF_MOVE_BIT } else { 0 } | n as u16);
    }
    let Some(body) = text.strip_prefix("%i") else {
        let kind = if bank.slots() == 2 {
            "a register pair like %i0:1"
        } else {
            "a register like %i0"
        };
        return Err(Diag::new(
            format!(
                "expected {} ({} operand), found '{text}'",
                kind,
                bank.name()
            ),
            text,
        ));
    };
    let (low, high) = match body.split_once(':') {
        Some((l, h)) => (l, Some(h)),
        None => (body, None),
    };
    let n = number(low, MAX_I32_REGISTER).ok_or_else(|| {
        Diag::new(
            format!("register '{text}' out of range (%i0..%i{MAX_I32_REGISTER})"),
            text,
        )
    })?;
    let span = if bank.slots() == 2 {
        let high = high.ok_or_else(|| {
            Diag::new(
                format!(
                    "{} operands are register pairs: write %i{n}:{}",
                    bank.name(),
                    n + 1
                ),
                text,
            )
        })?;
        if number(high, u32::MAX) != Some(n + 1) {
            let message = if number(high, u32::MAX).is_some() {
                format!(
                    "register pair must name adjacent registers: %i{n}:{}",
                    n + 1
                )
            } else {
                format!(
                    "expected a register pair like %i{n}:{}, found '{text}'",
                    n + 1
                )
            };
            return Err(Diag::new(message, text));
        }
        if n % 2 != 0 {
            return Err(Diag::new(
                format!(
                    "register pair %i{n}:{} starts at an odd register: i64/f64 pairs start at even \
                     ones (both runtimes' verifiers refuse odd ones)",
                    n + 1
                ),
                text,
            ));
        }
        2
    } else {
        if high.is_some() {
            return Err(Diag::new(
                format!("{} operands are single registers: write %i{n}", bank.name()),
                text,
            ));
        }
        1
    };
    func.i32_count = func.i32_count.max(n + span);
    func.body_registers.0 = func.body_registers.0.max(n + span);
    Ok(n as u16)
}

fn put_u16(code: &mut Vec<u8>, v: u16) {
    code.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(code: &mut Vec<u8>, v: u32) {
    code.extend_from_slice(&v.to_le_bytes());
}

/// Pads to an even offset (function bodies start 8-aligned).
fn align2(code: &mut Vec<u8>) {
    if code.len() % 2 == 1 {
        code.push(0);
    }
}

fn encode<'s>(
    draft: &mut ModuleDraft,
    func: &mut FunctionState,
    info: &'static InstrInfo,
    parsed: Vec<Option<Parsed<'s>>>,
    mnemonic: &'s str,
) -> Result<(), Diag<'s>> {
    let code = &mut draft.bytecode;
    if let Some(prefix) = info.set.prefix() {
        code.push(prefix);
    }
    code.push(info.code);
    let feature = match info.set {
        OpcodeSet::ExtF32 => FeatureBits::EXT_F32,
        OpcodeSet::ExtF64 => FeatureBits::EXT_F64,
        _ => FeatureBits::empty(),
    };
    func.requirements |= feature;
    draft.requirements |= feature;
    if let Some(call) = call_site(info, &parsed, func.current_line) {
        draft.call_sites.push(call);
    }
    if info.op == Opcode::Return {
        let values = parsed.iter().find_map(|p| match p {
            Some(Parsed::List(list)) => Some(list.as_slice()),
            _ => None,
        });
        if let Some(problem) = return_mismatch(func, values.unwrap_or(&[])) {
            draft.return_problems.push((func.current_line, problem));
        }
    }
    // Only the element type goes into the type table, as iree-as-module
    // enters it: iree-compile's tables also hold the list type itself, and
    // the assembly form of such a module declares it with `vm.type`.
    let type_of_result = ref_result_type(draft, func, info, &parsed);
    let cases_len = parsed.iter().find_map(|p| match p {
        Some(Parsed::Cases(c)) => Some(c.len()),
        _ => None,
    });
    for (field, value) in info.fields.iter().zip(parsed) {
        let value = match value {
            Some(v) => v,
            // Fields the syntax leaves implicit.
            None => match field {
                Field::ConstI16 => Parsed::U16(cases_len.unwrap_or(0) as u16),
                Field::TypeId => Parsed::U32(
                    draft.type_ordinal(type_of_result.as_deref().unwrap_or("!vm.opaque")),
                ),
                _ => {
                    return Err(Diag::new(
                        format!("vm.{}: missing {}", info.mnemonic, field_noun(field)),
                        mnemonic,
                    ))
                }
            },
        };
        let code = &mut draft.bytecode;
        match value {
            Parsed::U16(v) => put_u16(code, v),
            Parsed::U32(v) => put_u32(code, v),
            Parsed::U64(v) => code.extend_from_slice(&v.to_le_bytes()),
            Parsed::Str(s) => {
                put_u16(code, s.len() as u16);
                code.extend_from_slice(&s);
            }
            Parsed::List(list) => {
                align2(code);
                put_u16(code, list.len() as u16);
                for r in list {
                    put_u16(code, r);
                }
            }
            Parsed::Func(name) => {
                let ordinal = draft
                    .function_operand(name)
                    .map_err(|m| Diag::new(m, name))?;
                match ordinal {
                    Some(o) => put_u32(&mut draft.bytecode, o),
                    None => {
                        // An internal function defined later: patched at the end.
                        draft.function_fixups.push((
                            draft.bytecode.len(),
                            name.to_string(),
                            func.current_line,
                        ));
                        put_u32(&mut draft.bytecode, 0);
                    }
                }
            }
            Parsed::Target(label) => {
                func.label_fixups
                    .push((draft.bytecode.len(), label.to_string(), 0, 0));
                put_u32(&mut draft.bytecode, 0);
            }
            Parsed::Remap(pairs) => put_remap(code, &pairs),
            Parsed::Cases(cases) => {
                for (label, pairs) in cases {
                    func.label_fixups
                        .push((draft.bytecode.len(), label.to_string(), 0, 0));
                    put_u32(&mut draft.bytecode, 0);
                    put_remap(&mut draft.bytecode, &pairs);
                }
            }
        }
    }
    Ok(())
}

/// How a `vm.return`'s values disagree with the function's calling
/// convention, if they do: both runtimes' verifiers check it at load
/// (IREE's lets extra values through to an exported call's caller, then
/// fails an internal call at run time; docs/COMPATIBILITY.md).
fn return_mismatch(func: &FunctionState, values: &[u16]) -> Option<String> {
    let cconv = func
        .cconv
        .as_deref()
        .filter(|c| !c.is_empty())
        .unwrap_or(calls::NO_SIGNATURE);
    let signature = Signature::parse(cconv).ok()?;
    let problem = calls::mismatch("value", values, &signature.results)?;
    Some(format!(
        "vm.return disagrees with @{}'s calling convention \"{cconv}\": {problem}",
        func.name
    ))
}

/// What a call instruction passes and receives, for the check against the
/// callee's calling convention once every function is known
/// (`calls.rs`); `None` for other instructions.
fn call_site(info: &InstrInfo, parsed: &[Option<Parsed<'_>>], line: usize) -> Option<CallSite> {
    let variadic = match info.op {
        Opcode::Call | Opcode::CallYieldable => false,
        Opcode::CallVariadic | Opcode::CallVariadicYieldable => true,
        _ => return None,
    };
    let mut call = CallSite {
        callee: String::new(),
        line,
        variadic,
        segment_sizes: Vec::new(),
        arguments: Vec::new(),
        results: Vec::new(),
    };
    for (field, value) in info.fields.iter().zip(parsed) {
        match (field, value) {
            (Field::FuncAttr, Some(Parsed::Func(name))) => call.callee = name.to_string(),
            (Field::SegmentSizes, Some(Parsed::List(l))) => call.segment_sizes = l.clone(),
            (Field::Operands(_), Some(Parsed::List(l))) => call.arguments = l.clone(),
            (Field::Results(_), Some(Parsed::List(l))) => call.results = l.clone(),
            _ => {}
        }
    }
    Some(call)
}

/// The type of the ref an instruction writes, and records it for the
/// result register: a written type field (`: !vm.buffer`, for `list.alloc`
/// the list of it), `!vm.buffer` for the buffer constructors, or, for an
/// instruction whose type the syntax leaves out (`vm.switch.ref`), the
/// known type of its ref operands.
fn ref_result_type(
    draft: &ModuleDraft,
    func: &mut FunctionState,
    info: &InstrInfo,
    parsed: &[Option<Parsed<'_>>],
) -> Option<String> {
    let index = |r: u16| r & !(REF_BANK_BIT | REF_MOVE_BIT);
    let mut written_type = None;
    let mut operand_type = None;
    let mut result = None;
    for (field, value) in info.fields.iter().zip(parsed) {
        match (field, value) {
            (Field::TypeId, Some(Parsed::U32(t))) => {
                written_type = draft.types.get(*t as usize).cloned()
            }
            (
                Field::Reg(Bank::Ref, Access::Read) | Field::RefMove(Access::Read),
                Some(Parsed::U16(r)),
            ) => operand_type = operand_type.or_else(|| func.ref_types.get(&index(*r)).cloned()),
            (Field::Operands(ListKind::Of(Bank::Ref)), Some(Parsed::List(list))) => {
                for r in list {
                    operand_type = operand_type.or_else(|| func.ref_types.get(&index(*r)).cloned());
                }
            }
            (
                Field::Reg(Bank::Ref, Access::Write) | Field::RefMove(Access::Write),
                Some(Parsed::U16(r)),
            ) => result = Some(index(*r)),
            _ => {}
        }
    }
    let has_type_field = info.fields.iter().any(|f| matches!(f, Field::TypeId));
    let ty = match info.op {
        Opcode::ListAlloc => written_type.map(|t| format!("!vm.list<{t}>")),
        Opcode::ConstRefRodata | Opcode::BufferAlloc | Opcode::BufferClone => {
            Some("!vm.buffer".to_string())
        }
        _ if has_type_field => written_type.or(operand_type),
        _ => None,
    };
    if let Some(r) = result {
        match &ty {
            Some(t) => func.ref_types.insert(r, t.clone()),
            None => func.ref_types.remove(&r),
        };
    }
    ty
}

fn put_remap(code: &mut Vec<u8>, pairs: &[(u16, u16)]) {
    align2(code);
    put_u16(code, pairs.len() as u16);
    for &(src, dst) in pairs {
        put_u16(code, src);
        put_u16(code, dst);
    }
}

/// Whether `text` spells a type, as a type field takes it: a primitive
/// (`i32`, `f64`, ...), `?`, or `!` (or `vm.`) and a dotted name with an optional
/// `<...>` of types (`!vm.buffer`, `!vm.list<i32>`, `!vm.ref<?>`), and
/// nothing else (operand text after a missing comma is not a type name).
fn is_type_name(text: &str) -> bool {
    let text = text.trim();
    if matches!(text, "?" | "i8" | "i16" | "i32" | "i64" | "f32" | "f64") {
        return true;
    }
    // `vm.buffer` finds a declared `!vm.buffer`, as in the reference.
    let Some(name) = text
        .strip_prefix('!')
        .or_else(|| text.starts_with("vm.").then_some(text))
    else {
        return false;
    };
    let (head, inner) = match name.split_once('<') {
        Some((head, rest)) => match rest.strip_suffix('>') {
            Some(inner) => (head, Some(inner)),
            None => return false,
        },
        None => (name, None),
    };
    let head_ok = !head.is_empty()
        && head
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
    head_ok && inner.is_none_or(is_type_name)
}

/// The byte offset of the first `:` with whitespace (or an end) on both
/// sides: a type suffix, as opposed to the `:` of a register pair (`%i2:3`).
fn spaced_colon(item: &str) -> Option<usize> {
    let bytes = item.as_bytes();
    (0..bytes.len()).find(|&i| {
        bytes[i] == b':'
            && (i == 0 || bytes[i - 1].is_ascii_whitespace())
            && (i + 1 == bytes.len() || bytes[i + 1].is_ascii_whitespace())
    })
}
