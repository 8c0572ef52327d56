//! The requests over a stopped program's state beyond reading variables:
//! `setVariable` (a register of a frame, by its register name or its source
//! name), data breakpoints (`dataBreakpointInfo`, `setDataBreakpoints`: the
//! debugger's watchpoints, which stop when a frame's register changes and
//! end when the frame returns), `readMemory` (the bytes of a buffer or
//! tensor a variable's `memoryReference` names) and `exceptionInfo` (the
//! trap the program stopped at).

use irvm::Ref;
use irvm_debugger::{RegisterRef, WatchKind};
use serde_json::{json, Value as Json};

use base64::Engine as _;

use super::{int_arg, str_arg, Reply, Server, VarRef};

/// Most bytes one `readMemory` returns (VS Code's memory view asks for
/// pages of a few KiB).
const MAX_READ_BYTES: i64 = 1 << 20;

/// A data breakpoint's `dataId`: `DEPTH:MODULE:FUNCTION:REGISTER` (the
/// frame's depth from the entry function, which with its function names
/// one invocation while it lasts; the module by its place in the context,
/// which tells apart modules registered under one name).
fn data_id(depth: usize, module: usize, function: u32, register: RegisterRef) -> String {
    format!("{depth}:{module}:{function}:{register}")
}

/// The parts of a [`data_id`] (the register starts at the last `%`: a
/// pair `%iN:M` holds `:`).
fn parse_data_id(id: &str) -> Option<(usize, usize, u32, RegisterRef)> {
    let at = id.rfind('%')?;
    let register = RegisterRef::parse(&id[at..]).ok()?;
    let head = id[..at].strip_suffix(':')?;
    let (depth, rest) = head.split_once(':')?;
    let (module, function) = rest.rsplit_once(':')?;
    Some((
        depth.parse().ok()?,
        module.parse().ok()?,
        function.parse().ok()?,
        register,
    ))
}

