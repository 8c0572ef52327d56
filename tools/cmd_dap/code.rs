//! The requests that read only the program's code and debug information
//! or edit its breakpoints: `setBreakpoints`, `setFunctionBreakpoints`,
//! `setInstructionBreakpoints`, `disassemble` and `source`. They need
//! nothing of the running context, so the reader thread answers them
//! while the program runs, even inside a long host call (breakpoints set
//! then take effect at the program's next instruction), and the session
//! answers them while it is stopped: both through one [`CodeRequests`]
//! behind a mutex.

use std::collections::HashMap;
use std::sync::Arc;

use irvm::loader::SourcePosition;
use irvm_debugger::{BreakpointRequest, BreakpointTable, CodeAddress, DebugInfo};
use serde_json::{json, Value as Json};

use super::disassembly::{self, Bases, DisassembleRequest, MAX_INSTRUCTIONS};
use super::sources::{self, Sources};
use super::{in_terms_of, int_arg, parse_reference, str_arg, Reply};
use crate::source_names::{FunctionNames, SourceNames};

/// The requests [`CodeRequests::answer`] serves.
pub const CODE_REQUESTS: [&str; 8] = [
    "setBreakpoints",
    "setFunctionBreakpoints",
    "setInstructionBreakpoints",
    "disassemble",
    "source",
    "breakpointLocations",
    "loadedSources",
    "modules",
];

/// Whether `command` changes the breakpoints (the running program must
/// then be interrupted to see them).
pub fn sets_breakpoints(command: &str) -> bool {
    command.starts_with("set") && command.ends_with("Breakpoints")
}

/// The launched program's code, debug information and breakpoints, as
/// the requests of [`CODE_REQUESTS`] and the session use them.
pub struct CodeRequests {
    pub(super) info: DebugInfo,
    table: BreakpointTable,
    /// The sources: the files the client named, and the references of
    /// the disassembly documents.
    pub sources: Sources,
    /// The breakpoints per source path (setBreakpoints replaces them).
    source_bps: HashMap<String, Vec<Asked>>,
    /// The function breakpoints.
    function_bps: Vec<Asked>,
    /// The instruction breakpoints.
    instruction_bps: Vec<Asked>,
    /// Source names per (module, function), made on first use.
    names: HashMap<(usize, u32), Arc<FunctionNames>>,
    /// The client's line and column bases.
    pub(super) bases: Bases,
    /// `noDebug`: no breakpoint is set.
    no_debug: bool,
    /// The launch's module paths (as given), for `modules`.
    pub(super) module_paths: Vec<String>,
}

impl CodeRequests {
    /// The requests over a launched program's debug information and
    /// breakpoints.
    pub fn new(
        info: DebugInfo,
        table: BreakpointTable,
        sources: Sources,
        bases: Bases,
        no_debug: bool,
        module_paths: Vec<String>,
    ) -> CodeRequests {
        CodeRequests {
            info,
            table,
            sources,
            source_bps: HashMap::new(),
            function_bps: Vec::new(),
            instruction_bps: Vec::new(),
            names: HashMap::new(),
            bases,
            no_debug,
            module_paths,
        }
    }

    /// Answers one of [`CODE_REQUESTS`].
    pub fn answer(&mut self, command: &str, args: &Json) -> Reply {
        match command {
            "setBreakpoints" | "setFunctionBreakpoints" | "setInstructionBreakpoints"
                if self.no_debug =>
            {
                no_breakpoints(args)
            }
            "setBreakpoints" => self.set_breakpoints(args),
            "setFunctionBreakpoints" => self.set_function_breakpoints(args),
            "setInstructionBreakpoints" => self.set_instruction_breakpoints(args),
            "disassemble" => self.disassemble(args),
            "source" => self.source(args),
            "breakpointLocations" => self.breakpoint_locations(args),
            "loadedSources" => Ok(self.loaded_sources()),
            "modules" => self.modules(args),
            other => Err(format!("unknown request `{other}`")),
        }
    }

    /// Whether breakpoint `id` is a function breakpoint.
    pub fn is_function_breakpoint(&self, id: u32) -> bool {
        self.function_bps.iter().any(|a| a.id == id)
    }

