//! `irvm dbg` driven by scripted sessions (commands on stdin), as a user
//! would script gdb: where breakpoints and steps stop, what registers hold,
//! and the messages for mistakes.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel);
    p.exists().then_some(p)
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Runs `irvm dbg ARGS` with `script` on stdin: (stdout, exit code).
fn dbg(args: &[String], script: &str) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("dbg")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("irvm dbg starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("script written");
    let out = child.wait_with_output().expect("irvm dbg ends");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The lines printed after each `(irvm) CMD` echo, in order.
fn replies(out: &str) -> Vec<(String, Vec<String>)> {
    let mut r: Vec<(String, Vec<String>)> = Vec::new();
    for line in out.lines() {
        if let Some(cmd) = line.strip_prefix("(irvm) ") {
            r.push((cmd.to_string(), Vec::new()));
        } else if let Some(last) = r.last_mut() {
            if !line.is_empty() {
                last.1.push(line.to_string());
            }
        }
    }
    r
}

/// The value `info registers` shows for `%iN`.
fn register(lines: &[String], name: &str) -> i64 {
    lines
        .iter()
        .find_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.first() == Some(&name)).then(|| cols[2].parse().expect("a number"))
        })
        .unwrap_or_else(|| panic!("{name} not in {lines:?}"))
}

