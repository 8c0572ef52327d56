//! `irvm dbg` driven by scripted sessions (commands on stdin), as a user
//! would script gdb: where breakpoints and steps stop, what registers hold,
//! and the messages for mistakes.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::paths::{data, shared};

/// Runs `irvm dbg ARGS` with `script` on stdin: (stdout, exit code).
pub(crate) fn dbg(args: &[String], script: &str) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("dbg")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("irvm dbg starts");
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes());
    // A session that reads no commands (`--batch` without a file) may end
    // before the script is written: the pipe is then closed.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "script written: {e}"
        );
    }
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
    assert_eq!(
        r[10].1,
        [
            "Run till exit from #0  fib (module.fib+0x00000033) at fib.mlir:9:10",
            "[fib returned]",
            "result[0]: i32=832040"
        ]
    );
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
    assert_eq!(r[6].1[0], "#0  fib (module.fib+0x00000022) at fib.mlir:6:5");
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
    assert_eq!(
        r[7].1[0],
        "Run till exit from #0  fib (vm_bench.fib+0x00000001)"
    );
    assert_eq!(r[7].1[1], "fib (vm_bench.fib+0x00000040)");
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
fn traps_stop_in_the_faulting_frame() {
    let m = format!("--module={}", data("divz.vmfb").display());
    let (out, code) = dbg(
        &[
            m,
            "--function=main".into(),
            "--input=7".into(),
            "--input=0".into(),
        ],
        "run\nbt\ninfo registers\nprint %i1\np/x %i2\ncontinue\nbt\n",
    );
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    // The stop reason is the status; the stop is at the failing line.
    assert_eq!(
        r[0].1,
        [
            "Program stopped: INVALID_ARGUMENT: integer division by zero",
            "main (module.main+0x0000000F) at divz.mlir:2:8",
            "2\t  %q = arith.divsi %a, %b : i32"
        ]
    );
    assert_eq!(
        r[1].1[0],
        "#0  main (module.main+0x0000000F) at divz.mlir:2:8"
    );
    // The registers as they were when it failed: a + 1 and the zero.
    assert_eq!(register(&r[2].1, "%i2"), 8);
    assert_eq!(register(&r[2].1, "%i1"), 0);
    assert_eq!(r[3].1, ["$1 = 0"]);
    assert_eq!(r[4].1, ["$2 = 0x8"]);
    // continue ends the program with the failure.
    assert_eq!(r[5].1[0], "[main failed]");
    assert_eq!(
        r[5].1[1],
        "divz.mlir:2:8: error: INVALID_ARGUMENT: integer division by zero"
    );
    assert_eq!(r[6].1, ["error: the program is not being run (use `run`)"]);
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
            "error: break needs a location: FILE:LINE, LINE, FUNCTION or *OFFSET",
            "error: bad breakpoint `nosuch`: no function of that name",
            "error: bad breakpoint `x.mlir:abc`: `abc` is not a line number",
            "error: unknown info command `colors` (breakpoints, watchpoints, registers, frame, args, locals, display, source, line)",
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
/// `divz.vmfb` (see tests/all/limits.rs); `square` is `noinline`, so the loop
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
            "#0  fn1 (module.fn1+0x00000001)",
            "#1  sum_squares (module.sum_squares+0x0000002F) at calls.mlir:13:11",
            "        called from calls.mlir:5:1"
        ]
    );
    // finish returns to the line after the call, with the value.
    assert_eq!(
        r[4].1,
        [
            "Run till exit from #0  fn1 (module.fn1+0x00000001)",
            "sum_squares (module.sum_squares+0x0000003C) at calls.mlir:14:13",
            "14\t    %acc1 = arith.addi %acc, %sq : i32",
            "Value returned is $1 = 0"
        ]
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

fn frames_args(input: &str) -> Vec<String> {
    vec![
        format!("--module={}", data("dbg/frames.vmasm").display()),
        "--function=main".into(),
        format!("--input={input}"),
    ]
}

/// `tests/data/dbg/frames.vmasm` is VM assembly whose every instruction has a
/// location in `tests/data/dbg/frames.src` (so both functions have lines).
#[test]
fn frames_are_selected_with_up_down_and_frame() {
    let script = "break twice\nrun\nbt\nup\ninfo registers\nlist\nup\ndown\nframe 1\nprint %i0\n\
                  info frame\ninfo args\ndown\ndown\nframe 2\nframe\nprint %i0\nbt 1\nbt -1\nbt 5\n\
                  bt 1 2\n";
    let (out, _) = dbg(&frames_args("5"), script);
    let r = replies(&out);
    assert_eq!(
        r[2].1,
        [
            "#0  twice (frames.twice+0x00000001) at frames.src:3:7",
            "#1  main (frames.main+0x00000001) at frames.src:8:7"
        ]
    );
    assert_eq!(
        r[3].1,
        [
            "#1  main (frames.main+0x00000001) at frames.src:8:7",
            "8\t  a = twice(n)"
        ]
    );
    // Registers follow the selected frame: main has 17 i32 slots, refs.
    assert!(r[4].1.iter().any(|l| l.starts_with("%r1 ")), "{:?}", r[4].1);
    assert!(
        r[4].1.iter().any(|l| l.starts_with("%i8:9    i64")),
        "{:?}",
        r[4].1
    );
    // list centres on the selected frame's line.
    assert!(
        r[5].1.contains(&"=>8\t  a = twice(n)".to_string()),
        "{:?}",
        r[5].1
    );
    assert_eq!(r[6].1, ["error: Initial frame selected; you cannot go up."]);
    assert_eq!(
        r[7].1[0],
        "#0  twice (frames.twice+0x00000001) at frames.src:3:7"
    );
    assert_eq!(
        r[8].1[0],
        "#1  main (frames.main+0x00000001) at frames.src:8:7"
    );
    assert_eq!(r[9].1, ["$1 = 5"]);
    assert_eq!(
        r[10].1,
        [
            "Stack level 1, frame at main (frames.main+0x00000001) at frames.src:8:7:",
            " caller of frame at twice (frames.twice+0x00000001) at frames.src:3:7",
            " Arglist: %i0=5",
            " 17 i32 register slots, 2 ref registers"
        ]
    );
    assert_eq!(r[11].1, ["%i0 = 5"]);
    assert_eq!(
        r[13].1,
        ["error: Bottom (innermost) frame selected; you cannot go down."]
    );
    assert_eq!(r[14].1, ["error: no frame 2 (the stack has 2 frames)"]);
    assert_eq!(
        r[15].1[0],
        "#0  twice (frames.twice+0x00000001) at frames.src:3:7"
    );
    // gdb's `bt N` (innermost N) and `bt -N` (outermost N).
    assert_eq!(
        r[17].1,
        [
            "#0  twice (frames.twice+0x00000001) at frames.src:3:7",
            "(More stack frames follow...)"
        ]
    );
    assert_eq!(
        r[18].1,
        ["#1  main (frames.main+0x00000001) at frames.src:8:7"]
    );
    assert_eq!(r[19].1, r[2].1);
    assert_eq!(
        r[20].1,
        ["error: unknown backtrace argument `2` (full, N or -N)"]
    );
}

#[test]
fn finish_prints_the_returned_value() {
    let script = "break twice\nrun\nfinish\nc\nup\nfinish\n";
    let (out, code) = dbg(&frames_args("5"), script);
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(
        r[2].1,
        [
            "Run till exit from #0  twice (frames.twice+0x00000001) at frames.src:3:7",
            "main (frames.main+0x0000000E) at frames.src:9:7",
            "9\t  b = twice(a)",
            "Value returned is $1 = 10"
        ]
    );
    // finish in the selected outer frame runs the program to its end.
    assert_eq!(
        r[5].1,
        [
            "Run till exit from #1  main (frames.main+0x0000000E) at frames.src:9:7",
            "[main returned]",
            "result[0]: i32=10"
        ]
    );
}

/// gdb's `jump`: the frame goes on at another place of its function (the
/// code between is skipped or run again), a breakpoint there stops at once
/// (`tbreak` + `jump`), and places outside the function are refused.
#[test]
fn jump_goes_on_elsewhere_in_the_current_function() {
    let script = "jump 9\nbreak 9\nrun\njump\njump twice\njump 3\njump *0x2\nset var %i1 = 0\n\
                  jump 8\nprint %i1\ntbreak 12\njump 12\ncontinue\n";
    let (out, _) = dbg(&frames_args("5"), script);
    let r = replies(&out);
    assert_eq!(r[0].1, ["error: the program is not being run (use `run`)"]);
    assert_eq!(
        r[3].1,
        ["error: jump needs a location: LINE, FILE:LINE, FUNCTION or *OFFSET"]
    );
    assert_eq!(
        r[4].1,
        ["error: `twice` is not in `main` (jump moves only within the current function)"]
    );
    assert_eq!(
        r[5].1,
        ["error: line 3 is not in `main` (jump moves only within the current function)"]
    );
    assert_eq!(
        r[6].1,
        ["error: no instruction of `main` starts at offset 0x2 (jump moves only within the current function)"]
    );
    // Back to line 8: the first call runs again (its result overwrites
    // the 0 set), and the breakpoint on line 9 stops the program again.
    assert_eq!(
        r[8].1,
        [
            "Continuing at frames.main+0x00000001.",
            "Breakpoint 1, main (frames.main+0x0000000E) at frames.src:9:7",
            "9\t  b = twice(a)"
        ]
    );
    assert_eq!(r[9].1, ["$1 = 10"]);
    // tbreak + jump: stopped at once at the target.
    assert_eq!(
        r[11].1,
        [
            "Continuing at frames.main+0x00000089.",
            "Temporary breakpoint 2, main (frames.main+0x00000089) at frames.src:12:7",
            "12\t  z = b / (n - 3)"
        ]
    );
    // Lines 9 to 11 skipped: b is 0, and so is b / (n - 3).
    assert_eq!(r[12].1, ["[main returned]", "result[0]: i32=0"]);
}

/// gdb's `return`: the question answered yes (commands not from a
/// terminal), the selected frame popped with the values, converted to the
/// function's result types (none given: zeros), the program stopped in the
/// caller, a watchpoint of the popped frame ended; from the entry
/// function's outermost frame the program ends with the values.
#[test]
fn return_pops_the_selected_frame_with_values() {
    let script = "break twice\nrun\nreturn 40\nprint %i1\ndelete\nreturn 1, 2\nreturn %r0\n\
                  return 99999999999\nreturn 7\nbreak twice\nrun\nwatch %i1\nreturn\ncontinue\n\
                  up\nreturn\n";
    let (out, _) = dbg(&frames_args("5"), script);
    let r = replies(&out);
    assert_eq!(
        r[2].1,
        [
            "Make twice return now? (y or n) [answered Y; input not from terminal]",
            "#0  main (frames.main+0x0000000E) at frames.src:9:7",
            "9\t  b = twice(a)"
        ]
    );
    assert_eq!(r[3].1, ["$1 = 40"]);
    assert_eq!(
        r[5].1,
        ["error: `main` returns 1 value (i32); `return` was given 2"]
    );
    assert_eq!(
        r[6].1,
        ["error: `main`'s result 0 (i32) takes a number, not ref"]
    );
    assert_eq!(
        r[7].1,
        ["error: 99999999999 is out of range for `main`'s result 0 (i32)"]
    );
    assert_eq!(
        r[8].1,
        [
            "Make main return now? (y or n) [answered Y; input not from terminal]",
            "[main returned]",
            "result[0]: i32=7"
        ]
    );
    // A watchpoint of the popped frame ends with it; twice returned 0.
    assert_eq!(
        r[12].1,
        [
            "Make twice return now? (y or n) [answered Y; input not from terminal]",
            "Watchpoint 3 deleted because the program has left the block in",
            "which its expression is valid.",
            "#0  main (frames.main+0x0000000E) at frames.src:9:7",
            "9\t  b = twice(a)"
        ]
    );
    assert_eq!(
        r[13].1[0],
        "Breakpoint 2, twice (frames.twice+0x00000001) at frames.src:3:7"
    );
    // From main, selected above twice: both frames go, the call ends
    // with main's zero.
    assert_eq!(
        r[15].1,
        [
            "Make main return now? (y or n) [answered Y; input not from terminal]",
            "[main returned]",
            "result[0]: i32=0"
        ]
    );
}

/// In an initializer: `finish` from its outermost frame is refused as gdb
/// refuses it, `return` ends it (the rest of it skipped) and the program
/// stops before the entry function's first instruction; `bt` with a number
/// too large says so as gdb does.
#[test]
fn return_and_finish_in_an_initializer() {
    let args = [
        format!("--module={}", data("dbg/counter.vmasm").display()),
        "--function=main".into(),
    ];
    let script = "break __init\nrun\nwatch %i0\nfinish\nreturn 5\nbt 99999999999999999999\n\
                  return\ncontinue\n";
    let (out, _) = dbg(&args, script);
    let r = replies(&out);
    assert_eq!(
        r[3].1,
        ["error: \"finish\" not meaningful in the outermost frame."]
    );
    assert_eq!(
        r[4].1,
        ["error: `__init` returns 0 values (); `return` was given 1"]
    );
    assert_eq!(r[5].1, ["error: Numeric constant too large."]);
    assert_eq!(
        r[6].1,
        [
            "Make __init return now? (y or n) [answered Y; input not from terminal]",
            "Watchpoint 2 deleted because the program has left the block in",
            "which its expression is valid.",
            "#0  main (counter.main+0x00000001)",
            "=> %i0 = vm.global.load.i32 .rwdata[0]"
        ]
    );
    // The initializer's add never ran: main counts from 0.
    assert_eq!(r[7].1, ["[main returned]", "result[0]: i32=1"]);
}

/// gdb's `call FUNCTION(ARGS)` and `print FUNCTION(ARGS)`: any function of
/// the program, exported or not, called while it is stopped; results as
/// `$N = VALUE`; a breakpoint inside the call does not stop it, a trap
/// abandons it, and the stopped program goes on as it was.
#[test]
fn call_runs_a_function_while_the_program_is_stopped() {
    let script = "call twice(2)\nbreak 12\nrun\ncall twice(21)\nprint twice(%i0)\np/x twice(8)\n\
                  call twice()\ncall twice(%r0)\ncall nope(1)\ncall main(3)\ncall main(1)\nbt\n\
                  continue\n";
    let (out, _) = dbg(&frames_args("5"), script);
    let r = replies(&out);
    assert_eq!(
        r[0].1,
        ["error: You can't do that without a process to debug."]
    );
    assert_eq!(r[3].1, ["$1 = 42"]);
    assert_eq!(r[4].1, ["$2 = 10"]);
    assert_eq!(r[5].1, ["$3 = 0x10"]);
    assert_eq!(
        r[6].1,
        ["error: `twice` takes 1 argument; the call gives 0"]
    );
    assert_eq!(
        r[7].1,
        ["error: argument 0 of `twice` (i32) takes a number, not !vm.list<i32>"]
    );
    assert_eq!(r[8].1, ["error: no function `nope` in the program"]);
    // main(3) divides by zero; the breakpoint on line 12 did not stop it.
    assert_eq!(
        r[9].1,
        [
            "error: the call of `main` failed: INVALID_ARGUMENT: integer division by zero \
          (it was abandoned; the program stays where it stopped)"
        ]
    );
    assert_eq!(r[10].1, ["$4 = -2"]);
    assert_eq!(
        r[11].1,
        ["#0  main (frames.main+0x00000089) at frames.src:12:7"]
    );
    assert_eq!(r[12].1, ["[main returned]", "result[0]: i32=10"]);
    // Stopped at a trap (n = 3 divides by zero), functions can be called.
    let (out, _) = dbg(&frames_args("3"), "run\ncall twice(4)\n");
    let r = replies(&out);
    assert_eq!(
        r[0].1[0],
        "Program stopped: INVALID_ARGUMENT: integer division by zero"
    );
    assert_eq!(r[1].1, ["$1 = 8"]);
}

#[test]
fn print_shows_lists_buffers_and_formats() {
    let script = "break 13\nrun\nprint %r0\nprint %r1\np/x %i14\np/t %i14\np/d %i14\np/f %i14\n\
                  p %i8:9\np/x %i8:9\np %i0 == 5\np %i0 > 10\np %r0 == 0\np %r7\np %i0 <\n";
    let (out, _) = dbg(&frames_args("5"), script);
    let r = replies(&out);
    assert_eq!(r[2].1, ["$1 = !vm.list<i32>[3] {10, 20, 5}"]);
    assert_eq!(
        r[3].1,
        ["$2 = !vm.buffer[20] {00 00 00 00 2a 00 00 00 00 00 00 00 00 00 00 00 ...}"]
    );
    assert_eq!(r[4].1, ["$3 = 0x2a"]);
    assert_eq!(r[5].1, ["$4 = 101010"]);
    assert_eq!(r[6].1, ["$5 = 42"]);
    assert_eq!(r[7].1, ["$6 = 5.88545355e-44"]);
    assert_eq!(r[8].1, ["$7 = 20"]);
    assert_eq!(r[9].1, ["$8 = 0x14"]);
    assert_eq!(r[10].1, ["$9 = 1"]);
    assert_eq!(r[11].1, ["$10 = 0"]);
    assert_eq!(r[12].1, ["$11 = 0"]);
    assert_eq!(
        r[13].1,
        ["error: cannot print `%r7`: %r7 is out of range (the frame has 2 ref registers)"]
    );
    assert_eq!(
        r[14].1,
        ["error: cannot print `%i0 <`: A syntax error in expression, near `'."]
    );
}

#[test]
fn tensors_print_shape_type_and_elements() {
    let m = format!("--module={}", data("tensor.vmfb").display());
    let (out, code) = dbg(
        &[
            m,
            "--function=double".into(),
            "--input=4xf32=1,2,3,4".into(),
        ],
        "start\nprint %r0\nc\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[1].1, ["$1 = !hal.buffer_view 4xf32=1 2 3 4"]);
    // The dispatch shows in the transcript as the program runs.
    assert_eq!(
        r[2].1[0],
        "[hal.dispatch] module::double_dispatch_0_elementwise_4_f32 (vmvx-bytecode-fb) workgroups 1x1x1"
    );
    assert_eq!(r[2].1[1], "[double returned]");
}

#[test]
fn conditions_ignore_counts_and_hit_counts() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=12".into()];
    // Line 11 is blank: the breakpoint moves to line 12, the next with code.
    let script =
        "break fib.mlir:11 if %i1 == 3\nrun\np %i1\ninfo breakpoints\ncondition 1 %i1 > 4\n\
                  c\np %i1\ncondition 1\nignore 1 2\nc\np %i1\ninfo breakpoints\ndisable 1\n\
                  tbreak 13\nc\np %i1\ninfo breakpoints\nenable 1\nc\np %i1\ndelete 1\nc\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(
        r[0].1,
        ["Breakpoint 1 at fib (module.fib+0x00000033) at fib.mlir:12:13 (1 location)"]
    );
    assert_eq!(r[2].1, ["$1 = 3"]);
    assert_eq!(
        r[3].1,
        [
            "Num     Type           Disp Enb What",
            "1       breakpoint     keep y   fib (module.fib+0x00000033) at fib.mlir:12:13",
            "\tstop only if %i1 == 3",
            "\tbreakpoint already hit 1 time"
        ]
    );
    assert_eq!(r[6].1, ["$2 = 5"]);
    assert_eq!(r[7].1, ["Breakpoint 1 now unconditional."]);
    assert_eq!(r[8].1, ["Will ignore next 2 crossings of breakpoint 1."]);
    // Hits 3 and 4 (i = 6 and 7) are ignored; hits count them all.
    assert_eq!(r[10].1, ["$3 = 8"]);
    assert!(
        r[11]
            .1
            .contains(&"\tbreakpoint already hit 5 times".to_string()),
        "{:?}",
        r[11].1
    );
    assert_eq!(
        r[13].1,
        ["Temporary breakpoint 2 at fib (module.fib+0x0000003A) at fib.mlir:13:11 (1 location)"]
    );
    assert_eq!(
        r[14].1[..2],
        [
            "Temporary breakpoint 2, fib (module.fib+0x0000003A) at fib.mlir:13:11",
            "13\t    %k1 = arith.addi %k, %one : i32"
        ]
    );
    assert_eq!(r[15].1, ["$4 = 8"]);
    // The temporary breakpoint is gone; 1 is disabled.
    assert_eq!(r[16].1[1].split_whitespace().nth(3), Some("n"));
    assert_eq!(r[16].1.len(), 3, "{:?}", r[16].1);
    assert_eq!(
        r[18].1[0],
        "Breakpoint 1, fib (module.fib+0x00000033) at fib.mlir:12:13"
    );
    assert_eq!(r[19].1, ["$5 = 9"]);
    assert_eq!(r[21].1, ["[fib returned]", "result[0]: i32=144"]);
}

