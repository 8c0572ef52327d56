//! The requests that list the program's parts: `modules` (the bytecode
//! modules, with the launch's paths), `loadedSources` (the source files
//! the debug information names, as `source` and frames name them) and
//! `breakpointLocations` (the lines of a source range that have code).
//! Like the other [`CodeRequests`], they read only the modules' debug
//! information, so they are answered while the program runs too.

use std::path::Path;

use serde_json::{json, Value as Json};

use super::code::CodeRequests;
use super::sources;
use super::{int_arg, str_arg, Reply};

impl CodeRequests {
    /// `modules`: the bytecode modules in the order they were linked,
    /// each named by its registered name (its `id` too), with the path
    /// the launch gave for it and whether it has debug information.
    pub(super) fn modules(&self, args: &Json) -> Reply {
        let start = int_arg(args, "startModule")?.unwrap_or(0);
        let count = int_arg(args, "moduleCount")?.unwrap_or(0);
        if start < 0 || count < 0 {
            return Err("`startModule` and `moduleCount` must not be negative".into());
        }
        let all = self.module_json();
        let total = all.len();
        let start = usize::try_from(start).unwrap_or(usize::MAX).min(total);
        let count = match usize::try_from(count) {
            Ok(0) | Err(_) => total,
            Ok(n) => n,
        };
        let shown: Vec<Json> = all.into_iter().skip(start).take(count).collect();
        Ok(json!({"modules": shown, "totalModules": total}))
    }

    /// Each bytecode module as a DAP `Module`.
    pub(super) fn module_json(&self) -> Vec<Json> {
        let list = self.info.module_list();
        // The launch's bytecode modules (plugins are host modules, which
        // the debug information does not hold), in the same order.
        let files: Vec<&String> = self
            .module_paths
            .iter()
            .filter(|m| !irvm::dynamic::DynamicModuleSpec::looks_dynamic(m))
            .collect();
        let paths_match = files.len() == list.len();
        let mut ids: std::collections::HashSet<String> = std::collections::HashSet::new();
        list.into_iter()
            .enumerate()
            .map(|(k, (name, debug_info))| {
                // Ids are unique (DAP's rule): a module whose name is an
                // id given before (a module of the same name, or one named
                // as such an id, `m#2`) is told apart by its place in the
                // order, as often as it takes.
                let mut id = name.clone();
                while !ids.insert(id.clone()) {
                    id = format!("{id}#{}", k + 1);
                }
                let mut m = json!({
                    "id": id,
                    "name": name,
                    "symbolStatus": if debug_info { "debug information" } else { "no debug information" },
                });
                let path = files.get(k).filter(|p| paths_match && p.as_str() != "-");
                if let Some(path) = path {
                    let shown = std::fs::canonicalize(path)
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|_| path.to_string());
                    m["path"] = json!(shown);
                }
                m
            })
            .collect()
    }

    /// `loadedSources`: every source file the debug information names,
    /// as frames and `source` name it (a file not found on disk by its
    /// name alone).
    pub(super) fn loaded_sources(&self) -> Json {
        let sources: Vec<Json> = self
            .info
            .source_files()
            .iter()
            .map(|f| self.sources.source_json(f))
            .collect();
        json!({"sources": sources})
    }

    /// `breakpointLocations`: the lines from `line` to `endLine` (or just
    /// `line`) of `source` where a breakpoint stops at code of that very
    /// line (breakpoints are by line: no columns are given); for a
    /// disassembly document, the lines of its instructions.
    pub(super) fn breakpoint_locations(&mut self, args: &Json) -> Reply {
        let source = args.get("source").ok_or("`source` is required")?;
        let asked = int_arg(args, "line")?.ok_or("`line` is required")?;
        let end = int_arg(args, "endLine")?.unwrap_or(asked);
        let base = self.bases.line;
        // As the debugger counts, from 1.
        let (first, last) = (asked.saturating_add(1 - base), end.saturating_add(1 - base));
        let reference = int_arg(source, "sourceReference")?.filter(|r| *r > 0);
        let lines: Vec<i64> = match self.listed_function(source, reference)? {
            Some(function) => {
                let listing = sources::listing(&self.info, &function)?;
                let mut lines: Vec<i64> = listing.lines.values().copied().collect();
                lines.sort_unstable();
                lines
            }
            None => {
                let path = str_arg(source, "path")?
                    .or(str_arg(source, "name")?)
                    .ok_or("`source.path` is required")?;
                let recorded = self.info.source_files();
                let files = self.sources.recorded_files(path, &recorded);
                if files.is_empty() && !Path::new(path).is_file() {
                    return Err(format!(
                        "no source `{path}` (not on disk, and no module names it)"
                    ));
                }
                self.info
                    .lines_with_code_in(&files)
                    .into_iter()
                    .map(i64::from)
                    .collect()
            }
        };
        let shown: Vec<Json> = lines
            .into_iter()
            .filter(|l| (first..=last).contains(l))
            .map(|l| json!({"line": l - 1 + base}))
            .collect();
        Ok(json!({"breakpoints": shown}))
    }
}