#[test]
fn fib_example_breakpoint_on_a_source_line() {
    let Some(fib) = shared("examples/fib.vmfb") else {
        eprintln!("skipping: ../shared/examples not present");
        return;
    };
    let script = "break fib.mlir:9\nrun\ninfo registers\ncontinue\ninfo registers\ncontinue\n\
                  continue\ncontinue\ninfo registers\ndelete\nfinish\n";
    let (out, code) = dbg(
        &[
            format!("--module={}", fib.display()),
            "--function=fib".into(),
            "--input=30".into(),
        ],
        script,
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(
        r[0].1,
        ["Breakpoint 1 at fib (module.fib+0x00000033) at fib.mlir:9:10 (1 location)"]
    );
    // run and each continue stop at line 9, showing the source line.
    for k in [1, 3, 5, 6, 7] {
        assert_eq!(
            r[k].1,
            [
                "Breakpoint 1, fib (module.fib+0x00000033) at fib.mlir:9:10",
                "9\t    %s = arith.addi %a, %b : i32"
            ],
            "reply to {:?}",
            r[k].0
        );
    }
    // The loop values: %i1 is the counter, %i3/%i4 the pair (a, b).
    let (first, second, fifth) = (&r[2].1, &r[4].1, &r[8].1);
    assert_eq!(register(first, "%i0"), 30);
    assert_eq!(
        (
            register(first, "%i1"),
            register(first, "%i3"),
            register(first, "%i4")
        ),
        (0, 0, 1)
    );
    assert_eq!(
        (
            register(second, "%i1"),
            register(second, "%i3"),
            register(second, "%i4")
        ),
        (1, 1, 1)
    );
    assert_eq!(
        (
            register(fifth, "%i1"),
            register(fifth, "%i3"),
            register(fifth, "%i4")
        ),
        (4, 3, 5)
    );
    assert_eq!(r[10].1, ["[fib returned]", "result[0]: i32=832040"]);
}

#[test]
fn fib_example_steps_by_line_and_instruction() {
    let Some(fib) = shared("examples/fib.vmfb") else {
        eprintln!("skipping: ../shared/examples not present");
        return;
    };
    let script =
        "break fib.mlir:9\nrun\nnext\nnext\nstep\nstepi\nbt\nlist\ncontinue\ndelete 1\ncontinue\n";
    let (out, code) = dbg(
        &[
            format!("--module={}", fib.display()),
            "--function=fib".into(),
            "--input=3".into(),
        ],
        script,
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[2].1[0], "fib (module.fib+0x0000003A) at fib.mlir:10:11");
    assert_eq!(r[3].1[0], "fib (module.fib+0x00000041) at fib.mlir:11:5");
    // The loop's back edge leads to the condition on line 5.
    assert_eq!(r[4].1[0], "fib (module.fib+0x0000001B) at fib.mlir:5:13");
    // One instruction later: the conditional branch of line 6 (stepping
    // sees it, although the fast loop fuses it with the compare).
    assert_eq!(r[5].1[0], "fib (module.fib+0x00000022) at fib.mlir:6:5");
    assert_eq!(r[6].1[0], "#0  module.fib+0x00000022 fib.mlir:6:5");
    assert!(
        r[7].1
            .contains(&"=>6\t    scf.condition(%cond) %i, %a, %b : i32, i32, i32".to_string()),
        "{:?}",
        r[7].1
    );
    assert_eq!(
        r[8].1[0],
        "Breakpoint 1, fib (module.fib+0x00000033) at fib.mlir:9:10"
    );
    assert_eq!(r[10].1, ["[fib returned]", "result[0]: i32=2"]);
}

#[test]
fn calls_without_debug_info_step_by_instruction() {
    let Some(bench) = shared("benchmarks/vm_bench.vmfb") else {
        eprintln!("skipping: ../shared/benchmarks not present");
        return;
    };
    // Recursive fib: break on the function, see the stack grow, finish.
    let script = "break fib\nrun\nbt\ncontinue\nbt\ninfo registers\ndelete 1\nfinish\nbt\nstep\n\
                  break fib.mlir:3\nbreak *0x7\nbreak *0x8\ndelete\ncontinue\n";
    let (out, code) = dbg(
        &[
            format!("--module={}", bench.display()),
            "--function=fib".into(),
            "--input=3".into(),
        ],
        script,
    );
    assert_eq!(
        code, 1,
        "a failed command makes a batch session fail: {out}"
    );
    let r = replies(&out);
    assert_eq!(
        r[0].1,
        ["Breakpoint 1 at fib (vm_bench.fib+0x00000001) (1 location)"]
    );
    assert_eq!(
        r[1].1,
        [
            "Breakpoint 1, fib (vm_bench.fib+0x00000001)",
            "=> %i1 = vm.const.i32 2  // 0x00000002"
        ]
    );
    assert_eq!(r[2].1.len(), 1);
    assert_eq!(
        r[4].1.len(),
        2,
        "the recursive call is on the stack: {:?}",
        r[4].1
    );
    assert_eq!(register(&r[5].1, "%i0"), 2);
    // finish returns to the caller, right after its call.
    assert_eq!(r[7].1[0], "fib (vm_bench.fib+0x00000040)");
    assert_eq!(r[8].1.len(), 1);
    // No debug info: step is one instruction.
    assert_eq!(r[9].1[0], "fib (vm_bench.fib+0x00000047)");
    assert_eq!(
        r[10].1,
        ["error: bad breakpoint `fib.mlir:3`: no module has debug information (use FUNCTION or *OFFSET)"]
    );
    assert_eq!(
        r[11].1,
        ["error: bad breakpoint `*0x7`: no instruction starts at offset 0x7 of vm_bench.fib"]
    );
    assert_eq!(r[12].1.len(), 1, "{:?}", r[12].1);
    assert!(
        r[12].1[0].starts_with("Breakpoint 2 at fib (vm_bench.fib+0x00000008)"),
        "{:?}",
        r[12].1
    );
    assert_eq!(r[14].1, ["[fib returned]", "result[0]: i32=2"]);
}

#[test]
fn failures_stop_the_program_with_the_source_line() {
    let m = format!("--module={}", data("divz.vmfb").display());
    let (out, code) = dbg(
        &[
            m,
            "--function=main".into(),
            "--input=7".into(),
            "--input=0".into(),
        ],
        "run\nbt\ncontinue\n",
    );
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1[0], "[main failed]");
    assert_eq!(
        r[0].1[1],
        "divz.mlir:2:8: error: INVALID_ARGUMENT: integer division by zero"
    );
    assert_eq!(r[1].1, ["error: the program is not being run (use `run`)"]);
    assert_eq!(r[2].1, ["error: the program is not being run (use `run`)"]);
}