#[test]
fn display_until_advance_and_start() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=3".into()];
    let script = "start\ndisplay %i1\ndisplay/x %i4\nnext\ninfo display\nundisplay 1\nadvance 13\n\
                  until\nuntil\nuntil\nundisplay\nuntil\nadvance 12\nundisplay 7\n";
    let (out, _) = dbg(&args, script);
    let r = replies(&out);
    assert_eq!(
        r[0].1,
        [
            "fib (module.fib+0x00000001) at fib.mlir:4:11",
            "4\t  %zero = arith.constant 0 : i32"
        ]
    );
    assert_eq!(r[1].1, ["1: %i1 = 0"]);
    assert_eq!(r[2].1, ["2: /x %i4 = 0x0"]);
    // Displays are shown after each stop.
    assert_eq!(r[3].1[2..], ["1: %i1 = 0", "2: /x %i4 = 0x0"]);
    assert_eq!(
        r[4].1,
        [
            "Auto-display expressions now in effect:",
            "Num Enb Expression",
            "1:   y  %i1",
            // With its format, as gdb lists it (`2:   y  /x 1`, gdb 13).
            "2:   y  /x %i4"
        ]
    );
    assert_eq!(
        r[6].1,
        [
            "fib (module.fib+0x0000003A) at fib.mlir:13:11",
            "13\t    %k1 = arith.addi %k, %one : i32",
            "2: /x %i4 = 0x1"
        ]
    );
    assert_eq!(r[7].1[0], "fib (module.fib+0x00000041) at fib.mlir:14:5");
    // At the end of the loop body, until does not go back to the
    // condition: it runs the remaining iterations, and the final
    // `vm.return` is at the function's own location (fib.mlir:3:1), which
    // is no line: the program ends.
    assert_eq!(r[8].1[0], "[fib returned]");
    assert_eq!(r[9].1, ["error: the program is not being run (use `run`)"]);
    assert_eq!(r[11].1, ["error: the program is not being run (use `run`)"]);
    assert_eq!(r[12].1, ["error: the program is not being run (use `run`)"]);
    assert_eq!(r[13].1, ["error: no display number 7"]);
}

