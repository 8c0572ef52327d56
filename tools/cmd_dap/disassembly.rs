//! The `disassemble` request as VS Code's disassembly view makes it: a
//! memory reference (an instruction pointer from a stack frame, or an
//! address of an earlier answer), an instruction offset that may reach far
//! before or after the function, and a count. The VM has no flat address
//! space: each function's code is its own range, so the answer is the
//! function's instructions at their own addresses, with `invalid` filler
//! entries at distinct increasing addresses before and after them. Block
//! labels are not instructions: they name the instruction they start
//! (`symbol`).

use irvm_debugger::{CodeAddress, DebugInfo};
use serde_json::{json, Value as Json};

use super::sources::Sources;

/// Most instructions one request may ask for: five times what VS Code's
/// disassembly view asks (400), and few enough that the reader thread
/// answers in about 50 ms (a debug build), so `pause`, `terminate` and
/// `threads` behind it wait no longer than that.
pub const MAX_INSTRUCTIONS: usize = 2_000;

/// What a `disassemble` request asks for.
pub struct DisassembleRequest {
    /// The memory reference plus the byte offset.
    pub reference: u64,
    /// Instructions before (negative) or after the referenced one.
    pub instruction_offset: i64,
    /// How many entries the answer has.
    pub count: usize,
}

/// How positions are written (the client's line and column bases).
#[derive(Clone, Copy)]
pub struct Bases {
    /// 1 when lines count from 1, else 0.
    pub line: i64,
    /// 1 when columns count from 1, else 0.
    pub column: i64,
}

/// The entries the request asks for.
pub fn disassemble(
    dbg: &DebugInfo,
    sources: &mut Sources,
    req: &DisassembleRequest,
    bases: &Bases,
) -> Result<Vec<Json>, String> {
    let (place, target) = dbg
        .reference_place(req.reference)
        .ok_or_else(|| format!("{:#x} is not an instruction address", req.reference))?;
    let (offsets, length) = dbg.instruction_offsets(place.module_index, place.function);
    let texts = dbg
        .disassemble(place.module_index, place.function)
        .map_err(|e| e.0)?;
    let first = offsets.first().copied().unwrap_or(length);
    let n = offsets.len() as i64;
    // The referenced entry's place in the function's instruction list,
    // extended before (negative) and after (>= n) by one entry per byte.
    let anchor = if target < i64::from(first) {
        target - i64::from(first)
    } else if target >= i64::from(length) {
        n + (target - i64::from(length))
    } else {
        offsets.partition_point(|&o| i64::from(o) <= target) as i64 - 1
    };
    let base = dbg.address_reference(&CodeAddress {
        offset: 0,
        ..place.clone()
    });
    let reference_at = |offset: i64| -> Option<u64> { base?.checked_add_signed(offset) };
    let with_source = dbg.has_positions(place.module_index, place.function);
    let listing = if with_source {
        None
    } else {
        super::sources::listing(dbg, &place).ok()
    };
    let name = dbg.function_name(&place);
    // The disassembly document, the same for every instruction.
    let generated = listing
        .as_ref()
        .map(|_| sources.generated_json(dbg, &place));
    let positions = dbg.instruction_positions(place.module_index, place.function);
    let mut out = Vec::with_capacity(req.count);
    let mut last_location: Option<Json> = None;
    for k in 0..req.count as i64 {
        let i = anchor
            .saturating_add(req.instruction_offset)
            .saturating_add(k);
        let address = if i < 0 {
            i64::from(first).checked_add(i).and_then(reference_at)
        } else if i >= n {
            (i - n)
                .checked_add(i64::from(length))
                .and_then(reference_at)
        } else {
            None
        };
        if i < 0 || i >= n {
            let address = address.ok_or("the address range of this function is exhausted")?;
            out.push(json!({
                "address": format!("{address:#x}"),
                "instruction": "",
                "presentationHint": "invalid",
            }));
            continue;
        }
        let offset = offsets[i as usize];
        let a = CodeAddress {
            offset,
            ..place.clone()
        };
        let r = dbg
            .address_reference(&a)
            .ok_or("the address range of this function is exhausted")?;
        let at = texts.partition_point(|(o, _)| *o < offset);
        let text = texts
            .get(at..)
            .and_then(|rest| rest.iter().find(|(o, _)| *o == offset))
            .map(|(_, t)| t.clone())
            .unwrap_or_default();
        let mut j = json!({"address": format!("{r:#x}"), "instruction": text});
        // A label line just before: the block this instruction starts.
        let label = texts[..at]
            .last()
            .filter(|(o, t)| offsets.binary_search(o).is_err() && t.starts_with('^'))
            .map(|(_, t)| t.trim_end_matches(':').to_string());
        if i == 0 {
            j["symbol"] = json!(name);
        } else if let Some(l) = label {
            j["symbol"] = json!(format!("{name} {l}"));
        }
        let (location, line, column) = match (&listing, positions.get(&offset)) {
            (_, Some(p)) => (
                sources.source_json(&p.file),
                Some(i64::from(p.line)),
                Some(i64::from(p.col)),
            ),
            (Some(l), None) => (
                generated.clone().unwrap_or(Json::Null),
                l.lines.get(&offset).copied(),
                Some(1),
            ),
            (None, None) => (Json::Null, None, None),
        };
        if let (Some(line), Some(column)) = (line, column) {
            if last_location.as_ref() != Some(&location) || out.is_empty() {
                j["location"] = location.clone();
                last_location = Some(location);
            }
            j["line"] = json!(line - 1 + bases.line);
            j["column"] = json!(column - 1 + bases.column);
        }
        out.push(j);
    }
    Ok(out)
}
