//! `irvm as` against IREE 3.13's `iree-as-module`, file by file.
//!
//! Every `.vmasm` of `tests/data` and `examples` (recursively) and of
//! `../shared/conformance` is assembled by both. Where both accept it, the
//! two modules' `iree-dump-module --output=flatbuffer-json` must be equal
//! (every table, every bytecode byte) except for the one field
//! docs/COMPATIBILITY.md ("The assembler") documents as deliberately
//! different: a function's i32 register count covers its arguments. Where
//! only `irvm as` accepts a file, it must be listed in [`EXTENSIONS`] with
//! the documented extension it uses, and the file without that extension
//! must then assemble equally; where only `iree-as-module` accepts one, it
//! must be listed in [`REFUSED_BY_IRVM`] with the documented reason. The
//! test skips with a message when the reference tools are absent.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use crate::common::paths::{repo, shared_dir};

/// An irvm extension of the assembly text that `iree-as-module` refuses
/// (each documented in README's `irvm as` row or docs/COMPATIBILITY.md).
#[derive(Clone, Copy, Debug)]
enum Extension {
    /// Trailing `loc(...)` annotations, which fill a debug database.
    Locations,
    /// The disassembler's operand spellings `iree-as-module` does not read
    /// (`.rwdata[%i1]` for an indirect global).
    DisassemblerSpellings,
    /// `vm.switch.ref`, which `iree-as-module` cannot assemble.
    SwitchRef,
    /// `vm.dependency`, which `iree-as-module` does not know (README's
    /// `irvm as` directives).
    Dependencies,
}

/// Files only `irvm as` accepts, by path relative to the repository.
const EXTENSIONS: &[(&str, Extension)] = &[
    ("examples/fib.vmasm", Extension::Locations),
    ("tests/data/dbg/frames.vmasm", Extension::Locations),
    ("tests/data/dbg/same_value.vmasm", Extension::Locations),
    ("tests/data/dbg/twin_lib.vmasm", Extension::Locations),
    (
        "tests/data/reference_syntax.vmasm",
        Extension::DisassemblerSpellings,
    ),
    ("tests/data/switch_ref.vmasm", Extension::SwitchRef),
    ("tests/data/compat_hal.vmasm", Extension::Dependencies),
];

/// Files only `iree-as-module` accepts, with the row of
/// docs/COMPATIBILITY.md that says why `irvm as` refuses them.
const REFUSED_BY_IRVM: &[(&str, &str)] = &[(
    "tests/data/refused/return_count.vmasm",
    "a `vm.return` with more values than its function's calling convention declares",
)];

/// The `.vmasm` files under `dir`, recursively.
fn vmasm_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            vmasm_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "vmasm") {
            out.push(path);
        }
    }
}

/// Every source the comparison covers.
fn sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    vmasm_files(&repo().join("tests/data"), &mut files);
    vmasm_files(&repo().join("examples"), &mut files);
    if let Some(shared) = shared_dir() {
        vmasm_files(&shared.join("conformance"), &mut files);
    } else {
        eprintln!("../shared is absent: only this repository's sources are compared");
    }
    files.sort();
    files
}

/// How the path is named in the lists above (relative to the repository
/// when inside it).
fn display_name(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// One assembler's outcome: the module's path, or its stderr.
fn assemble(program: &Path, args: &[String]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// `iree-as-module`'s and `irvm as`'s outcomes on `text`, written to
/// `dir/stem.{ref,irvm}.vmfb`.
struct Outcomes {
    theirs: Result<PathBuf, String>,
    ours: Result<PathBuf, String>,
}

fn assemble_both(peer: &Path, dir: &Path, stem: &str, source: &Path) -> Outcomes {
    let theirs = dir.join(format!("{stem}.ref.vmfb"));
    let ours = dir.join(format!("{stem}.irvm.vmfb"));
    let theirs_outcome = assemble(
        &peer.join("iree-as-module"),
        &[
            format!("--output={}", theirs.display()),
            source.display().to_string(),
        ],
    );
    let ours_outcome = assemble(
        Path::new(env!("CARGO_BIN_EXE_irvm")),
        &[
            "as".to_string(),
            "-o".to_string(),
            ours.display().to_string(),
            source.display().to_string(),
        ],
    );
    Outcomes {
        theirs: theirs_outcome.map(|()| theirs),
        ours: ours_outcome.map(|()| ours),
    }
}

/// `iree-dump-module --output=flatbuffer-json` of `module`, parsed.
fn flatbuffer_json(peer: &Path, module: &Path) -> Value {
    let out = Command::new(peer.join("iree-dump-module"))
        .arg("--output=flatbuffer-json")
        .arg(module)
        .output()
        .expect("run iree-dump-module");
    assert!(
        out.status.success(),
        "iree-dump-module refuses {}: {}",
        module.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "iree-dump-module's JSON of {} does not parse: {e}",
            module.display()
        )
    })
}

/// The i32 registers a calling convention's arguments take (`0iI_v`: 3).
fn argument_slots(cconv: &str) -> u64 {
    let arguments = cconv
        .strip_prefix('0')
        .and_then(|c| c.split('_').next())
        .unwrap_or("");
    arguments
        .chars()
        .map(|k| match k {
            'i' | 'f' => 1,
            'I' | 'F' => 2,
            _ => 0,
        })
        .sum()
}

