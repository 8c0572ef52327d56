//! Sources as an editor names them: the files the debug information
//! records, found on disk through the search path and answered with the
//! spelling the client used for them (a project opened through a symlink
//! stays under the symlink), and the sources that are not on disk (the VM
//! disassembly of a function without debug information), served by
//! `sourceReference`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use irvm_debugger::{CodeAddress, DebugInfo};
use serde_json::{json, Value as Json};

/// The session's sources.
#[derive(Default)]
pub struct Sources {
    /// Where recorded relative names are looked up, in order.
    dirs: Vec<PathBuf>,
    /// Canonical path -> the path as the client spelled it.
    client_paths: HashMap<PathBuf, String>,
    /// `sourceReference` N (from 1) is the disassembly of `generated[N-1]`.
    generated: Vec<CodeAddress>,
}

/// A function's disassembly as a text document: the text, and the line
/// (from 1) of each instruction offset.
pub struct Listing {
    /// The document.
    pub text: String,
    /// Instruction offset -> line.
    pub lines: HashMap<u32, i64>,
}

impl Sources {
    /// Sources found through `dirs`.
    pub fn new(dirs: Vec<PathBuf>) -> Sources {
        Sources {
            dirs,
            ..Sources::default()
        }
    }

    /// Where a recorded file is on disk (absolute, symlinks kept), if it
    /// is: an absolute path as it is, a relative one under the search
    /// path; else (a path recorded on another machine,
    /// `/home/ci/build/proj/m.mlir`) by its trailing components under the
    /// search path, the longest that names a file winning (`proj/m.mlir`
    /// before `m.mlir`), as `irvm dbg` binds breakpoints by suffix.
    fn locate(&self, recorded: &str) -> Option<PathBuf> {
        let file = Path::new(recorded);
        let exact = if file.is_absolute() {
            file.is_file().then(|| file.to_path_buf())
        } else {
            self.dirs.iter().map(|d| d.join(file)).find(|p| p.is_file())
        };
        let found = exact.or_else(|| {
            let parts: Vec<_> = file
                .components()
                .filter(|c| matches!(c, std::path::Component::Normal(_)))
                .collect();
            (1..parts.len()).rev().find_map(|n| {
                let tail: PathBuf = parts[parts.len() - n..].iter().collect();
                self.dirs
                    .iter()
                    .map(|d| d.join(&tail))
                    .find(|p| p.is_file())
            })
        })?;
        Some(absolute(&found))
    }

    /// The text of a recorded file, if it is on disk.
    pub fn read(&self, recorded: &str) -> Option<String> {
        std::fs::read_to_string(self.locate(recorded)?).ok()
    }

    /// The recorded files (of `recorded`) that are the client's `path`:
    /// the same file on disk (through symlinks); a recorded bare file name
    /// that is not on disk matches by name, as the debug information says
    /// nothing more. Remembers the client's spelling for the answers.
    pub fn recorded_files(&mut self, path: &str, recorded: &BTreeSet<String>) -> BTreeSet<String> {
        let client = Path::new(path);
        let canonical = std::fs::canonicalize(client).ok();
        if let Some(c) = &canonical {
            self.client_paths.insert(c.clone(), path.to_string());
        }
        let client_name = client.file_name();
        recorded
            .iter()
            .filter(|r| match self.locate(r) {
                Some(found) => match (&canonical, std::fs::canonicalize(&found).ok()) {
                    (Some(c), Some(f)) => *c == f,
                    _ => found == absolute(client),
                },
                None => {
                    let bare = Path::new(r.as_str());
                    bare.parent().is_none_or(|p| p.as_os_str().is_empty())
                        && Some(bare.as_os_str()) == client_name
                }
            })
            .cloned()
            .collect()
    }

    /// A DAP `Source` for a recorded file: its path as the client spelled
    /// it, else as found on disk; not on disk, just its name.
    pub fn source_json(&self, recorded: &str) -> Json {
        let name = Path::new(recorded)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(recorded);
        match self.locate(recorded) {
            Some(found) => {
                let path = std::fs::canonicalize(&found)
                    .ok()
                    .and_then(|c| self.client_paths.get(&c).cloned())
                    .unwrap_or_else(|| found.display().to_string());
                json!({"name": name, "path": path})
            }
            None => json!({
                "name": name,
                "origin": format!(
                    "`{recorded}`, not found: neither that path nor its trailing \
                     components under `sourceDirs` or the modules' folders name a file"
                ),
            }),
        }
    }

    /// The `sourceReference` of a function's disassembly (made on first
    /// use; valid for the session).
    pub fn reference_for(&mut self, a: &CodeAddress) -> i64 {
        let key = CodeAddress {
            offset: 0,
            ..a.clone()
        };
        let index = match self.generated.iter().position(|g| *g == key) {
            Some(i) => i,
            None => {
                self.generated.push(key);
                self.generated.len() - 1
            }
        };
        index as i64 + 1
    }

    /// The function behind a `sourceReference`.
    pub fn referenced(&self, reference: i64) -> Option<CodeAddress> {
        let index = usize::try_from(reference.checked_sub(1)?).ok()?;
        self.generated.get(index).cloned()
    }

    /// A DAP `Source` for the disassembly of the function at `a`.
    pub fn generated_json(&mut self, dbg: &DebugInfo, a: &CodeAddress) -> Json {
        let reference = self.reference_for(a);
        json!({
            // `.vmasm`: editors that know the language (the VS Code
            // extension contributes it) allow breakpoints in it.
            "name": format!("{}.{}.vmasm", a.module, dbg.function_name(a)),
            "sourceReference": reference,
            "origin": "disassembly: the function has no debug information",
        })
    }
}

/// The disassembly of the function at `a` as a document: a header line,
/// then block labels and instructions (each with its bytecode offset).
pub fn listing(dbg: &DebugInfo, a: &CodeAddress) -> Result<Listing, String> {
    let lines = dbg
        .disassemble(a.module_index, a.function)
        .map_err(|e| e.0)?;
    let (offsets, _) = dbg.instruction_offsets(a.module_index, a.function);
    let mut text = format!(
        "// {}.{}: VM disassembly (the module has no debug information for it)\n",
        a.module,
        dbg.function_name(a)
    );
    let mut at = HashMap::new();
    let mut line = 1;
    for (offset, t) in lines {
        line += 1;
        if offsets.binary_search(&offset).is_ok() {
            at.insert(offset, line);
            text.push_str(&format!("  {t}  // +{offset:#x}\n"));
        } else {
            text.push_str(&format!("{t}\n"));
        }
    }
    Ok(Listing { text, lines: at })
}

/// `p` made absolute against the current directory, without resolving
/// symlinks (`.` components left out).
fn absolute(p: &Path) -> PathBuf {
    let joined = match std::env::current_dir() {
        Ok(d) if !p.is_absolute() => d.join(p),
        _ => p.to_path_buf(),
    };
    joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}