impl Server {
    /// The frame and register a variable of `variablesReference` named
    /// `name` is.
    fn register_of_variable(&mut self, args: &Json) -> Result<(usize, RegisterRef), String> {
        let id = int_arg(args, "variablesReference")?.ok_or("`variablesReference` is required")?;
        let name = str_arg(args, "name")?.ok_or("`name` is required")?;
        let index = id
            .checked_sub(1)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("no variables with reference {id}"))?;
        match self.vars.get(index) {
            Some(VarRef::Bank { frame, .. }) => {
                let frame = *frame;
                Ok((frame, RegisterRef::parse(name).map_err(|e| e.0)?))
            }
            Some(VarRef::Names { frame }) => {
                let frame = *frame;
                match self.names_of(frame)?.register(name) {
                    Some(found) => Ok((frame, found?)),
                    None => Err(format!("no variable `{name}` in this scope")),
                }
            }
            Some(VarRef::Children(_)) => {
                Err("elements of lists and buffers cannot be set or watched (registers can)".into())
            }
            None => Err(format!("no variables with reference {id}")),
        }
    }

    /// `setVariable`: the register gets the value (a number, a register or
    /// a source name of the frame), converted as the function uses it.
    pub(super) fn set_variable(&mut self, args: &Json) -> Reply {
        let (frame, register) = self.register_of_variable(args)?;
        let value = str_arg(args, "value")?.ok_or("`value` is required")?;
        let value = self.names_of(frame)?.substitute(value, false)?;
        let s = self.session()?;
        let v = s
            .dbg
            .set_register_in(frame, register, &value)
            .map_err(|e| e.0)?;
        let var = self.variable(String::new(), &v);
        Ok(json!({"value": var["value"], "type": var["type"], "variablesReference": 0}))
    }

    /// `setExpression`: a register, named as such or by its source name in
    /// the frame (`frameId`, else the innermost), gets the value, as
    /// `setVariable` sets it.
    pub(super) fn set_expression(&mut self, args: &Json) -> Reply {
        let expression = str_arg(args, "expression")?.ok_or("`expression` is required")?;
        let value = str_arg(args, "value")?.ok_or("`value` is required")?;
        let frame = if args.get("frameId").is_some_and(|f| !f.is_null()) {
            self.frame_arg(args)?
        } else {
            0
        };
        let names = self.names_of(frame)?;
        let register = names.substitute(expression, false)?;
        let register = RegisterRef::parse(&register).map_err(|_| {
            format!("`{expression}` cannot be set: only a register or a source name can")
        })?;
        let value = names.substitute(value, false)?;
        let s = self.session()?;
        let v = s
            .dbg
            .set_register_in(frame, register, &value)
            .map_err(|e| e.0)?;
        let var = self.variable(String::new(), &v);
        Ok(json!({"value": var["value"], "type": var["type"], "variablesReference": 0}))
    }

    /// `dataBreakpointInfo`: registers can be watched for writes, reads
    /// or both.
    pub(super) fn data_breakpoint_info(&mut self, args: &Json) -> Reply {
        let name = str_arg(args, "name")?.ok_or("`name` is required")?;
        let place = if args.get("variablesReference").is_some_and(|v| !v.is_null()) {
            self.register_of_variable(args)
        } else {
            // An expression in a frame: a register or a source name.
            let frame = if args.get("frameId").is_some() {
                self.frame_arg(args)?
            } else {
                0
            };
            self.names_of(frame)
                .and_then(|names| names.substitute(name, false))
                .and_then(|r| RegisterRef::parse(&r).map_err(|e| e.0))
                .map(|r| (frame, r))
        };
        let (frame, register) = match place {
            Ok(p) => p,
            Err(why) => return Ok(json!({"dataId": null, "description": why})),
        };
        let s = self.session()?;
        if s.dbg.trap().is_some() {
            return Ok(json!({"dataId": null,
                "description": "the program stopped at a trap: nothing runs past it to watch"}));
        }
        let frames = s.dbg.frames();
        let Some(address) = s.dbg.frame_location(frame).map(|(a, _)| a) else {
            return Ok(json!({"dataId": null, "description": "the frame is gone"}));
        };
        // (A register the frame does not have cannot be watched.)
        if let Err(e) = s.dbg.evaluate(&register.to_string(), frame) {
            return Ok(json!({"dataId": null, "description": e.0}));
        }
        let function = s.dbg.function_name(&address);
        let depth = frames.len() - frame;
        Ok(json!({
            "dataId": data_id(depth, address.module_index, address.function, register),
            "description": format!("{name} ({register} of {function}, frame #{frame})"),
            "accessTypes": ["write", "read", "readWrite"],
            "canPersist": false,
        }))
    }

    /// `setDataBreakpoints`: replaces the watchpoints with these.
    pub(super) fn set_data_breakpoints(&mut self, args: &Json) -> Reply {
        let wanted = match args.get("breakpoints") {
            Some(Json::Array(items)) => items.clone(),
            None | Some(Json::Null) => Vec::new(),
            Some(_) => return Err("`breakpoints` must be an array".into()),
        };
        let s = self.session()?;
        let old: Vec<u32> = s.dbg.watchpoints().iter().map(|w| w.id).collect();
        for id in old {
            let _ = s.dbg.delete_breakpoint(Some(id));
        }
        let mut out = Vec::new();
        for b in &wanted {
            let made = (|| -> Result<u32, String> {
                let id = b
                    .get("dataId")
                    .and_then(Json::as_str)
                    .ok_or("a data breakpoint needs a `dataId`")?;
                if !b.is_object() {
                    return Err("a data breakpoint is an object".into());
                }
                // `write`: a change, as `watch`; `read`: a read, as
                // `rwatch`; `readWrite`: either, as `awatch`.
                let kind = match str_arg(b, "accessType")? {
                    None | Some("write") => WatchKind::Write,
                    Some("read") => WatchKind::Read,
                    Some("readWrite") => WatchKind::Access,
                    Some(other) => {
                        return Err(format!(
                            "unknown `accessType` `{other}` (write, read or readWrite)"
                        ))
                    }
                };
                if str_arg(b, "hitCondition")?.is_some() {
                    return Err(
                        "data breakpoints take no `hitCondition` (a `condition` can \
                                test the register)"
                            .into(),
                    );
                }
                let (depth, module, function, register) =
                    parse_data_id(id).ok_or_else(|| format!("`{id}` is not a data id of irvm"))?;
                let frames = s.dbg.frames();
                let frame = frames
                    .len()
                    .checked_sub(depth)
                    .filter(|&k| {
                        frames.get(k).is_some_and(|f| {
                            f.module_index == module && f.frame.ordinal == Some(function)
                        })
                    })
                    .ok_or("the frame of this register has returned")?;
                let condition = str_arg(b, "condition")?;
                s.dbg
                    .add_watchpoint_kind_in(frame, register, condition, kind)
                    .map(|w| w.id)
                    .map_err(|e| e.0)
            })();
            out.push(match made {
                Ok(id) => json!({"id": id, "verified": true}),
                Err(message) => json!({"verified": false, "message": message}),
            });
        }
        Ok(json!({"breakpoints": out}))
    }
}