#[test]
fn list_goes_on_and_takes_ranges_and_functions() {
    let args = frames_args("5");
    let script = "list\nlist\nlist\nlist 3,4\nlist main\nbreak twice\nrun\nlist\nlist\nlist 99\n\
                  list nosuch\nlist 5,2\n";
    let (out, _) = dbg(&args, script);
    let r = replies(&out);
    // Before running: the entry function's file from its first line.
    assert_eq!(r[0].1.len(), 10);
    assert_eq!(
        r[0].1[0],
        "  1\t# Pseudo source of frames.vmasm (tests/all/dbg.rs, tests/all/dap.rs): one statement a line."
    );
    assert_eq!(r[1].1[0], "  11\t  bytes = buffer(20, fill 0x2a at 4)");
    assert_eq!(r[1].1.len(), 4, "the file has 14 lines: {:?}", r[1].1);
    assert_eq!(
        r[2].1,
        ["error: Line number 15 out of range; frames.src has 14 lines."]
    );
    assert_eq!(r[3].1, ["  3\t  y = x + x", "  4\t  return y"]);
    assert_eq!(r[4].1[0], "  3\t  y = x + x");
    assert!(r[4].1.contains(&"  8\t  a = twice(n)".to_string()));
    // After a stop: around the stop line, then on from there.
    assert_eq!(
        r[7].1[0],
        "  1\t# Pseudo source of frames.vmasm (tests/all/dbg.rs, tests/all/dap.rs): one statement a line."
    );
    assert!(r[7].1.contains(&"=>3\t  y = x + x".to_string()));
    assert_eq!(r[8].1[0], "  11\t  bytes = buffer(20, fill 0x2a at 4)");
    assert_eq!(
        r[9].1,
        ["error: Line number 94 out of range; frames.src has 14 lines."]
    );
    assert_eq!(
        r[10].1,
        ["error: bad breakpoint `nosuch`: no function of that name"]
    );
    assert_eq!(r[11].1, ["error: bad range 5,2"]);
}

#[test]
fn completion_of_commands_files_and_functions() {
    let args = frames_args("5");
    let (out, _) = dbg(
        &args,
        "complete ad\ncomplete b tw\ncomplete break fr\ncomplete info re\ncomplete list m\n\
         complete b\u{3000}tw\n",
    );
    let r = replies(&out);
    assert_eq!(r[0].1, ["advance"]);
    assert_eq!(r[1].1, ["b twice"]);
    assert_eq!(r[2].1, ["break frames.src:"]);
    assert_eq!(r[3].1, ["info registers"]);
    assert_eq!(r[4].1, ["list main"]);
    // A multi-byte space separates words too.
    assert_eq!(r[5].1, ["b\u{3000}twice"]);
}

/// Ctrl-C while the program runs (no breakpoints) stops it where it is;
/// `continue` goes on, and a second Ctrl-C stops it again.
#[test]
fn sigint_pauses_a_running_program() {
    use std::io::BufRead;
    use std::sync::mpsc::RecvTimeoutError;
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "dbg".to_string(),
            format!("--module={}", data("spin.vmfb").display()),
            "--function=spin".into(),
            "--input=1000000000000".into(),
            "--interruptible".into(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("irvm dbg starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let pid = child.id() as i32;
    // The transcript's lines, read on a thread so that every wait is bounded.
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen: Vec<String> = Vec::new();
    // Reads up to a line containing `want`; with `sigint`, sends SIGINT
    // again each 100 ms without a line (one is enough: see
    // `sigint_between_run_and_the_first_instruction_pauses_there`).
    let read_until = |want: &str, sigint: bool, seen: &mut Vec<String>| {
        let start = Instant::now();
        loop {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no {want:?} within 20 s: {seen:?}"
            );
            if sigint {
                // SAFETY: signalling our own child process.
                assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
            }
            match lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    let found = line.contains(want);
                    seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => panic!("irvm dbg ended early: {seen:?}"),
            }
        }
    };
    for round in 0..2 {
        let cmd = if round == 0 { "run\n" } else { "continue\n" };
        stdin.write_all(cmd.as_bytes()).expect("command");
        stdin.flush().expect("flush");
        read_until(cmd.trim(), false, &mut seen);
        read_until("Program received signal SIGINT", true, &mut seen);
        read_until("spin (module.spin+", false, &mut seen);
    }
    stdin
        .write_all(b"info registers\nkill\nquit\n")
        .expect("commands");
    drop(stdin);
    let status = child.wait().expect("exit");
    let rest: String = lines.iter().map(|l| l + "\n").collect();
    assert!(status.success(), "{seen:?} {rest}");
    // Stopped in the loop: the counter (the first pair) is below n. How far
    // the loop got is no guarantee (a pause may come before an iteration,
    // on a loaded machine even after a wait): not asserted.
    let counter = rest
        .lines()
        .find_map(|l| l.strip_prefix("%i2:3    i64  "))
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or_else(|| panic!("no counter in {rest}"));
    assert!((0..1_000_000_000_000).contains(&counter), "{counter}");
    assert!(rest.contains("[Inferior 1 killed]"), "{rest}");
}