/// Brings `ours` to `theirs` where the difference is the documented one:
/// a function's i32 register count is the reference's, raised to cover
/// the function's arguments (the reference counts only the registers its
/// body names). Says which functions differed so.
fn accept_documented_differences(ours: &mut Value, theirs: &Value) -> Vec<String> {
    let mut seen = Vec::new();
    let cconvs: Vec<String> = theirs["function_signatures"]
        .as_array()
        .map(|sigs| {
            sigs.iter()
                .map(|s| s["calling_convention"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    let (Some(our_fns), Some(their_fns)) = (
        ours["function_descriptors"].as_array_mut(),
        theirs["function_descriptors"].as_array(),
    ) else {
        return seen;
    };
    for (i, (our_fn, their_fn)) in our_fns.iter_mut().zip(their_fns).enumerate() {
        let (Some(our_count), Some(their_count)) = (
            our_fn["i32_register_count"].as_u64(),
            their_fn["i32_register_count"].as_u64(),
        ) else {
            continue;
        };
        let slots = cconvs.get(i).map_or(0, |c| argument_slots(c));
        if our_count != their_count && our_count == their_count.max(slots) {
            our_fn["i32_register_count"] = their_fn["i32_register_count"].clone();
            seen.push(format!("fn{i}: {their_count} -> {our_count}"));
        }
    }
    seen
}

/// The first place `a` and `b` differ, as a path and both values.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let here = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => first_difference(p, q, &here),
                    (p, q) => Some(format!("{here}: {p:?} vs {q:?}")),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            let common = x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]")));
            common.or_else(|| {
                (x.len() != y.len()).then(|| format!("{path}: {} entries vs {}", x.len(), y.len()))
            })
        }
        _ => (a != b).then(|| format!("{path}: {a} vs {b}")),
    }
}

/// Requires equal tables of the two modules (`name` says which source).
fn assert_same_tables(peer: &Path, name: &str, theirs: &Path, ours: &Path) -> Vec<String> {
    let theirs = flatbuffer_json(peer, theirs);
    let mut ours = flatbuffer_json(peer, ours);
    let documented = accept_documented_differences(&mut ours, &theirs);
    if let Some(difference) = first_difference(&ours, &theirs, "") {
        panic!("{name}: irvm as (first) and iree-as-module (second) differ at {difference}");
    }
    documented
}

/// `text` without what `extension` adds, for both assemblers to read.
fn without_extension(text: &str, extension: Extension) -> Option<String> {
    match extension {
        Extension::Locations => Some(
            text.lines()
                .map(|line| match line.find(" loc(") {
                    Some(at) => &line[..at],
                    None => line,
                })
                .map(|line| format!("{line}\n"))
                .collect(),
        ),
        Extension::DisassemblerSpellings => Some(
            text.lines()
                .filter(|line| !line.contains(".rwdata[%"))
                .map(|line| format!("{line}\n"))
                .collect(),
        ),
        Extension::SwitchRef => None,
        Extension::Dependencies => Some(
            text.lines()
                .filter(|line| !line.trim_start().starts_with("vm.dependency"))
                .map(|line| format!("{line}\n"))
                .collect(),
        ),
    }
}