    /// Whether breakpoint `id` is an instruction breakpoint.
    pub fn is_instruction_breakpoint(&self, id: u32) -> bool {
        self.instruction_bps.iter().any(|a| a.id == id)
    }

    /// Of the breakpoints `old` that a request replaces, the ones that an
    /// entry of `wanted` asks for again (the same fields) stay, with
    /// their ids, as VS Code's own adapters keep them: each entry's, if
    /// any. The others are deleted.
    fn keep_asked_again(
        &mut self,
        mut old: Vec<Asked>,
        wanted: &[Json],
    ) -> Vec<Option<irvm_debugger::Breakpoint>> {
        let set = self.table.breakpoints();
        let kept = wanted
            .iter()
            .map(|w| {
                let fields = w.to_string();
                let at = old.iter().position(|a| a.fields == fields)?;
                let id = old.remove(at).id;
                set.iter().find(|b| b.id == id).cloned()
            })
            .collect();
        self.clear(old.into_iter().map(|a| a.id).collect());
        kept
    }

    /// Whether breakpoint `id` is set.
    pub fn has_breakpoint(&self, id: u32) -> bool {
        self.table.breakpoints().iter().any(|b| b.id == id)
    }

    /// A line as the client counts.
    pub(super) fn line_out(&self, line: i32) -> i64 {
        i64::from(line) - 1 + self.bases.line
    }

    /// A DAP breakpoint for a debugger breakpoint.
    fn breakpoint_json(&self, b: &irvm_debugger::Breakpoint, asked_line: Option<i64>) -> Json {
        let mut j = json!({"id": b.id, "verified": true});
        if let Some(line) = b.line {
            j["line"] = json!(self.line_out(line));
            if asked_line.is_some_and(|a| a != i64::from(line)) {
                j["message"] = json!(format!(
                    "moved to line {}, the next line with code",
                    self.line_out(line)
                ));
            }
        }
        if let Some(a) = b.addresses.first() {
            if let Some(r) = self.info.address_reference(a) {
                j["instructionReference"] = json!(format!("{r:#x}"));
            }
        }
        j
    }

    fn clear(&mut self, ids: Vec<u32>) {
        for id in ids {
            // Gone already when a temporary one stopped: nothing to do.
            let _ = self.table.delete_breakpoint(Some(id));
        }
    }