/// Ctrl-C abandons a call made from the debugger (`call spin(N)` of a
/// loop that would run for hours); the stopped program goes on as it was.
#[test]
fn sigint_abandons_a_long_call() {
    use std::io::BufRead;
    use std::sync::mpsc::RecvTimeoutError;
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "dbg".to_string(),
            format!("--module={}", data("spin.vmfb").display()),
            "--function=spin".into(),
            "--input=3".into(),
            "--interruptible".into(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("irvm dbg starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let pid = child.id() as i32;
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen: Vec<String> = Vec::new();
    let mut read_until = |want: &str, sigint: bool| {
        let start = Instant::now();
        loop {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no {want:?} within 20 s: {seen:?}"
            );
            if sigint {
                // SAFETY: signalling our own child process.
                assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
            }
            match lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    let found = line.contains(want);
                    seen.push(line.clone());
                    if found {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => panic!("irvm dbg ended early: {seen:?}"),
            }
        }
    };
    stdin
        .write_all(b"start\ncall spin(1000000000000)\n")
        .expect("commands");
    stdin.flush().expect("flush");
    read_until("(irvm) call spin", false);
    let abandoned = read_until("error: ", true);
    assert_eq!(
        abandoned,
        "error: the call of `spin` failed: CANCELLED: the call of module.spin was paused and \
         abandoned (it was abandoned; the program stays where it stopped)"
    );
    stdin.write_all(b"continue\nquit\n").expect("commands");
    drop(stdin);
    let status = child.wait().expect("exit");
    let rest: Vec<String> = lines.iter().collect();
    // (The failed command makes the exit code 1, as any in a script.)
    assert_eq!(status.code(), Some(1), "{rest:?}");
    assert!(
        rest.iter().any(|l| l == "result[0]: i64=6"),
        "the stopped call went on as it was: {rest:?}"
    );
}

/// A Ctrl-C that comes after `run` was read but before the program's first
/// instruction pauses it there (it was dropped as a stale pause). Made
/// deterministic by holding the debugger in that window: its stdout is a
/// pipe the test has filled, so the echo of `run` blocks; SIGINT is sent
/// while it is blocked there (seen in `/proc/PID/syscall`), then the pipe
/// is drained. `spin` over 10 would finish at once if not paused.
#[test]
fn sigint_between_run_and_the_first_instruction_pauses_there() {
    use std::io::{BufRead, BufReader, Read};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::{Duration, Instant};
    // The write(2) system call's number in /proc/PID/syscall.
    #[cfg(target_arch = "x86_64")]
    const WRITE: &str = "1";
    #[cfg(target_arch = "aarch64")]
    const WRITE: &str = "64";
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        eprintln!("skipping: write(2)'s number not known here");
        return;
    }
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 just returned these descriptors; each is owned once.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "dbg".to_string(),
            format!("--module={}", data("spin.vmfb").display()),
            "--function=spin".into(),
            "--input=10".into(),
            "--interruptible".into(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::from(write_end.try_clone().expect("dup")))
        .stderr(Stdio::null())
        .spawn()
        .expect("irvm dbg starts");
    let pid = child.id() as i32;
    // Every read below ends: the child is killed after 60 s (its stdout
    // then ends, and the test fails on what it lacks).
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if start.elapsed() > Duration::from_secs(60) {
                    // SAFETY: signalling our own child process.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let mut stdin = child.stdin.take().expect("stdin");
    let mut filler = std::fs::File::from(write_end);
    let mut out = BufReader::new(std::fs::File::from(read_end));
    let mut line = String::new();
    // Reads lines up to one containing `want` (the pipe is then empty: the
    // debugger waits for its next command).
    let mut read_until = |want: &str, out: &mut BufReader<std::fs::File>| {
        let mut seen = Vec::new();
        loop {
            line.clear();
            assert_ne!(out.read_line(&mut line).expect("read"), 0, "{seen:?}");
            seen.push(line.clone());
            if line.contains(want) {
                return seen;
            }
        }
    };
    stdin.write_all(b"info breakpoints\n").expect("command");
    read_until("No breakpoints", &mut out);
    // Fill the pipe: the echo of the next command blocks.
    // SAFETY: F_GETPIPE_SZ on a pipe descriptor we own.
    let capacity = unsafe { libc::fcntl(filler.as_raw_fd(), libc::F_GETPIPE_SZ) };
    assert!(capacity > 0);
    let capacity = capacity as usize;
    filler.write_all(&vec![b'.'; capacity]).expect("fill");
    // Only the child holds the write end now: its exit ends the reads.
    drop(filler);
    stdin.write_all(b"run\n").expect("command");
    stdin.flush().expect("flush");
    let syscall = format!("/proc/{pid}/syscall");
    let start = Instant::now();
    loop {
        let Ok(now) = std::fs::read_to_string(&syscall) else {
            eprintln!("skipping: {syscall} cannot be read");
            let _ = child.kill();
            let _ = child.wait();
            return;
        };
        let mut words = now.split_whitespace();
        if words.next() == Some(WRITE) && words.next() == Some("0x1") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "not blocked writing stdout: {now}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: signalling our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let mut drained = vec![0; capacity];
    out.read_exact(&mut drained).expect("drain");
    let seen = read_until("(irvm) run", &mut out);
    assert_eq!(seen, ["(irvm) run\n"]);
    stdin
        .write_all(b"info registers\nquit\n")
        .expect("commands");
    drop(stdin);
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("rest");
    let status = child.wait().expect("exit");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    watchdog.join().expect("watchdog");
    assert!(status.success(), "{rest}");
    assert!(
        rest.starts_with("\nProgram received signal SIGINT, Interrupt.\n")
            || rest.starts_with("Program received signal SIGINT, Interrupt.\n"),
        "{rest}"
    );
    assert!(!rest.contains("[spin returned]"), "{rest}");
}

/// The library's pause flag (`Context::set_pause_flag`, what Ctrl-C and
/// DAP's `pause` use) stops the plain loop and the hooked one (here made
/// active by a fuel budget); resuming finishes with the right result.
#[test]
fn pause_flag_stops_both_loops_and_resume_finishes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    // Long enough that the request, made 20 ms in, finds the call running
    // even in compiled code (about 1 ns an iteration) on a loaded machine.
    let n: i64 = 400_000_000;
    let expected = (0..n).fold(0i64, |acc, i| acc.wrapping_add(i ^ 3));
    for fuel in [None, Some(u64::MAX)] {
        let module = irvm::Module::from_file(data("spin.vmfb")).expect("module");
        let mut ctx = irvm::Context::new(&irvm::TypeRegistry::new());
        ctx.register_module(module).expect("registers");
        ctx.set_fuel(fuel);
        let flag = Arc::new(AtomicBool::new(false));
        ctx.set_pause_flag(Some(flag.clone()));
        let f = ctx.function("module.spin").expect("spin");
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                flag.store(true, Ordering::Relaxed);
            })
        };
        let state = ctx.begin_call(&f, &[irvm::Value::I64(n)]).expect("runs");
        setter.join().expect("setter");
        assert!(matches!(state, irvm::CallState::Paused), "fuel {fuel:?}");
        assert!(!flag.load(Ordering::Relaxed), "the request is taken");
        let frames = ctx.frames();
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].frame.function, "spin");
        ctx.set_pause_flag(None);
        match ctx.resume().expect("resumes") {
            irvm::CallState::Done(values) => {
                assert!(
                    matches!(values.as_slice(), [irvm::Value::I64(v)] if *v == expected),
                    "fuel {fuel:?}: {values:?}"
                )
            }
            _ => panic!("not done"),
        }
    }
}

/// An instruction at a location with no file position (`loc("made-up")`,
/// a name without a place) has no line: it does not take the line before.
#[test]
fn locations_without_a_file_position_are_no_line() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("u.vmasm");
    std::fs::write(
        &module,
        "vm.module @u version 0\nvm.type i32\nvm.export @main\n\
         vm.func @main(%i0: i32) -> (i32) {\n^bb0:\n\
         \x20 %i1 = vm.add.i32 %i0, %i0 loc(\"u.src\":2:3)\n\
         \x20 %i2 = vm.add.i32 %i1, %i1 loc(\"made-up\")\n\
         \x20 %i3 = vm.add.i32 %i2, %i2 loc(\"u.src\":3:3)\n\
         \x20 vm.return %i3 loc(\"u.src\":4:3)\n}\n",
    )
    .unwrap();
    let args = [
        format!("--module={}", module.display()),
        "--function=main".into(),
        "--input=1".into(),
    ];
    let (out, code) = dbg(&args, "start\nstepi\nnext\nnext\n");
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert!(r[0].1[0].ends_with("at u.src:2:3"), "{:?}", r[0].1);
    assert!(!r[1].1[0].contains(" at "), "{:?}", r[1].1);
    assert!(r[2].1[0].ends_with("at u.src:3:3"), "{:?}", r[2].1);
    assert!(r[3].1[0].ends_with("at u.src:4:3"), "{:?}", r[3].1);
}

/// A module from iree-compile 3.13 stores a source map for its last
/// function only (`__init` here): `dynamic` is found by its export name,
/// and a line's breakpoint is placed in `__init` alone, once per place (the
/// map was taken as the first function's too, by position, as IREE's
/// runtime does). `__init` runs under the debugger: the breakpoint there
/// stops it.
#[test]
fn functions_are_named_by_export_when_source_maps_are_fewer() {
    let module = format!(
        "--module={}",
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/models/dynamic.vmfb")
            .display()
    );
    let (out, status) = dbg(
        &[
            module,
            "--function=dynamic".into(),
            "--input=2x2xf32=3".into(),
        ],
        "break dynamic.mlir:2\nbreak dynamic\nrun\nbt\ndelete 1\ncontinue\nbt\ncontinue\nquit\n",
    );
    assert_eq!(status, 0, "{out}");
    assert!(
        out.contains(
            "Breakpoint 1 at __init (module.__init+0x00000265) at dynamic.mlir:2:8 (3 locations)"
        ),
        "{out}"
    );
    assert!(
        out.contains("Breakpoint 2 at dynamic (module.dynamic+0x00000001)"),
        "{out}"
    );
    let r = replies(&out);
    assert_eq!(
        r[2].1[0],
        "Breakpoint 1, __init (module.__init+0x00000265) at dynamic.mlir:2:8"
    );
    assert_eq!(
        r[3].1[0],
        "#0  __init (module.__init+0x00000265) at dynamic.mlir:2:8"
    );
    assert_eq!(
        r[5].1[0],
        "Breakpoint 2, dynamic (module.dynamic+0x00000001)"
    );
    assert_eq!(r[6].1, ["#0  dynamic (module.dynamic+0x00000001)"]);
    assert!(out.contains("2x2xf32=[9 9][9 9]"), "{out}");
}

#[test]
fn a_module_from_stdin_without_a_batch_file_is_refused() {
    // Stdin cannot hold both the module and the commands: said as such,
    // not a session that reads the module and then finds no commands.
    let fib = crate::common::paths::repo_file("examples/fib.vmasm");
    let (_, err, code) = crate::common::cli::irvm_with_stdin(
        &["dbg", "--module=-", "--function=fib", "--input=3"],
        Some(&fib),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--module=-") && err.contains("--batch"),
        "{err}"
    );
    // With the commands in a batch file, the module may come from stdin.
    let dir = tempfile::tempdir().unwrap();
    let batch = dir.path().join("cmds");
    std::fs::write(&batch, "run\n").unwrap();
    let batch_flag = format!("--batch={}", batch.display());
    let (out, err, code) = crate::common::cli::irvm_with_stdin(
        &[
            "dbg",
            "--module=-",
            "--function=fib",
            "--input=3",
            &batch_flag,
        ],
        Some(&fib),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("i32=2"), "{out}");
}