#[test]
fn mistakes_get_clear_messages() {
    let m = format!("--module={}", data("limits.vmfb").display());
    let (out, _) = dbg(
        &[m.clone(), "--function=alloc".into(), "--input=8".into()],
        "frobnicate\nbreak\nbreak nosuch\nbreak x.mlir:abc\ninfo colors\nprint %q1\nrun\nprint %i9\nprint %i0:2\nprint %r3\nquit\n",
    );
    let r = replies(&out);
    let errors: Vec<&str> = r
        .iter()
        .flat_map(|(_, l)| l.iter().map(String::as_str))
        .collect();
    assert_eq!(
        errors,
        [
            "error: unknown command `frobnicate` (try `help`)",
            "error: break needs a location: FILE:LINE, FUNCTION or *OFFSET",
            "error: bad breakpoint `nosuch`: no function of that name",
            "error: bad breakpoint `x.mlir:abc`: `abc` is not a line number",
            "error: unknown info command `colors` (breakpoints, registers, frame)",
            "error: the program is not being run (use `run`)",
            "[alloc returned]",
            "result[0]: i64=8",
            "error: the program is not being run (use `run`)",
            "error: the program is not being run (use `run`)",
            "error: the program is not being run (use `run`)",
        ]
    );
    // Bad flags fail before the session starts.
    let (_, code) = dbg(&[m, "--function=nope".into()], "");
    assert_eq!(code, 1);
}

/// `tests/data/calls.vmfb` is compiled from `tests/data/calls.mlir` like
/// `divz.vmfb` (see tests/limits.rs); `square` is `noinline`, so the loop
/// really calls it. iree-compile writes a source map for the last function
/// only, so inside `square` stepping is per instruction.
#[test]
fn step_into_and_finish_out_of_a_call() {
    let m = format!("--module={}", data("calls.vmfb").display());
    let script = "break calls.mlir:13\nrun\nstep\nbt\nfinish\nnext\nnext\ncontinue\ninfo registers\ndelete\ncontinue\n";
    let (out, code) = dbg(
        &[m, "--function=sum_squares".into(), "--input=4".into()],
        script,
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    let stop = |k: usize| r[k].1[0].clone();
    assert_eq!(
        stop(1),
        "Breakpoint 1, sum_squares (module.sum_squares+0x0000002F) at calls.mlir:13:11"
    );
    assert_eq!(
        r[1].1[1],
        "13\t    %sq = func.call @square(%i) : (i32) -> i32"
    );
    // step enters the callee (no line info there: its first instruction).
    assert_eq!(stop(2), "fn1 (module.fn1+0x00000001)");
    assert_eq!(
        r[3].1,
        [
            "#0  module.fn1+0x00000001",
            "#1  module.sum_squares+0x0000002F calls.mlir:13:11",
            "        called from calls.mlir:5:1"
        ]
    );
    // finish returns to the line after the call.
    assert_eq!(
        stop(4),
        "sum_squares (module.sum_squares+0x0000003C) at calls.mlir:14:13"
    );
    assert_eq!(
        stop(5),
        "sum_squares (module.sum_squares+0x00000043) at calls.mlir:15:11"
    );
    assert_eq!(
        stop(6),
        "sum_squares (module.sum_squares+0x0000004A) at calls.mlir:16:5"
    );
    assert_eq!(
        stop(7),
        "Breakpoint 1, sum_squares (module.sum_squares+0x0000002F) at calls.mlir:13:11"
    );
    // Second iteration: i = 1, acc = 0 + 0*0.
    assert_eq!(register(&r[8].1, "%i1"), 1);
    assert_eq!(register(&r[8].1, "%i3"), 0);
    assert_eq!(r[10].1, ["[sum_squares returned]", "result[0]: i32=14"]);
}

#[test]
fn batch_file_sessions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("session.gdb");
    std::fs::write(&script, "# a comment\nrun\nquit\ninfo registers\n").expect("script");
    let out = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "dbg".to_string(),
            format!("--module={}", data("limits.vmfb").display()),
            "--function=alloc".into(),
            "--input=5".into(),
            format!("--batch={}", script.display()),
        ])
        .output()
        .expect("irvm dbg runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // quit ends the session: the command after it is not read.
    assert_eq!(
        text,
        "(irvm) # a comment\n(irvm) run\n[alloc returned]\nresult[0]: i64=5\n(irvm) quit\n"
    );
    let missing = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "dbg".to_string(),
            format!("--module={}", data("limits.vmfb").display()),
            "--function=alloc".into(),
            "--input=5".into(),
            "--batch=/nonexistent/script".into(),
        ])
        .output()
        .expect("irvm dbg runs");
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr)
        .contains("cannot read --batch file /nonexistent/script"));
}