    fn set_breakpoints(&mut self, args: &Json) -> Reply {
        let source = args.get("source").ok_or("`source` is required")?;
        let wanted: Vec<Json> = match args.get("breakpoints") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(a)) => a.clone(),
            Some(_) => return Err("`breakpoints` must be an array".into()),
        };
        check_entries(&wanted, "line")?;
        let reference = int_arg(source, "sourceReference")?.filter(|r| *r > 0);
        if let Some(function) = self.listed_function(source, reference)? {
            return self.set_listing_breakpoints(function, &wanted);
        }
        let path = str_arg(source, "path")?
            .or(str_arg(source, "name")?)
            .ok_or("`source.path` is required")?
            .to_string();
        let old = self.source_bps.remove(&path).unwrap_or_default();
        let mut kept = self.keep_asked_again(old, &wanted);
        let recorded = self.info.source_files();
        let files = self.sources.recorded_files(&path, &recorded);
        let mut ids = Vec::new();
        let mut out = Vec::new();
        for (w, kept) in wanted.iter().zip(&mut kept) {
            let asked = int_arg(w, "line")?.ok_or("a source breakpoint needs a `line`")?;
            // The debugger counts from 1.
            let line = asked.saturating_add(1 - self.bases.line);
            if let Some(b) = kept.take() {
                ids.push(Asked::of(&b, w));
                out.push(self.breakpoint_json(&b, Some(line)));
                continue;
            }
            let Ok(line32) = i32::try_from(line) else {
                out.push(json!({"verified": false, "line": asked, "message": format!("no line {asked}")}));
                continue;
            };
            let req = BreakpointRequest {
                spec: format!("{path}:{asked}"),
                condition: None,
                hit_condition: str_arg(w, "hitCondition")?.map(str::to_string),
                temporary: false,
            };
            let added = self.table.add_line_breakpoint(&files, line32, req);
            let added = added.map_err(|e| e.0).and_then(|b| self.refine(b, w));
            match added {
                Ok(b) => {
                    ids.push(Asked::of(&b, w));
                    out.push(self.breakpoint_json(&b, Some(line)));
                }
                Err(e) => out.push(json!({"verified": false, "line": asked, "message": e})),
            }
        }
        self.source_bps.insert(path, ids);
        Ok(json!({"breakpoints": out}))
    }

    /// The function whose disassembly document a breakpoint's `source`
    /// names: by its name `MODULE.FUNCTION.vmasm` when that is a function
    /// without debug information and no file of that path is on disk
    /// (references are the session's own: a client restarting a session
    /// sends the previous one's), else by its `sourceReference`; `None`
    /// for a file.
    pub(super) fn listed_function(
        &mut self,
        source: &Json,
        reference: Option<i64>,
    ) -> Result<Option<CodeAddress>, String> {
        let name = str_arg(source, "name")?;
        let path = str_arg(source, "path")?;
        let on_disk = path.is_some_and(|p| std::path::Path::new(p).is_file());
        let info = &self.info;
        let by_name = name
            .and_then(|n| n.strip_suffix(".vmasm"))
            .filter(|_| !on_disk)
            .and_then(|n| info.resolve_function(n).ok())
            .and_then(|found| match &found[..] {
                [a] if !info.has_positions(a.module_index, a.function) => Some(CodeAddress {
                    offset: 0,
                    ..a.clone()
                }),
                _ => None,
            });
        if let Some(function) = by_name {
            self.sources.reference_for(&function);
            return Ok(Some(function));
        }
        match reference {
            Some(r) => self
                .sources
                .referenced(r)
                .map(Some)
                .ok_or_else(|| format!("no source with reference {r}")),
            None => Ok(None),
        }
    }

    /// Breakpoints in the disassembly of a function without debug
    /// information: a line stops at its instruction, a label or header
    /// line at the next instruction.
    fn set_listing_breakpoints(&mut self, function: CodeAddress, wanted: &[Json]) -> Reply {
        let key = format!("disassembly of {}.{}", function.module, function.function);
        let old = self.source_bps.remove(&key).unwrap_or_default();
        let mut kept = self.keep_asked_again(old, wanted);
        let listing = sources::listing(&self.info, &function)?;
        let mut by_line: Vec<(i64, u32)> = listing.lines.iter().map(|(o, l)| (*l, *o)).collect();
        by_line.sort_unstable();
        let mut ids = Vec::new();
        let mut out = Vec::new();
        for (w, kept) in wanted.iter().zip(&mut kept) {
            let asked = int_arg(w, "line")?.ok_or("a source breakpoint needs a `line`")?;
            let line = asked.saturating_add(1 - self.bases.line);
            let Some(&(at, offset)) = by_line.iter().find(|(l, _)| *l >= line) else {
                out.push(json!({"verified": false, "line": asked, "message": "no instruction at or after this line"}));
                continue;
            };
            let address = CodeAddress {
                offset,
                ..function.clone()
            };
            let added = match kept.take() {
                Some(b) => Ok(b),
                None => {
                    let added = self.table.add_address_breakpoint(address, None);
                    added.map_err(|e| e.0).and_then(|b| self.refine(b, w))
                }
            };
            match added {
                Ok(b) => {
                    ids.push(Asked::of(&b, w));
                    let mut j = self.breakpoint_json(&b, None);
                    j["line"] = json!(at - 1 + self.bases.line);
                    out.push(j);
                }
                Err(e) => out.push(json!({"verified": false, "line": asked, "message": e})),
            }
        }
        self.source_bps.insert(key, ids);
        Ok(json!({"breakpoints": out}))
    }

    fn set_function_breakpoints(&mut self, args: &Json) -> Reply {
        let wanted: Vec<Json> = match args.get("breakpoints") {
            Some(Json::Array(a)) => a.clone(),
            None | Some(Json::Null) => Vec::new(),
            Some(_) => return Err("`breakpoints` must be an array".into()),
        };
        check_entries(&wanted, "name")?;
        let old = std::mem::take(&mut self.function_bps);
        let mut kept = self.keep_asked_again(old, &wanted);
        let mut out = Vec::new();
        for (w, kept) in wanted.iter().zip(&mut kept) {
            if let Some(b) = kept.take() {
                self.function_bps.push(Asked::of(&b, w));
                out.push(self.breakpoint_json(&b, None));
                continue;
            }
            let name = str_arg(w, "name")?.ok_or("a function breakpoint needs a `name`")?;
            let req = BreakpointRequest {
                spec: name.to_string(),
                condition: None,
                hit_condition: str_arg(w, "hitCondition")?.map(str::to_string),
                temporary: false,
            };
            let added = self.table.add_breakpoint(req);
            let added = added.map_err(|e| e.0).and_then(|b| self.refine(b, w));
            match added {
                Ok(b) => {
                    self.function_bps.push(Asked::of(&b, w));
                    out.push(self.breakpoint_json(&b, None));
                }
                Err(e) => out.push(json!({"verified": false, "message": e})),
            }
        }
        Ok(json!({"breakpoints": out}))
    }

    /// Gives a new breakpoint the condition and log message of the
    /// client's breakpoint `w`, with source names (at the breakpoint's
    /// first instruction) in them; when they are bad, the breakpoint is
    /// deleted and the reason returned.
    fn refine(
        &mut self,
        b: irvm_debugger::Breakpoint,
        w: &Json,
    ) -> Result<irvm_debugger::Breakpoint, String> {
        let outcome = self.refine_or_fail(&b, w);
        if outcome.is_err() {
            let _ = self.table.delete_breakpoint(Some(b.id));
        }
        outcome.map(|()| b)
    }

    fn refine_or_fail(&mut self, b: &irvm_debugger::Breakpoint, w: &Json) -> Result<(), String> {
        let condition = str_arg(w, "condition")?.filter(|c| !c.trim().is_empty());
        let log = str_arg(w, "logMessage")?;
        if condition.is_none() && log.is_none() {
            return Ok(());
        }
        let names = match b.addresses.first() {
            Some(a) => {
                let position = self.info.position_of(a);
                self.names_at(a, position.as_ref())
            }
            None => SourceNames::default(),
        };
        if let Some(c) = condition {
            let vm = names.substitute(c, false)?;
            let set = self.table.set_condition(b.id, Some(&vm));
            set.map_err(|e| in_terms_of(e.0, &vm, c))?;
        }
        if let Some(message) = log {
            let vm = names.substitute_in_braces(message)?;
            let set = self.table.set_log_message(b.id, Some(&vm));
            set.map_err(|e| e.0)?;
        }
        Ok(())
    }

    fn set_instruction_breakpoints(&mut self, args: &Json) -> Reply {
        let wanted: Vec<Json> = match args.get("breakpoints") {
            Some(Json::Array(a)) => a.clone(),
            None | Some(Json::Null) => Vec::new(),
            Some(_) => return Err("`breakpoints` must be an array".into()),
        };
        check_entries(&wanted, "instructionReference")?;
        let old = std::mem::take(&mut self.instruction_bps);
        let mut kept = self.keep_asked_again(old, &wanted);
        let mut out = Vec::new();
        for (w, kept) in wanted.iter().zip(&mut kept) {
            if let Some(b) = kept.take() {
                self.instruction_bps.push(Asked::of(&b, w));
                out.push(self.breakpoint_json(&b, None));
                continue;
            }
            let reference = str_arg(w, "instructionReference")?
                .ok_or("an instruction breakpoint needs an `instructionReference`")?;
            let offset = int_arg(w, "offset")?.unwrap_or(0);
            let address = parse_reference(reference)
                .and_then(|r| r.checked_add_signed(offset))
                .and_then(|r| self.info.address_from_reference(r));
            let added = match address {
                Some(a) => self.table.add_address_breakpoint(a, None).map_err(|e| e.0),
                None => Err(format!(
                    "`{reference}` (+{offset}) is not an instruction address"
                )),
            };
            let added = added.and_then(|b| self.refine(b, w));
            match added {
                Ok(b) => {
                    self.instruction_bps.push(Asked::of(&b, w));
                    out.push(self.breakpoint_json(&b, None));
                }
                Err(e) => out.push(json!({"verified": false, "message": e})),
            }
        }
        Ok(json!({"breakpoints": out}))
    }

    fn source(&mut self, args: &Json) -> Reply {
        let reference = match args.get("source").map(|s| int_arg(s, "sourceReference")) {
            Some(r) => r?,
            None => None,
        };
        let reference = match reference {
            Some(r) => r,
            None => int_arg(args, "sourceReference")?.ok_or("`sourceReference` is required")?,
        };
        let named = match args.get("source") {
            Some(source) => self.listed_function(source, Some(reference))?,
            None => None,
        };
        let address = match named {
            Some(a) => a,
            None => self
                .sources
                .referenced(reference)
                .ok_or_else(|| format!("no source with reference {reference}"))?,
        };
        let listing = sources::listing(&self.info, &address)?;
        Ok(json!({"content": listing.text, "mimeType": "text/x-vmasm"}))
    }

    fn disassemble(&mut self, args: &Json) -> Reply {
        let reference = str_arg(args, "memoryReference")?.ok_or("`memoryReference` is required")?;
        let offset = int_arg(args, "offset")?.unwrap_or(0);
        let instruction_offset = int_arg(args, "instructionOffset")?.unwrap_or(0);
        let count = int_arg(args, "instructionCount")?.ok_or("`instructionCount` is required")?;
        let count =
            usize::try_from(count).map_err(|_| "`instructionCount` must not be negative")?;
        if count > MAX_INSTRUCTIONS {
            return Err(format!(
                "`instructionCount` {count} is over the limit of {MAX_INSTRUCTIONS}"
            ));
        }
        let reference = parse_reference(reference)
            .and_then(|r| r.checked_add_signed(offset))
            .ok_or_else(|| format!("`{reference}` (+{offset}) is not an instruction address"))?;
        let request = DisassembleRequest {
            reference,
            instruction_offset,
            count,
        };
        let instructions =
            disassembly::disassemble(&self.info, &mut self.sources, &request, &self.bases)?;
        Ok(json!({"instructions": instructions}))
    }

    /// The source names at the instruction `a` (located at `position`).
    pub fn names_at(&mut self, a: &CodeAddress, position: Option<&SourcePosition>) -> SourceNames {
        let key = (a.module_index, a.function);
        let function = match self.names.get(&key) {
            Some(n) => n.clone(),
            None => {
                let sources = &self.sources;
                let n = Arc::new(FunctionNames::of(&self.info, |file| sources.read(file), a));
                self.names.insert(key, n.clone());
                n
            }
        };
        function.at(position)
    }
}