/// An async-external function (`tests/models/async_external.vmfb`) is
/// debugged with its inputs only: the debugger passes its fences.
#[test]
fn async_external_functions_get_their_fences() {
    let dir = tempfile::tempdir().unwrap();
    let batch = dir.path().join("cmds");
    std::fs::write(&batch, "run\n").unwrap();
    let batch_flag = format!("--batch={}", batch.display());
    let module = format!(
        "--module={}",
        crate::common::paths::repo_file("tests/models/async_external.vmfb")
    );
    let (out, err, code) = crate::common::cli::irvm(&[
        "dbg",
        &module,
        "--function=scale",
        "--input=4xf32=1 2 -3 0.5",
        "--input=2.5",
        &batch_flag,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("4xf32=2.5 5 -7.5 1.25"), "{out}");
}

#[test]
fn watchpoints_stop_when_a_register_changes_and_end_with_their_frame() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=12".into()];
    // %i1 counts fib's iterations.
    let script = "watch %i1\nbreak fib.mlir:12\nrun\nwatch %i1\ndelete 1\ncontinue\ncontinue\n\
                  info breakpoints\nwatch %i1 if %i1 > 5\ndisable 2\ncontinue\ninfo breakpoints\n\
                  delete 3\nenable 2\ncontinue\ndisable\ncontinue\ninfo breakpoints\n";
    let (out, code) = dbg(&args, script);
    // (A script with a failed command ends with status 1, as gdb's batch
    // mode does.)
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1, ["error: the program is not being run (use `run`)"]);
    assert_eq!(r[3].1, ["Watchpoint 2: %i1"]);
    let change = |id: u32, old: i32, new: i32| {
        vec![
            format!("Watchpoint {id}: %i1"),
            format!("Old value = {old}"),
            format!("New value = {new}"),
            "fib (module.fib+0x00000041) at fib.mlir:14:5".to_string(),
            "14\t    scf.yield %k1, %y, %next : i32, i32, i32".to_string(),
        ]
    };
    assert_eq!(r[5].1, change(2, 0, 1));
    assert_eq!(r[6].1, change(2, 1, 2));
    assert_eq!(
        r[7].1,
        [
            "Num     Type           Disp Enb What",
            "2       watchpoint     keep y   %i1 in fib (frame #0)",
            "\tbreakpoint already hit 2 times"
        ]
    );
    assert_eq!(r[8].1, ["Watchpoint 3: %i1"]);
    // 3 stops only where its condition holds after a change (2 -> 3, 3 ->
    // 4 and 4 -> 5 do not stop it).
    assert_eq!(r[10].1, change(3, 5, 6));
    assert_eq!(
        r[11].1,
        [
            "Num     Type           Disp Enb What",
            "2       watchpoint     keep n   %i1 in fib (frame #0)",
            "\tbreakpoint already hit 2 times",
            "3       watchpoint     keep y   %i1 in fib (frame #0)",
            "\tstop only if %i1 > 5",
            "\tbreakpoint already hit 1 time"
        ]
    );
    // Enabled again, 2 follows from the value now.
    assert_eq!(r[14].1, change(2, 6, 7));
    // Everything disabled: the program ends with fib's result, and the
    // watchpoints with their frames (they were listed after the end).
    assert_eq!(r[16].1, ["[fib returned]", "result[0]: i32=144"]);
    assert_eq!(r[17].1, ["No breakpoints or watchpoints."]);

    // A watchpoint in a callee ends when the callee returns.
    let calls = format!("--module={}", data("calls.vmfb").display());
    let args = [calls, "--function=sum_squares".into(), "--input=4".into()];
    let (out, code) = dbg(
        &args,
        "break calls.mlir:13\nrun\nstep\nwatch %i0\ncontinue\ninfo breakpoints\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[3].1, ["Watchpoint 2: %i0"]);
    assert_eq!(
        r[4].1,
        [
            "Watchpoint 2 deleted because the program has left the block in",
            "which its expression is valid.",
            "sum_squares (module.sum_squares+0x0000003C) at calls.mlir:14:13",
            "14\t    %acc1 = arith.addi %acc, %sq : i32"
        ]
    );
    assert_eq!(r[5].1.len(), 3, "only breakpoint 1 is left: {:?}", r[5].1);
}

/// Watchpoints that see a change at the same instruction are all
/// reported, as gdb reports them: a callee's watchpoint ending as its
/// result changes a watched register of the caller, and two watchpoints
/// on one register. (Only the first was, and the others' changes were
/// lost: they followed the register without stopping.)
#[test]
fn watchpoints_that_fire_together_are_all_reported() {
    let calls = format!("--module={}", data("calls.vmfb").display());
    let args = [calls, "--function=sum_squares".into(), "--input=4".into()];
    // %i4 of sum_squares is the condition (1), then square(0)'s result.
    let (out, code) = dbg(
        &args,
        "break calls.mlir:13\nrun\nwatch %i4\nwatch %i4\nstep\nwatch %i0\ndelete 1\ncontinue\n\
         info breakpoints\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    let changed = |id: u32| {
        vec![
            format!("Watchpoint {id}: %i4"),
            "Old value = 1".to_string(),
            "New value = 0".to_string(),
        ]
    };
    let mut want = changed(2);
    want.extend(changed(3));
    want.extend([
        "Watchpoint 4 deleted because the program has left the block in".to_string(),
        "which its expression is valid.".to_string(),
        "sum_squares (module.sum_squares+0x0000003C) at calls.mlir:14:13".to_string(),
        "14\t    %acc1 = arith.addi %acc, %sq : i32".to_string(),
    ]);
    assert_eq!(r[7].1, want);
    assert_eq!(
        r[8].1,
        [
            "Num     Type           Disp Enb What",
            "2       watchpoint     keep y   %i4 in sum_squares (frame #0)",
            "\tbreakpoint already hit 1 time",
            "3       watchpoint     keep y   %i4 in sum_squares (frame #0)",
            "\tbreakpoint already hit 1 time"
        ]
    );
}

/// A disabled watchpoint ends with its frame too: enabled again in a later
/// invocation of the function at the same depth, it watched that one
/// (square(0)'s watchpoint stopped square(2) at 2 -> 4).
#[test]
fn a_disabled_watchpoint_ends_with_its_frame() {
    let calls = format!("--module={}", data("calls.vmfb").display());
    let args = [calls, "--function=sum_squares".into(), "--input=4".into()];
    let (out, code) = dbg(
        &args,
        "break calls.mlir:13\nrun\nstep\nwatch %i0\ndisable 2\ncontinue\ninfo breakpoints\n\
         continue\nstep\nenable 2\ndelete 1\ncontinue\n",
    );
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(r[3].1, ["Watchpoint 2: %i0"]);
    // square(0) returned: the loop's next call stops at breakpoint 1.
    assert_eq!(
        r[5].1[0],
        "Breakpoint 1, sum_squares (module.sum_squares+0x0000002F) at calls.mlir:13:11"
    );
    assert_eq!(
        r[6].1,
        [
            "Num     Type           Disp Enb What",
            "1       breakpoint     keep y   sum_squares (module.sum_squares+0x0000002F) at calls.mlir:13:11",
            "\tbreakpoint already hit 2 times"
        ]
    );
    assert_eq!(r[9].1, ["error: no breakpoint number 2"]);
    assert_eq!(r[11].1, ["[sum_squares returned]", "result[0]: i32=14"]);
}

#[test]
fn set_var_changes_a_register_and_the_program_goes_on_with_it() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=12".into()];
    // First stop: k = 0, (x, y) = (0, 1). With k = 10 two iterations are
    // left: fib returns 1, not 144.
    let script = "set var %i1 = 10\nbreak fib.mlir:12\nrun\nset var %i1 = 10\np %i1\n\
                  print %i4 = 2.5\nset var %i4 = 5000000000\nset var %i4 = 4294967295\np %i4\n\
                  set var %i4 = %i2\nset var %i4 == 3\nset %i4 = 3\nset var %i99 = 1\n\
                  set var %r0 = 1\nset var %i4 = %i0 > 1\ndelete\ncontinue\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1, ["error: the program is not being run (use `run`)"]);
    assert!(r[3].1.is_empty(), "{:?}", r[3].1);
    assert_eq!(r[4].1, ["$1 = 10"]);
    // An integer register takes a float's integer part, as C assigns.
    assert_eq!(r[5].1, ["$2 = 2"]);
    assert_eq!(r[6].1, ["error: 5000000000 is out of range for %i4 (i32)"]);
    assert_eq!(r[8].1, ["$3 = -1"]);
    assert!(r[9].1.is_empty(), "{:?}", r[9].1);
    assert_eq!(r[10].1, ["error: usage: set var REGISTER = VALUE"]);
    assert_eq!(r[11].1, ["error: usage: set var REGISTER = VALUE"]);
    assert_eq!(
        r[12].1,
        ["error: %i99 is out of range (the frame has 6 i32 registers)"]
    );
    assert_eq!(
        r[13].1,
        ["error: %r0 is out of range (the frame has 0 ref registers)"]
    );
    // A comparison is an `int` (1 here), as C and gdb assign it.
    assert!(r[14].1.is_empty(), "{:?}", r[14].1);
    // %i4 = %i2 (the constant 1): y = 1 when the loop goes on.
    assert_eq!(r[16].1, ["[fib returned]", "result[0]: i32=1"]);
}

/// An integer literal is stored exactly, to the edges of the register's
/// range: past i64 the expression reads it as an f64, which refused
/// u64::MAX for an i64, took -2^63 - 1 as -2^63, and a hex literal wrapped
/// to 64 bits (0xffffffffffffffff into an i32 stored -1).
#[test]
fn set_var_takes_integer_literals_exactly() {
    let spin = format!("--module={}", data("spin.vmfb").display());
    let args = [spin, "--function=spin".into(), "--input=1000000".into()];
    // spin's bound n is %i0:1 (i64); %i10 an i32.
    let script = "break spin.mlir:13\nrun\nset var %i0:1 = 18446744073709551615\np %i0:1\n\
                  set var %i0:1 = 18446744073709551616\nset var %i0:1 = -9223372036854775809\n\
                  set var %i10 = 0xffffffffffffffff\nset var %i10 = -0xffffffffffffffff\n\
                  set var %i0:1 = 0x3\ndelete\ncontinue\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert!(r[2].1.is_empty(), "{:?}", r[2].1);
    assert_eq!(r[3].1, ["$1 = -1"]);
    assert_eq!(
        r[4].1,
        ["error: 18446744073709551616 is out of range for %i0:1 (i64)"]
    );
    assert_eq!(
        r[5].1,
        ["error: -9223372036854775809 is out of range for %i0:1 (i64)"]
    );
    assert_eq!(
        r[6].1,
        ["error: 18446744073709551615 is out of range for %i10 (i32)"]
    );
    assert_eq!(
        r[7].1,
        ["error: -18446744073709551615 is out of range for %i10 (i32)"]
    );
    // n = 3: (0 ^ 3) + (1 ^ 3) + (2 ^ 3).
    assert_eq!(r[10].1, ["[spin returned]", "result[0]: i64=6"]);
}