#[test]
fn irvm_as_writes_the_tables_and_bytecode_iree_as_module_writes() {
    let Some(peer) = common::peer_bin(&["iree-as-module", "iree-dump-module"]) else {
        common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    let mut listed_seen = Vec::new();
    for (n, source) in sources().iter().enumerate() {
        let name = display_name(source);
        let stem = format!("s{n}");
        let outcomes = assemble_both(&peer, dir.path(), &stem, source);
        match (&outcomes.ours, &outcomes.theirs) {
            (Ok(ours), Ok(theirs)) => {
                let documented = assert_same_tables(&peer, &name, theirs, ours);
                if !documented.is_empty() {
                    eprintln!("{name}: argument registers counted: {documented:?}");
                }
                compared += 1;
            }
            (Ok(_), Err(refusal)) => {
                let Some(&(_, extension)) = EXTENSIONS.iter().find(|(f, _)| *f == name) else {
                    panic!(
                        "irvm as accepts {name}, iree-as-module refuses it ({}): \
                         list the documented extension it uses in EXTENSIONS",
                        refusal.trim()
                    );
                };
                listed_seen.push(name.clone());
                let text = std::fs::read_to_string(source).unwrap();
                if let Some(plain) = without_extension(&text, extension) {
                    let plain_path = dir.path().join(format!("{stem}.plain.vmasm"));
                    std::fs::write(&plain_path, plain).unwrap();
                    let plain_outcomes =
                        assemble_both(&peer, dir.path(), &format!("{stem}.plain"), &plain_path);
                    match (&plain_outcomes.ours, &plain_outcomes.theirs) {
                        (Ok(ours), Ok(theirs)) => {
                            assert_same_tables(
                                &peer,
                                &format!("{name} without {extension:?}"),
                                theirs,
                                ours,
                            );
                            compared += 1;
                        }
                        (ours, theirs) => panic!(
                            "{name} without {extension:?}: irvm as {ours:?}, iree-as-module {theirs:?}"
                        ),
                    }
                }
            }
            (Err(refusal), Ok(_)) => {
                assert!(
                    REFUSED_BY_IRVM.iter().any(|(f, _)| *f == name),
                    "iree-as-module accepts {name}, irvm as refuses it ({}): \
                     a difference to fix or to document (REFUSED_BY_IRVM)",
                    refusal.trim()
                );
                listed_seen.push(name.clone());
            }
            (Err(_), Err(_)) => {}
        }
    }
    for listed in EXTENSIONS
        .iter()
        .map(|(f, _)| *f)
        .chain(REFUSED_BY_IRVM.iter().map(|(f, _)| *f))
    {
        assert!(
            listed_seen.iter().any(|s| s == listed),
            "{listed} is listed as accepted by one assembler only, but was not"
        );
    }
    eprintln!("{compared} modules assembled by both with equal tables");
    assert!(compared >= 20, "only {compared} modules compared");
}

#[test]
fn only_the_element_type_of_an_allocated_list_enters_the_type_table() {
    // iree-compile's type tables hold a list type next to its element
    // (`!vm.list<i32>` and `i32`); iree-as-module enters only what the
    // instruction names, the element, and so does `irvm as` (before, it
    // added the list type as iree-compile does).
    let source = "vm.module @lists version 0

vm.export @mk
vm.func @mk(%i0: i32) -> (!vm.list<i32>) {
^bb0:
  %r0 = vm.list.alloc %i0 : !vm.list<i32>
  vm.return %r0
}
";
    let module = irvm::Module::from_assembly(source, "lists.vmasm").expect("assembles");
    assert_eq!(module.types(), ["i32"]);
    // A table the text declares is kept as declared, which is how the
    // assembly form of iree-compile's output keeps the list type.
    let declared = source.replace(
        "version 0\n",
        "version 0\nvm.type i32\nvm.type !vm.list<i32>\n",
    );
    let module = irvm::Module::from_assembly(&declared, "lists.vmasm").expect("assembles");
    assert_eq!(module.types(), ["i32", "!vm.list<i32>"]);
}

#[test]
fn a_list_of_any_names_its_element_as_both_runtimes_load_it() {
    // `!vm.list<?>`'s element is entered as `!vm.opaque` (iree-compile's
    // name); iree-as-module enters `?` and `!vm.ref<?>`, which neither
    // runtime loads ("no type registered with name '?'"). The one
    // documented difference of type tables.
    let source = "vm.module @anylist version 0

vm.export @mk
vm.func @mk(%i0: i32) -> (!vm.list<?>) {
^bb0:
  %r0 = vm.list.alloc %i0 : !vm.list<?>
  %r1 = vm.list.alloc %i0 : !vm.list<!vm.ref<?>>
  vm.return %r0
}
";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("anylist.vmasm");
    std::fs::write(&path, source).unwrap();
    let (stdout, stderr, code) = common::cli::irvm(&[
        "run".to_string(),
        format!("--module={}", path.display()),
        "--function=mk".to_string(),
        "--input=2".to_string(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "EXEC @mk\nresult[0]: vm.list\n\n");
    let module = irvm::Module::from_file(&path).expect("assembles");
    assert_eq!(module.types(), ["!vm.opaque"]);
    let Some(peer) = common::peer_bin(&["iree-as-module", "iree-dump-module"]) else {
        common::report_missing_peer();
        return;
    };
    let outcomes = assemble_both(&peer, dir.path(), "anylist", &path);
    let theirs = outcomes.theirs.expect("iree-as-module assembles it");
    let types = &flatbuffer_json(&peer, &theirs)["types"];
    assert_eq!(
        types,
        &serde_json::json!([{"full_name": "?"}, {"full_name": "!vm.ref<?>"}])
    );
    let (_, stderr, code) = common::cli::irvm(&[
        "run".to_string(),
        format!("--module={}", theirs.display()),
        "--function=mk".to_string(),
        "--input=2".to_string(),
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("'?'"), "{stderr}");
}

#[test]
fn the_bytecode_ends_padded_to_8_bytes_as_iree_as_module_writes_it() {
    // Each function's code is followed by zeros up to a multiple of 8, the
    // last one's too (iree-as-module: `align_bytecode(state, 8)` after
    // every function). `irvm as` dropped the last function's padding when
    // that made the FlatBuffer smaller: lib_b's bytecode was 30 bytes
    // where iree-as-module's is 32.
    let source = std::fs::read_to_string(repo().join("tests/data/lib_b.vmasm")).unwrap();
    let module = irvm::Module::from_assembly(&source, "lib_b.vmasm").expect("assembles");
    let last = module
        .function_descriptor(module.function_count() - 1)
        .unwrap();
    let end = last.bytecode_offset + last.bytecode_length;
    assert_eq!(end, 28);
    assert_eq!(module.bytecode_data().len(), 32);
    assert!(module.bytecode_data()[end..].iter().all(|&b| b == 0));
}