/// A breakpoint the client asked for: its id, and the entry's fields as
/// written (the same entry in a later request keeps the breakpoint).
struct Asked {
    id: u32,
    fields: String,
}

impl Asked {
    fn of(b: &irvm_debugger::Breakpoint, entry: &Json) -> Asked {
        Asked {
            id: b.id,
            fields: entry.to_string(),
        }
    }
}

/// Checks each of a breakpoints request's entries (`required`: the field
/// each needs) before anything changes, so that a bad entry fails the
/// request and leaves the breakpoints as they were.
fn check_entries(wanted: &[Json], required: &str) -> Result<(), String> {
    for (i, w) in wanted.iter().enumerate() {
        let at = |e: String| format!("breakpoint {i}: {e}");
        if !w.is_object() {
            return Err(at("must be an object".into()));
        }
        for key in ["line", "column", "offset"] {
            int_arg(w, key).map_err(at)?;
        }
        for key in [
            "condition",
            "hitCondition",
            "logMessage",
            "name",
            "instructionReference",
        ] {
            str_arg(w, key).map_err(at)?;
        }
        if w.get(required).is_none_or(Json::is_null) {
            return Err(at(format!("`{required}` is required")));
        }
    }
    Ok(())
}

/// The answer to a breakpoints request under `noDebug`: none set.
pub fn no_breakpoints(args: &Json) -> Reply {
    let count = match args.get("breakpoints") {
        Some(Json::Array(a)) => a.len(),
        _ => 0,
    };
    let refused = json!({"verified": false, "message": "the launch asked for noDebug: the program runs without stopping"});
    Ok(json!({"breakpoints": vec![refused; count]}))
}
