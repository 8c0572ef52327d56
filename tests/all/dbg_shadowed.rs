//! A module shadowed by a later module of the same name: its code still
//! runs (the modules registered between the two link to it), and its
//! frames, breakpoints and traps use its own debug information, not the
//! later module's.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::dbg::dbg;

/// `lib` (1) exports `f`; `app` imports `lib.f` (so it links to the first
/// `lib`); `lib` (2) imports `app.main` and its `entry` calls it. Ordinal 0
/// of both `lib`s is a function: `f` in one, `entry` in the other.
fn write_modules(dir: &Path, f_op: &str) -> [PathBuf; 3] {
    let files = [
        (
            "lib1.vmasm",
            format!(
                "vm.module @lib version 0\nvm.type i32\nvm.export @f\n\
                 vm.func @f(%i0: i32) -> (i32) {{\n^bb0:\n\
                 \x20 %i1 = {f_op} %i0, %i0 loc(\"one.src\":3:3)\n\
                 \x20 vm.return %i1 loc(\"one.src\":4:3)\n}}\n"
            ),
        ),
        (
            "app.vmasm",
            "vm.module @app version 0\nvm.type i32\nvm.import @lib.f cconv \"0i_i\"\n\
             vm.export @main\nvm.func @main(%i0: i32) -> (i32) {\n^bb0:\n\
             \x20 %i1 = vm.call @lib.f(%i0) loc(\"app.src\":2:3)\n\
             \x20 vm.return %i1 loc(\"app.src\":3:3)\n}\n"
                .to_string(),
        ),
        (
            "lib2.vmasm",
            "vm.module @lib version 0\nvm.type i32\nvm.import @app.main cconv \"0i_i\"\n\
             vm.export @entry\nvm.func @entry(%i0: i32) -> (i32) {\n^bb0:\n\
             \x20 %i1 = vm.const.i32 7 loc(\"two.src\":10:3)\n\
             \x20 %i2 = vm.call @app.main(%i0) loc(\"two.src\":11:3)\n\
             \x20 vm.return %i2 loc(\"two.src\":12:3)\n}\n"
                .to_string(),
        ),
    ];
    files.map(|(name, text)| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("module written");
        path
    })
}

fn module_args(modules: &[PathBuf]) -> Vec<String> {
    modules
        .iter()
        .map(|m| format!("--module={}", m.display()))
        .chain(["--function=entry".into(), "--input=4".into()])
        .collect()
}

/// The reproduction: stopped in `app.main` and stepping into `lib.f`, the
/// frame showed `entry (lib.entry+0x00000001) at two.src:10:3` (the later
/// `lib`'s function 0), and `break one.src:3` said `No source file named`.
#[test]
fn frames_of_a_shadowed_module_use_its_own_debug_info() {
    let dir = tempfile::tempdir().unwrap();
    let modules = write_modules(dir.path(), "vm.add.i32");
    let (out, code) = dbg(
        &module_args(&modules),
        "break app.src:2\nrun\nstepi\nbt\ninfo frame\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("f (lib.f+0x00000001) at one.src:3:3\n=> %i1 = vm.add.i32 %i0, %i0\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "#0  f (lib.f+0x00000001) at one.src:3:3\n\
             #1  main (app.main+0x00000001) at app.src:2:3\n\
             #2  entry (lib.entry+0x00000008) at two.src:11:3\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("Stack level 0, frame at f (lib.f+0x00000001) at one.src:3:3:"),
        "{out}"
    );
    assert!(!out.contains("two.src:10"), "{out}");
}

/// Breakpoints by file and by function reach both modules of one name.
#[test]
fn breakpoints_reach_both_modules_of_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let modules = write_modules(dir.path(), "vm.add.i32");
    let (out, code) = dbg(
        &module_args(&modules),
        "break one.src:3\nbreak lib.entry\nrun\ncontinue\nfinish\ncontinue\n",
    );
    assert_eq!(code, 0, "{out}");
    for expected in [
        "Breakpoint 1 at f (lib.f+0x00000001) at one.src:3:3",
        "Breakpoint 2 at entry (lib.entry+0x00000001) at two.src:10:3",
        "Breakpoint 2, entry (lib.entry+0x00000001) at two.src:10:3",
        "Breakpoint 1, f (lib.f+0x00000001) at one.src:3:3",
        "Value returned is $1 = 8",
    ] {
        assert!(out.contains(expected), "{expected:?} not in\n{out}");
    }
    assert!(!out.contains("No source file"), "{out}");
}

/// A trap in the shadowed module: the debugger stops in its frame, and
/// `irvm run`'s backtrace names its source line.
#[test]
fn traps_in_a_shadowed_module_name_its_source_line() {
    let dir = tempfile::tempdir().unwrap();
    let modules = write_modules(dir.path(), "vm.div.i32.s");
    let mut args = module_args(&modules);
    args.pop();
    args.push("--input=0".into());
    let (out, _) = dbg(&args, "run\nbt\n");
    assert!(
        out.contains("#0  f (lib.f+0x00000001) at one.src:3:3\n"),
        "{out}"
    );
    let run = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("run")
        .args(&args)
        .output()
        .expect("irvm run runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "  [0] lib.f+0x00000001 one.src:3:3\n\
             \x20 [1] app.main+0x00000001 app.src:2:3\n\
             \x20 [2] lib.entry+0x00000008 two.src:11:3"
        ),
        "{stderr}"
    );
}

