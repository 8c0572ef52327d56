//! `gotoTargets` and `goto` (VS Code's "Jump to Cursor",
//! `supportsGotoTargetsRequest`): the instructions where a source line
//! starts in the function the program is stopped in, and moving the
//! innermost frame to one of them ([`irvm_debugger::Debugger::move_to`]);
//! the program stays stopped there (a `stopped` event with reason `goto`
//! follows the response) and goes on from there with the next request.
//! Only the current function's lines are targets: a frame goes on only in
//! its own function.

use irvm_debugger::CodeAddress;
use serde_json::{json, Value as Json};

use super::{int_arg, sources, str_arg, Reply, Server};

impl Server {
    /// `gotoTargets`: each start of `line` of `source` in the current
    /// function (a line split by other lines starts more than once).
    pub(super) fn goto_targets(&mut self, args: &Json) -> Reply {
        let source = args.get("source").ok_or("`source` is required")?;
        let asked = int_arg(args, "line")?.ok_or("`line` is required")?;
        let line = asked.saturating_add(1 - self.bases.line);
        let column_base = self.bases.column;
        let Some(s) = self.session.as_ref() else {
            return Err("no program: send `launch` first".into());
        };
        if s.dbg.trap().is_some() {
            return Err("the program stopped at a trap: nothing runs past it".into());
        }
        let (here, _) = s
            .dbg
            .current()
            .ok_or("the program is not being run (use `configurationDone`)")?;
        let function = CodeAddress {
            offset: 0,
            ..here.clone()
        };
        let name = s.dbg.function_name(&here);
        let mut code = self.code()?;
        // (offset, column) of each target.
        let mut found: Vec<(u32, i64)> = Vec::new();
        if s.dbg.has_positions(here.module_index, here.function) {
            let path = str_arg(source, "path")?
                .or(str_arg(source, "name")?)
                .ok_or("`source.path` is required")?
                .to_string();
            let files = code.sources.recorded_files(&path, &s.dbg.source_files());
            let mut previous = None;
            for (offset, p) in s
                .dbg
                .instruction_positions(here.module_index, here.function)
            {
                let key = (p.file.clone(), p.line);
                let on_line = files.contains(&p.file) && i64::from(p.line) == line;
                if on_line && previous.as_ref() != Some(&key) {
                    found.push((offset, i64::from(p.col) - 1 + column_base));
                }
                previous = Some(key);
            }
        } else {
            // A function without debug information: the lines of its
            // disassembly document.
            let reference = int_arg(source, "sourceReference")?;
            if reference == Some(code.sources.reference_for(&function)) {
                let listing = sources::listing(s.dbg.debug_info(), &function)?;
                found.extend(
                    listing
                        .lines
                        .iter()
                        .filter(|(_, l)| **l == line)
                        .map(|(o, _)| (*o, column_base)),
                );
            }
        }
        drop(code);
        if found.is_empty() {
            return Err(format!(
                "line {asked} has no code in `{name}`, the function the program is stopped in \
                 (goto moves only within it)"
            ));
        }
        let mut targets = Vec::new();
        let mut addresses = Vec::new();
        for (offset, column) in found {
            let address = CodeAddress {
                offset,
                ..function.clone()
            };
            let mut target = json!({
                "id": self.goto_targets.len() + addresses.len() + 1,
                "label": format!("{}.{name}+0x{offset:08X}", address.module),
                "line": asked,
                "column": column,
            });
            if let Some(r) = s.dbg.address_reference(&address) {
                target["instructionPointerReference"] = json!(format!("{r:#x}"));
            }
            addresses.push(address);
            targets.push(target);
        }
        self.goto_targets.extend(addresses);
        Ok(json!({"targets": targets}))
    }

    /// `goto`: the innermost frame goes on at target `targetId` (of a
    /// `gotoTargets` answer since the program last ran); the caller sends
    /// the `stopped` event after the response.
    pub(super) fn goto(&mut self, args: &Json) -> Reply {
        let id = int_arg(args, "targetId")?.ok_or("`targetId` is required")?;
        let target = id
            .checked_sub(1)
            .and_then(|k| usize::try_from(k).ok())
            .and_then(|k| self.goto_targets.get(k))
            .cloned()
            .ok_or_else(|| format!("no goto target {id} (ask `gotoTargets` first)"))?;
        self.session()?.dbg.move_to(&target).map_err(|e| e.0)?;
        // The frames changed: their variables are asked for again.
        self.vars.clear();
        self.memory.clear();
        Ok(Json::Null)
    }
}