impl Server {
    /// The contents a `memoryReference` names: `mN` exactly as one was
    /// handed out (no sign, no leading zero).
    fn memory_reference(&self, reference: &str) -> Result<Ref, String> {
        reference
            .strip_prefix('m')
            .filter(|k| k.bytes().all(|b| b.is_ascii_digit()) && !k.starts_with('0'))
            .and_then(|k| k.parse::<usize>().ok())
            .and_then(|k| k.checked_sub(1))
            .and_then(|k| self.memory.get(k))
            .cloned()
            .ok_or_else(|| format!("no memory with reference `{reference}`"))
    }

    /// `readMemory`: `count` bytes from `offset` (which may be negative) of
    /// the contents a `memoryReference` names; bytes outside them are
    /// `unreadableBytes`.
    pub(super) fn read_memory(&mut self, args: &Json) -> Reply {
        let reference = str_arg(args, "memoryReference")?.ok_or("`memoryReference` is required")?;
        let r = self.memory_reference(reference)?;
        let offset = int_arg(args, "offset")?.unwrap_or(0);
        let count = int_arg(args, "count")?.ok_or("`count` is required")?;
        if !(0..=MAX_READ_BYTES).contains(&count) {
            return Err(format!("`count` is 0 to {MAX_READ_BYTES}, not {count}"));
        }
        // Bytes before the start are unreadable: the data returned begins
        // at byte 0 (its `address`), those after the end are counted.
        // (`unsigned_abs`: an offset of i64::MIN has no negation.)
        let skipped = if offset < 0 {
            offset.unsigned_abs().min(count as u64) as i64
        } else {
            0
        };
        let start = offset.max(0) as u64;
        let wanted = (count - skipped) as usize;
        let s = self.session()?;
        let memory = s.dbg.read_memory(&r, start, wanted).map_err(|e| e.0)?;
        Ok(json!({
            "address": format!("{start:#x}"),
            "data": base64::engine::general_purpose::STANDARD.encode(&memory.bytes),
            "unreadableBytes": wanted - memory.bytes.len(),
        }))
    }

    /// `writeMemory`: `data` (base64) at `offset` of the contents a
    /// `memoryReference` names; with `allowPartial`, what fits before
    /// their end. Read-only memory (a module's rodata) is refused.
    pub(super) fn write_memory(&mut self, args: &Json) -> Reply {
        let reference = str_arg(args, "memoryReference")?.ok_or("`memoryReference` is required")?;
        let r = self.memory_reference(reference)?;
        let offset = int_arg(args, "offset")?.unwrap_or(0);
        let offset = u64::try_from(offset)
            .map_err(|_| format!("`offset` {offset} is before the start of the contents"))?;
        let partial = match args.get("allowPartial") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(_) => return Err("`allowPartial` must be true or false".into()),
        };
        let data = str_arg(args, "data")?.ok_or("`data` is required")?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("`data` is not base64: {e}"))?;
        let s = self.session()?;
        let written = s
            .dbg
            .write_memory(&r, offset, &bytes, partial)
            .map_err(|e| e.0)?;
        Ok(json!({"offset": 0, "bytesWritten": written}))
    }

    /// `exceptionInfo`: the trap the program stopped at.
    pub(super) fn exception_info(&mut self, _args: &Json) -> Reply {
        let s = self.session()?;
        let trap = s
            .dbg
            .trap()
            .ok_or("the program is not stopped at a trap")?
            .clone();
        let text = crate::cmd_run::describe_trap("run", &trap);
        Ok(json!({
            "exceptionId": trap.code.to_string(),
            "description": trap.message,
            "breakMode": "always",
            "details": {
                "message": trap.message,
                "typeName": trap.code.to_string(),
                "stackTrace": text,
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_ids_name_the_frame_and_register() {
        for register in [
            RegisterRef::I32(3),
            RegisterRef::Pair(4),
            RegisterRef::Ref(0),
        ] {
            let id = data_id(2, 3, 7, register);
            assert_eq!(parse_data_id(&id), Some((2, 3, 7, register)), "{id}");
        }
        assert_eq!(parse_data_id("x:0:1:%i0"), None);
        assert_eq!(parse_data_id("1:m:1:%i0"), None);
        assert_eq!(parse_data_id("1:0:1:%q0"), None);
        assert_eq!(parse_data_id("1:%i0"), None);
    }
}