/// DAP's instruction references of a shadowed module's code name it
/// (they were refused: its name meant the later module).
#[test]
fn address_references_of_a_shadowed_module_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let modules = write_modules(dir.path(), "vm.add.i32");
    let load = |p: &PathBuf| irvm::Module::from_file(p).expect("loads");
    let info = irvm_debugger::DebugInfo::new(vec![
        (0, "lib".into(), load(&modules[0])),
        (1, "app".into(), load(&modules[1])),
        (2, "lib".into(), load(&modules[2])),
    ]);
    let [f] = &info.resolve_function("lib.f").expect("lib.f")[..] else {
        panic!("one lib.f");
    };
    assert_eq!(f.module_index, 0);
    let reference = info.address_reference(f).expect("a reference");
    assert_eq!(info.address_from_reference(reference).as_ref(), Some(f));
    assert_eq!(info.function_name(f), "f");
    let [entry] = &info.resolve_function("entry").expect("entry")[..] else {
        panic!("one entry");
    };
    assert_eq!((entry.module_index, entry.function), (2, 0));
    let lines = info.disassemble(entry.module_index, 0).expect("lines");
    assert!(
        lines.iter().any(|(_, t)| t.contains("vm.const.i32 7")),
        "{lines:?}"
    );
}

/// A function both modules of one name have: a call means the later
/// module's (the one the name reaches), a breakpoint stops in either.
#[test]
fn a_call_means_the_later_module_and_a_breakpoint_both() {
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, body: &str| {
        let path = dir.path().join(file);
        std::fs::write(
            &path,
            format!(
                "vm.module @m version 0\nvm.type i32\nvm.export @h\n\
                 vm.func @h(%i0: i32) -> (i32) {{\n^bb0:\n{body}\n  vm.return %i1\n}}\n"
            ),
        )
        .expect("written");
        path
    };
    let first = write("first.vmasm", "  %i1 = vm.add.i32 %i0, %i0");
    let second = write("second.vmasm", "  %i1 = vm.mul.i32 %i0, %i0");
    let args = [
        format!("--module={}", first.display()),
        format!("--module={}", second.display()),
        "--function=h".into(),
        "--input=5".into(),
    ];
    let (out, code) = dbg(&args, "break h\nrun\nprint h(3)\nprint m.h(4)\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Breakpoint 1 at h (m.h+0x00000001) (2 locations)"),
        "{out}"
    );
    assert!(out.contains("=> %i1 = vm.mul.i32 %i0, %i0"), "{out}");
    assert!(out.contains("$1 = 9\n"), "{out}");
    assert!(out.contains("$2 = 16\n"), "{out}");
}

/// `irvm dap`: a breakpoint in the shadowed module's source stops there,
/// and its frame shows its own function, source and instructions.
#[test]
fn dap_frames_of_a_shadowed_module_use_its_own_debug_info() {
    use crate::dap::{launch, Client};
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let modules = write_modules(dir.path(), "vm.add.i32");
    for (file, lines) in [("one.src", 4), ("app.src", 3), ("two.src", 12)] {
        let text: String = (1..=lines).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join(file), text).expect("source written");
    }
    let mut c = Client::start();
    let paths: Vec<String> = modules.iter().map(|m| m.display().to_string()).collect();
    launch(
        &mut c,
        json!({"modules": paths, "function": "entry", "inputs": ["4"],
               "sourceDirs": [dir.path().display().to_string()]}),
    );
    let one = dir.path().join("one.src").display().to_string();
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": one}, "breakpoints": [{"line": 3}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    c.ok("configurationDone", json!({}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "breakpoint", "{stopped}");
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    let frames = st["stackFrames"].as_array().expect("frames");
    let at = |k: usize| {
        (
            frames[k]["name"].as_str().unwrap_or_default().to_string(),
            frames[k]["source"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            frames[k]["line"].as_i64().unwrap_or_default(),
        )
    };
    assert_eq!(at(0), ("lib.f".into(), "one.src".into(), 3), "{st}");
    assert_eq!(at(2), ("lib.entry".into(), "two.src".into(), 11), "{st}");
    let ip = frames[0]["instructionPointerReference"].clone();
    let dis = c.ok(
        "disassemble",
        json!({"memoryReference": ip, "instructionOffset": 0, "instructionCount": 1}),
    );
    assert!(
        dis["instructions"][0]["instruction"]
            .as_str()
            .is_some_and(|t| t.contains("vm.add.i32")),
        "{dis}"
    );
    c.disconnect_cleanly();
}