/// `Context::set_frame_i32` (what `set var` uses) writes a paused frame's
/// register and the call goes on with it, in the compiled loop (no fuel)
/// and in the hooked one: spin's bound `n` (%i0:1) lowered to a few past
/// the counter (%i2:3) ends the loop there, with the sum up to the new
/// bound. Refs cannot be named; frames past the stack are refused.
#[test]
fn a_paused_frames_registers_can_be_set_and_the_call_goes_on_with_them() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let n: i64 = 400_000_000;
    for fuel in [None, Some(u64::MAX)] {
        let module = irvm::Module::from_file(data("spin.vmfb")).expect("module");
        let mut ctx = irvm::Context::new(&irvm::TypeRegistry::new());
        ctx.register_module(module).expect("registers");
        ctx.set_fuel(fuel);
        assert!(!ctx.set_frame_i32(0, 0, 1), "no call is suspended");
        let flag = Arc::new(AtomicBool::new(false));
        ctx.set_pause_flag(Some(flag.clone()));
        let f = ctx.function("module.spin").expect("spin");
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(20));
                flag.store(true, Ordering::Relaxed);
            })
        };
        let state = ctx.begin_call(&f, &[irvm::Value::I64(n)]).expect("runs");
        setter.join().expect("setter");
        assert!(matches!(state, irvm::CallState::Paused), "fuel {fuel:?}");
        let regs = ctx.frames()[0].i32s.clone();
        let counter = regs[2] as u64 | (regs[3] as u64) << 32;
        let bound = counter + 3;
        assert!(ctx.set_frame_i32(0, 0, bound as u32));
        assert!(ctx.set_frame_i32(0, 1, (bound >> 32) as u32));
        assert!(!ctx.set_frame_i32(1, 0, 0), "there is one frame");
        assert!(!ctx.set_frame_i32(0, regs.len(), 0), "past the registers");
        ctx.set_pause_flag(None);
        let expected = (0..bound as i64).fold(0i64, |acc, i| acc.wrapping_add(i ^ 3));
        match ctx.resume().expect("resumes") {
            irvm::CallState::Done(values) => assert!(
                matches!(values.as_slice(), [irvm::Value::I64(v)] if *v == expected),
                "fuel {fuel:?}: {values:?}, expected {expected} (bound {bound})"
            ),
            _ => panic!("not done"),
        }
    }
}

#[test]
fn x_examines_the_bytes_of_buffers_and_tensors() {
    let add = format!(
        "--module={}",
        crate::common::paths::repo_file("tests/models/add.vmfb")
    );
    let args = [
        add,
        "--function=add".into(),
        "--input=2x3xf32=1,2,3,4,5,6".into(),
        "--input=2x3xf32=10".into(),
    ];
    let script = "x/2fw %r0\nstart\nx/6fw %r0\nx/4xb %r1+4\nx/2dh %r0+0x2\nx/2fw %r0+20\n\
                  x/2fw %r0+24\nx %i0\nx/2fb %r0\nx %r2\nx/2q %r0\nx/1tb %r0+3\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1, ["error: the program is not being run (use `run`)"]);
    assert_eq!(r[2].1, ["%r0+0x0:\t1\t2\t3\t4", "%r0+0x10:\t5\t6"]);
    // 10.0f32 is 0x41200000, little-endian.
    assert_eq!(r[3].1, ["%r1+0x4:\t0x00\t0x00\t0x20\t0x41"]);
    // The high half of 1.0f32 (0x3f80) then the low half of 2.0f32.
    assert_eq!(r[4].1, ["%r0+0x2:\t16256\t0"]);
    assert_eq!(
        r[5].1,
        [
            "%r0+0x14:\t6",
            "(the contents end at byte 24: 1 of 2 units shown)"
        ]
    );
    assert_eq!(
        r[6].1,
        ["error: %r0+0x18 is past the contents' end (byte 24)"]
    );
    assert_eq!(
        r[7].1,
        ["error: x examines the contents of a ref register (%rN), not %i0"]
    );
    assert_eq!(
        r[8].1,
        ["error: x/f reads floats of 4 (w) or 8 (g) bytes: give the unit"]
    );
    assert_eq!(r[9].1, ["error: the ref is null"]);
    assert_eq!(
        r[10].1,
        ["error: x: unknown letter `q` (formats x d u t f, units b h w g)"]
    );
    assert_eq!(r[11].1, ["%r0+0x3:\t00111111"]);
}

#[test]
fn source_names_in_print_watch_set_conditions_and_info_locals() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=12".into()];
    // Line 14 (the yield): %k1 is %i1, %next is %i5 (each shared).
    let script = "break fib.mlir:14 if %k1 == 2\nrun\ninfo locals\nprint %next\np/x %k1 == 2\n\
                  watch %next\nset var %k1 = %n\nprint %one = 1\np %nosuch\n\
                  condition 1 %nosuch > 1\ndelete 1\ncontinue\ninfo breakpoints\ndelete\ncontinue\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(
        r[1].1[0],
        "Breakpoint 1, fib (module.fib+0x00000041) at fib.mlir:14:5"
    );
    assert_eq!(
        r[2].1,
        [
            "%k1 = 2  (%i1, shared with %zero)",
            "%more = 2  (%i5, shared with %next)",
            "%n = 12  (%i0)",
            "%next = 2  (%i5, shared with %more)",
            "%one = 1  (%i2)",
            "%zero = 2  (%i1, shared with %k1)"
        ]
    );
    assert_eq!(r[3].1, ["$1 = 2"]);
    assert_eq!(r[4].1, ["$2 = 0x1"]);
    assert_eq!(r[5].1, ["Watchpoint 2: %next (%i5)"]);
    assert!(r[6].1.is_empty(), "{:?}", r[6].1);
    assert_eq!(r[7].1, ["$3 = 1"]);
    let unknown = "error: `%nosuch` is neither a register nor a source name of this function";
    assert_eq!(r[8].1, [unknown]);
    assert_eq!(r[9].1, [unknown]);
    // %k1 = n: the loop ends after this iteration; %next is then reused.
    assert_eq!(
        r[11].1[..3],
        [
            "Watchpoint 2: %next (%i5)",
            "Old value = 2",
            "New value = 0"
        ]
    );
    assert_eq!(
        r[12].1[1],
        "2       watchpoint     keep y   %next (%i5) in fib (frame #0)"
    );
    // fib(12) with the count set to 12 at k = 2: x is 1.
    assert_eq!(r[14].1, ["[fib returned]", "result[0]: i32=1"]);
}

/// A watchpoint that fires where a breakpoint is: both stop the program and
/// both count the hit, as in gdb (the breakpoint's hits were lost).
#[test]
fn a_watchpoint_firing_at_a_breakpoint_reports_and_counts_both() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=12".into()];
    let (out, code) = dbg(
        &args,
        "tbreak fib.mlir:13\nbreak fib.mlir:14\nrun\nwatch %i1\ncontinue\ncontinue\ninfo breakpoints\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    // %i1 changes on line 13; line 14's first instruction has breakpoint 2.
    let both = |old: i32, new: i32| {
        vec![
            "Watchpoint 3: %i1".to_string(),
            format!("Old value = {old}"),
            format!("New value = {new}"),
            "Breakpoint 2, fib (module.fib+0x00000041) at fib.mlir:14:5".to_string(),
            "14\t    scf.yield %k1, %y, %next : i32, i32, i32".to_string(),
        ]
    };
    assert_eq!(r[4].1, both(0, 1));
    assert_eq!(r[5].1, both(1, 2));
    assert_eq!(
        r[6].1,
        [
            "Num     Type           Disp Enb What",
            "2       breakpoint     keep y   fib (module.fib+0x00000041) at fib.mlir:14:5",
            "\tbreakpoint already hit 2 times",
            "3       watchpoint     keep y   %i1 in fib (frame #0)",
            "\tbreakpoint already hit 2 times"
        ]
    );
}

/// `display` takes source names as `print` does: looked up again at each
/// stop, and left out where they name nothing (a callee without them), as
/// gdb leaves out a display whose variables are out of scope; displays are
/// turned off and on, and deleted, by number.
#[test]
fn display_takes_source_names_and_displays_are_enabled_and_deleted() {
    let calls = format!("--module={}", data("calls.vmfb").display());
    let args = [calls, "--function=sum_squares".into(), "--input=3".into()];
    let script = "display %n\nbreak calls.mlir:13\nrun\ndisplay/x %n\ndisplay %sq\n\
                  display %i0\ndisplay %nosuch\nstep\nfinish\ndisable display 1 3\ninfo display\n\
                  next\nenable display\ndelete display 2\nundisplay 9\ninfo display\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    let unknown = "error: `%n` is neither a register nor a source name of this function";
    assert_eq!(r[0].1, [unknown], "not running: no names");
    assert_eq!(r[3].1, ["1: /x %n = 0x3"]);
    // Before the call: the register %sq will get, holding what it holds.
    assert_eq!(r[4].1, ["2: %sq = 1"]);
    // A register's spelling stays the register, as in `print`.
    assert_eq!(r[5].1, ["3: %i0 = 3"]);
    assert_eq!(
        r[6].1,
        ["error: `%nosuch` is neither a register nor a source name of this function"]
    );
    // In the callee (no source names) only the register's display shows.
    assert_eq!(
        r[7].1,
        [
            "fn1 (module.fn1+0x00000001)",
            "=> %i0 = vm.mul.i32 %i0, %i0",
            "3: %i0 = 0"
        ]
    );
    // Back in the caller the names mean their registers there again.
    assert_eq!(
        r[8].1[1..],
        [
            "sum_squares (module.sum_squares+0x0000003C) at calls.mlir:14:13",
            "14\t    %acc1 = arith.addi %acc, %sq : i32",
            "Value returned is $1 = 0",
            "1: /x %n = 0x3",
            "2: %sq = 0",
            "3: %i0 = 3"
        ]
    );
    assert_eq!(
        r[10].1,
        [
            "Auto-display expressions now in effect:",
            "Num Enb Expression",
            "1:   n  /x %n",
            "2:   y  %sq",
            "3:   n  %i0"
        ]
    );
    assert_eq!(r[11].1[2..], ["2: %sq = 0"]);
    assert_eq!(r[14].1, ["error: no display number 9"]);
    assert_eq!(
        r[15].1,
        [
            "Auto-display expressions now in effect:",
            "Num Enb Expression",
            "1:   y  /x %n",
            "3:   y  %i0"
        ]
    );
}

/// gdb's `delete A-B` ranges (a missing number reported, the others still
/// deleted), `info watchpoints` and `backtrace full` (each frame's locals).
#[test]
fn delete_ranges_info_watchpoints_and_backtrace_full() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=3".into()];
    let script = "break 12\nbreak 13\nbreak fib.mlir:14\nrun\ninfo watchpoints\nwatch %next\n\
                  info watchpoints\nbt full\nbacktrace sideways\ndelete 1-2 5\ninfo breakpoints\n\
                  delete 3-1\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(r[4].1, ["No watchpoints."]);
    assert_eq!(
        r[6].1,
        [
            "Num     Type           Disp Enb What",
            "4       watchpoint     keep y   %next (%i5) in fib (frame #0)"
        ]
    );
    assert_eq!(
        r[7].1,
        [
            "#0  fib (module.fib+0x00000033) at fib.mlir:12:13",
            "        called from fib.mlir:3:1",
            "        %k1 = 0  (%i1, shared with %zero)",
            "        %more = 1  (%i5, shared with %next)",
            "        %n = 3  (%i0)",
            "        %next = 1  (%i5, shared with %more)",
            "        %one = 1  (%i2)",
            "        %zero = 0  (%i1, shared with %k1)"
        ]
    );
    assert_eq!(
        r[8].1,
        ["error: unknown backtrace argument `sideways` (full, N or -N)"]
    );
    assert_eq!(r[9].1, ["error: no breakpoint number 5"]);
    assert_eq!(
        r[10].1,
        [
            "Num     Type           Disp Enb What",
            "3       breakpoint     keep y   fib (module.fib+0x00000041) at fib.mlir:14:5",
            "4       watchpoint     keep y   %next (%i5) in fib (frame #0)"
        ]
    );
    assert_eq!(r[11].1, ["error: inverted breakpoint range 3-1"]);
}

/// Ctrl-C while a module's `__init` runs (an endless loop here) pauses it
/// there, as in any function: `bt` shows the initializer, and the session
/// goes on (before, `__init` ran before the debugger was ready, and
/// Ctrl-C ended `irvm dbg`).
#[test]
fn sigint_pauses_a_looping_init() {
    use std::io::BufRead;
    use std::sync::mpsc::RecvTimeoutError;
    use std::time::{Duration, Instant};
    let dir = std::env::temp_dir().join(format!("irvm-dbg-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let module = dir.join("m.vmasm");
    std::fs::write(
        &module,
        "vm.module @m version 0\n\nvm.export @__init\n\
         vm.func @__init() -> () {\n^bb0:\n  %i0 = vm.const.i32 1\n  vm.br ^bb1()\n^bb1:\n  \
         vm.cond_br %i0, ^bb1(), ^bb2()\n^bb2:\n  vm.return\n}\n\nvm.export @f\n\
         vm.func @f() -> () {\n^bb0:\n  vm.return\n}\n",
    )
    .expect("module");
    let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "dbg".to_string(),
            format!("--module={}", module.display()),
            "--function=f".into(),
            "--interruptible".into(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("irvm dbg starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let pid = child.id() as i32;
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    stdin.write_all(b"run\n").expect("run");
    stdin.flush().expect("flush");
    let mut seen: Vec<String> = Vec::new();
    let start = Instant::now();
    // SIGINT each 100 ms until the stop is reported (one that comes before
    // `run` is read is stale, and dropped).
    while !seen
        .iter()
        .any(|l| l.contains("Program received signal SIGINT"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no stop within 20 s: {seen:?}"
        );
        if seen.iter().any(|l| l == "(irvm) run") {
            // SAFETY: signalling our own child process.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
        }
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => seen.push(line),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => panic!("irvm dbg ended early: {seen:?}"),
        }
    }
    stdin.write_all(b"bt\nkill\nquit\n").expect("commands");
    drop(stdin);
    let status = child.wait().expect("exit");
    let rest: Vec<String> = lines.iter().collect();
    assert!(status.success(), "{seen:?} {rest:?}");
    let r = replies(&rest.iter().map(|l| format!("{l}\n")).collect::<String>());
    assert_eq!(r[0].0, "bt");
    assert!(r[0].1[0].starts_with("#0  __init (m.__init+0x"), "{r:?}");
    assert_eq!(r[1].1, ["[Inferior 1 killed]"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `start` runs the modules' initializers first and stops before the
/// function's first instruction (gdb's `start` stops in `main`, after the
/// program's constructors); `kill` and `run` again go on after them.
#[test]
fn start_stops_in_the_function_after_the_initializers() {
    let module = format!(
        "--module={}",
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/models/dynamic.vmfb")
            .display()
    );
    let (out, status) = dbg(
        &[
            module,
            "--function=dynamic".into(),
            "--input=2x2xf32=3".into(),
        ],
        "start\nbt\nkill\nbreak dynamic.mlir:2\nstart\ninfo breakpoints\ncontinue\ncontinue\n\
         continue\n",
    );
    assert_eq!(status, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1[0], "dynamic (module.dynamic+0x00000001)");
    assert_eq!(r[1].1, ["#0  dynamic (module.dynamic+0x00000001)"]);
    // `start` after `kill` starts the program afresh: the initializer runs
    // again and stops at the breakpoint in it (two of its locations), then
    // the entry stop.
    assert_eq!(
        r[4].1[0],
        "Breakpoint 1, __init (module.__init+0x00000265) at dynamic.mlir:2:8"
    );
    assert!(
        r[5].1.iter().any(|l| l.contains("already hit 1 time")),
        "{:?}",
        r[5].1
    );
    assert_eq!(r[7].1[0], "dynamic (module.dynamic+0x00000001)");
    assert!(out.contains("2x2xf32=[9 9][9 9]"), "{out}");
}

/// gdb's `commands`: a breakpoint's command list runs when it stops the
/// program (`silent` hides the stop; a `continue` in it ends the list and
/// the next stop's list runs), `info breakpoints` lists it, an empty list
/// removes it.
#[test]
fn breakpoint_command_lists_run_at_their_stops() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=5".into()];
    let script =
        "commands\nbreak fib.mlir:14 if %k1 < 3\ncommands\nsilent\nprint %next\ncontinue\n\
                  end\ntbreak 13\ncommands 2\nbt\nend\ninfo breakpoints\nrun\ncontinue\n\
                  commands 9\nrun\ncommands 1\nend\ninfo breakpoints\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1, ["error: No breakpoints specified."]);
    assert_eq!(
        r[11].1,
        [
            "Num     Type           Disp Enb What",
            "1       breakpoint     keep y   fib (module.fib+0x00000041) at fib.mlir:14:5",
            "\tstop only if %i1 < 3",
            "        silent",
            "        print %next",
            "        continue",
            "2       breakpoint     del  y   fib (module.fib+0x0000003A) at fib.mlir:13:11",
            "        bt"
        ]
    );
    // The temporary breakpoint's list: a backtrace after the stop.
    assert_eq!(
        r[12].1,
        [
            "Temporary breakpoint 2, fib (module.fib+0x0000003A) at fib.mlir:13:11",
            "13\t    %k1 = arith.addi %k, %one : i32",
            "#0  fib (module.fib+0x0000003A) at fib.mlir:13:11",
            "        called from fib.mlir:3:1"
        ]
    );
    // Silent stops at k1 = 1 and 2, each printing and going on.
    assert_eq!(
        r[13].1,
        ["$1 = 1", "$2 = 2", "[fib returned]", "result[0]: i32=5"]
    );
    assert_eq!(r[14].1, ["error: No breakpoint number 9."]);
    assert_eq!(
        r[15].1,
        ["$3 = 1", "$4 = 2", "[fib returned]", "result[0]: i32=5"]
    );
    assert_eq!(
        r[18].1,
        [
            "Num     Type           Disp Enb What",
            "1       breakpoint     keep y   fib (module.fib+0x00000041) at fib.mlir:14:5",
            "\tstop only if %i1 < 3",
            "\tbreakpoint already hit 4 times"
        ]
    );
}

/// gdb's `echo`: C escapes, no newline of its own (what command lists use
/// to label what they print).
#[test]
fn echo_prints_its_text_with_c_escapes() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=2".into()];
    let script = "echo k is \\n\necho a\\tb\\\\c\\q\\n\nbreak fib.mlir:14\ncommands\nsilent\n\
                  echo [stop]\\n\nprint %next\ncontinue\nend\nrun\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1, ["k is "]);
    assert_eq!(r[1].1, ["a\tb\\cq"]);
    assert_eq!(
        r[9].1,
        [
            "[stop]",
            "$1 = 1",
            "[stop]",
            "$2 = 2",
            "[fib returned]",
            "result[0]: i32=1"
        ]
    );
}

/// A number list's bad word is named whole (`delete -1` said "`` is not a
/// breakpoint number"), and display commands speak of displays (they said
/// "breakpoint").
#[test]
fn bad_numbers_and_ranges_are_named_whole() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=3".into()];
    let script = "delete -1\ndelete 2-\ndelete 1-99999999999999999999\ndelete x\n\
                  undisplay 2-1\ndisable display -\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 1, "{out}");
    let r = replies(&out);
    let errors: Vec<&str> = r.iter().map(|(_, lines)| lines[0].as_str()).collect();
    assert_eq!(
        errors,
        [
            "error: `-1` is not a breakpoint number or range (N or A-B)",
            "error: `2-` is not a breakpoint number or range (N or A-B)",
            "error: `1-99999999999999999999` is not a breakpoint number or range (N or A-B)",
            "error: `x` is not a breakpoint number",
            "error: inverted display range 2-1",
            "error: `-` is not a display number or range (N or A-B)"
        ]
    );
}

/// A module whose `__init` fails: the program stops there, and `continue`
/// ends it with `irvm run`'s report (`module 'm' failed to initialize`);
/// it said `[f failed]`, naming the function that never began.
#[test]
fn a_failing_init_is_reported_as_irvm_run_reports_it() {
    let dir = std::env::temp_dir().join(format!("irvm-dbg-init-fails-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let module = dir.join("m.vmasm");
    std::fs::write(
        &module,
        "vm.module @m version 0\n\nvm.export @__init\nvm.func @__init() -> () {\n^bb0:\n  \
         %i0 = vm.const.i32 3\n  vm.fail %i0, \"init refused\"\n}\n\nvm.export @f\n\
         vm.func @f() -> () {\n^bb0:\n  vm.return\n}\n",
    )
    .expect("module");
    let args = [
        format!("--module={}", module.display()),
        "--function=f".into(),
    ];
    let (out, code) = dbg(&args, "run\ncontinue\n");
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1[0], "Program stopped: INVALID_ARGUMENT: init refused");
    assert_eq!(
        r[1].1,
        [
            "[module 'm' failed to initialize]",
            "irvm dbg: module 'm' failed to initialize: INVALID_ARGUMENT; init refused",
            "  [0] m.__init+0x00000008"
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `commands` inside a command list is nested, as gdb nests them: its
/// lines and its own `end` belong to the outer list, and when the outer
/// list runs it sets the inner breakpoint's list. The first `end` closed
/// the outer list (the second was an unknown command), and the stored
/// `commands` failed at every stop.
#[test]
fn command_lists_nest() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=3".into()];
    let script = "break fib.mlir:14\ntbreak fib.mlir:12\ncommands 2\nsilent\necho [two]\\n\n\
                  commands 1\nsilent\nprint %k1\nend\ncontinue\nend\ninfo breakpoints\nrun\n\
                  continue\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[11].0, "info breakpoints", "{out}");
    assert_eq!(
        r[11].1[3..],
        [
            "        silent",
            "        echo [two]\\n",
            "        commands 1",
            "        silent",
            "        print %k1",
            "        end",
            "        continue"
        ]
    );
    assert_eq!(r[12].1, ["[two]", "$1 = 1"]);
    assert_eq!(r[13].1, ["$2 = 2"]);
}

/// `echo` reads escapes as gdb 13 does (its output recorded here): octal
/// `\101` is `A` (at most three digits: `\1234` is `S4`; `\0` prints
/// nothing), `\b`, `\f` and `\v` are control characters, `\x41` is
/// `x41`, and the blanks after `echo` are skipped (`\ ` keeps one).
/// irvm printed `101`, `b`, `f`, `v` and the blanks.
#[test]
fn echo_reads_octal_escapes_and_skips_leading_blanks_as_gdb_does() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=2".into()];
    let script = "echo \\x41\\101|\\n\necho    lead|\\n\necho \\b\\f\\v|\\n\n\
                  echo \\1234\\0|\\n\necho \\ \\ x|\\n\n";
    let (out, code) = dbg(&args, script);
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1, ["x41A|"]);
    assert_eq!(r[1].1, ["lead|"]);
    assert_eq!(r[2].1, ["\u{8}\u{c}\u{b}|"]);
    assert_eq!(r[3].1, ["S4|"]);
    assert_eq!(r[4].1, ["  x|"]);
}

/// Every command `irvm dbg` knows (its completion list, which `help`
/// describes) is named in the README's `irvm dbg` section, and every
/// command the help text describes is one it knows.
#[test]
fn the_readme_names_every_command() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=2".into()];
    let (out, _) = dbg(&args, "complete \nhelp\n");
    let r = replies(&out);
    let commands: Vec<&str> = r[0].1.iter().map(|c| c.trim()).collect();
    assert!(commands.contains(&"commands"), "{commands:?}");
    let readme =
        std::fs::read_to_string(crate::common::paths::repo_file("README.md")).expect("README");
    let start = readme.find("### `irvm dbg`").expect("dbg section");
    let end = readme.find("### `irvm dap`").expect("dap section");
    let section = &readme[start..end];
    for c in &commands {
        assert!(
            section.contains(&format!("`{c}")),
            "`{c}` is not in the README's irvm dbg section"
        );
    }
    // The help text's commands: the first word of each described line.
    for line in r[1].1.iter().skip(1) {
        // (Continuation lines are indented further.)
        let Some(first) = line
            .strip_prefix("  ")
            .filter(|l| !l.starts_with(' '))
            .and_then(|l| l.split_whitespace().next())
        else {
            continue;
        };
        let first = first.split(['/', '[']).next().unwrap_or(first);
        for word in first.split('|') {
            assert!(
                commands.contains(&word),
                "help describes `{word}`, which is no command: {line}"
            );
        }
    }
}

/// gdb's `info source` (the selected frame's file, where it was found, its
/// length) and `info all-registers` (the registers, as `info registers`).
#[test]
fn info_source_and_all_registers() {
    let fib = format!("--module={}", data("fib.vmfb").display());
    let args = [fib, "--function=fib".into(), "--input=2".into()];
    let (out, _) = dbg(
        &args,
        "info source\nbreak 12\nrun\ninfo source\ninfo all-registers\ninfo registers\n",
    );
    let r = replies(&out);
    assert_eq!(r[0].1, ["No current source file."]);
    assert_eq!(r[3].1[0], "Current source file is fib.mlir");
    assert!(
        r[3].1[1].starts_with("Located in /") && r[3].1[1].ends_with("tests/data/fib.mlir"),
        "{:?}",
        r[3].1
    );
    assert_eq!(r[3].1[2], "Contains 17 lines.");
    assert_eq!(r[4].1, r[5].1);
    assert_eq!(r[4].1[0], "%i0      i32  2");
}

/// `tests/data/dbg/twin_lib.vmasm` and `twin_app.vmasm`, linked: their
/// functions share internal ordinals and offsets (`lib.__init` and
/// `app.__init`; `lib.f` and `app.main`).
fn twin_args() -> Vec<String> {
    vec![
        format!("--module={}", data("dbg/twin_lib.vmasm").display()),
        format!("--module={}", data("dbg/twin_app.vmasm").display()),
        "--function=main".into(),
        "--input=3".into(),
    ]
}

/// A breakpoint stops only in its own module, though another module's
/// function at the same ordinal and offset runs first (`lib.__init` before
/// `app.__init`, `app.main` before `lib.f`): function, line, temporary and
/// conditional breakpoints, and hit counts.
#[test]
fn breakpoints_stop_only_in_their_own_module() {
    let (out, code) = dbg(
        &twin_args(),
        "break app.__init\nbreak lib.f\nrun\nbt\ncontinue\nbt\ncontinue\ninfo breakpoints\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[2].1[0], "Breakpoint 1, __init (app.__init+0x00000001)");
    assert_eq!(r[3].1, ["#0  __init (app.__init+0x00000001)"]);
    assert_eq!(
        r[4].1[0],
        "Breakpoint 2, f (lib.f+0x00000001) at twin.src:3:3"
    );
    assert_eq!(
        r[5].1,
        [
            "#0  f (lib.f+0x00000001) at twin.src:3:3",
            "#1  main (app.main+0x00000001)"
        ]
    );
    assert_eq!(r[6].1, ["[main returned]", "result[0]: i32=6"]);
    let hits: Vec<&String> = r[7].1.iter().filter(|l| l.contains("hit")).collect();
    assert_eq!(
        hits,
        [
            "\tbreakpoint already hit 1 time",
            "\tbreakpoint already hit 1 time"
        ],
        "{:?}",
        r[7].1
    );

    // `%i0 == 3` holds in `app.main` too, at lib.f's ordinal and offset.
    let (out, code) = dbg(
        &twin_args(),
        "break twin.src:3 if %i0 == 3\ntbreak app.__init\nrun\ncontinue\ncontinue\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(
        r[2].1[0],
        "Temporary breakpoint 2, __init (app.__init+0x00000001)"
    );
    assert_eq!(
        r[3].1[0],
        "Breakpoint 1, f (lib.f+0x00000001) at twin.src:3:3"
    );
    assert_eq!(r[4].1, ["[main returned]", "result[0]: i32=6"]);

    // A bare FUNCTION is every module's function of that name; `*OFFSET`
    // is in the entry function before `run`, then in the selected frame's
    // function (`lib.__init`), not also in `app.__init`, whose `vm.return`
    // is at the same offset.
    let (out, code) = dbg(
        &twin_args(),
        "break *0x1\nbreak __init\nrun\nbreak *0x8\ncontinue\ncontinue\ncontinue\ncontinue\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(
        r[0].1,
        ["Breakpoint 1 at main (app.main+0x00000001) (1 location)"]
    );
    assert_eq!(
        r[1].1,
        ["Breakpoint 2 at __init (lib.__init+0x00000001) (2 locations)"]
    );
    assert_eq!(r[2].1[0], "Breakpoint 2, __init (lib.__init+0x00000001)");
    assert_eq!(
        r[3].1,
        ["Breakpoint 3 at __init (lib.__init+0x00000008) (1 location)"]
    );
    assert_eq!(r[4].1[0], "Breakpoint 3, __init (lib.__init+0x00000008)");
    assert_eq!(r[5].1[0], "Breakpoint 2, __init (app.__init+0x00000001)");
    assert_eq!(r[6].1[0], "Breakpoint 1, main (app.main+0x00000001)");
    assert_eq!(r[7].1, ["[main returned]", "result[0]: i32=6"]);
}

/// A watchpoint in an initializer's frame ends when that frame returns:
/// the program stops before the next call's first instruction to say so
/// (with a breakpoint there, both are reported), and the next function,
/// whose frame is at the same depth, is not watched in its place.
#[test]
fn a_watchpoint_in_an_initializer_ends_with_its_frame() {
    let left = [
        "Watchpoint 2 deleted because the program has left the block in",
        "which its expression is valid.",
        "__init (app.__init+0x00000001)",
        "=> %i0 = vm.const.i32 7  // 0x00000007",
    ];
    let (out, code) = dbg(
        &twin_args(),
        "break lib.__init\nrun\nwatch %i0\ncontinue\ncontinue\nbt\ninfo watchpoints\ncontinue\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[3].1[1..3], ["Old value = 0", "New value = 7"]);
    assert_eq!(r[4].1, left);
    assert_eq!(r[5].1, ["#0  __init (app.__init+0x00000001)"]);
    assert_eq!(r[6].1, ["No watchpoints."]);
    assert_eq!(r[7].1, ["[main returned]", "result[0]: i32=6"]);

    let (out, code) = dbg(
        &twin_args(),
        "break lib.__init\nbreak app.__init\nrun\nwatch %i0\ncontinue\ncontinue\ncontinue\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(
        r[5].1,
        [
            "Watchpoint 3 deleted because the program has left the block in",
            left[1],
            "Breakpoint 2, __init (app.__init+0x00000001)",
            left[3]
        ]
    );
    assert_eq!(r[6].1, ["[main returned]", "result[0]: i32=6"]);
}

/// Each `run` starts the program afresh, as gdb starts a new process: the
/// modules' globals as registered and every `__init` again, so a second
/// `run`, or one after `kill` inside an `__init`, computes what `irvm run`
/// computes (101; the globals were kept: 102, and 201 after the `kill`).
#[test]
fn each_run_starts_the_program_afresh() {
    let args = [
        format!("--module={}", data("dbg/counter.vmasm").display()),
        "--function=main".into(),
    ];
    let done = ["[main returned]", "result[0]: i32=101"];
    let (out, code) = dbg(&args, "run\nrun\nstart\ncontinue\n");
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r[0].1, done, "{out}");
    assert_eq!(r[1].1, done, "{out}");
    assert_eq!(r[3].1, done, "{out}");
    let (out, code) = dbg(
        &args,
        "break __init\nrun\nstepi\nstepi\nstepi\nstepi\nkill\ndelete\nrun\n",
    );
    assert_eq!(code, 0, "{out}");
    let r = replies(&out);
    assert_eq!(r.last().expect("replies").1, done, "{out}");
}
