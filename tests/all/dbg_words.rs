//! gdb's words `irvm dbg` takes besides the basic ones: `nexti`,
//! `ptype`/`whatis`, `output`, `printf`, `info line`.

use crate::common::paths::data;

/// Runs `irvm dbg` with `args` and `script` on stdin: the lines after
/// each echoed `(irvm) CMD`, by command, and the exit code.
fn session(args: &[String], script: &str) -> (Vec<(String, String)>, i32) {
    let (text, code) = crate::dbg::dbg(args, script);
    // Split at each prompt; what follows a command (up to the next
    // prompt, which `output` and `printf` may share a line with) is its
    // reply.
    let mut replies = Vec::new();
    for part in text.split("(irvm) ").skip(1) {
        let (command, reply) = part.split_once('\n').unwrap_or((part, ""));
        replies.push((command.to_string(), reply.to_string()));
    }
    (replies, code)
}

fn args(module: &str, function: &str, input: &str) -> Vec<String> {
    vec![
        format!("--module={}", data(module).display()),
        format!("--function={function}"),
        format!("--input={input}"),
    ]
}

/// `nexti` executes one instruction, running a call to its return
/// (`stepi` enters it).
#[test]
fn nexti_steps_over_calls_where_stepi_enters_them() {
    let (r, code) = session(
        &args("calls.vmfb", "sum_squares", "4"),
        "break calls.mlir:13\nrun\nnexti\nni\ncontinue\nstepi\nnexti\nnexti\nnexti\n",
    );
    assert_eq!(code, 0, "{r:?}");
    let first = |k: usize| r[k].1.lines().next().unwrap_or("").to_string();
    // Over the call of line 13, to the next instruction (line 14).
    assert_eq!(
        first(2),
        "sum_squares (module.sum_squares+0x0000003C) at calls.mlir:14:13"
    );
    assert_eq!(
        first(3),
        "sum_squares (module.sum_squares+0x00000043) at calls.mlir:15:11"
    );
    // stepi enters the callee; nexti goes on there, then out to the caller.
    assert_eq!(first(5), "fn1 (module.fn1+0x00000001)");
    assert_eq!(first(6), "fn1 (module.fn1+0x00000008)");
    assert_eq!(
        first(7),
        "sum_squares (module.sum_squares+0x0000003C) at calls.mlir:14:13"
    );
}

/// gdb's counts: `nexti N`, `stepi N`, `next N`, `step N` take N steps,
/// showing the last; a breakpoint on the way ends them there; 0 does
/// nothing; a word is gdb's `No symbol`. The count was ignored (one step).
#[test]
fn step_commands_take_a_count() {
    let (r, code) = session(
        &args("calls.vmfb", "sum_squares", "4"),
        "break calls.mlir:13\nrun\nnexti 2\nstepi 0\nstepi 3\nnext 1000\nnexti foo\nkill\n",
    );
    assert_eq!(code, 1, "{r:?}");
    let first = |k: usize| r[k].1.lines().next().unwrap_or("").to_string();
    // Over the call of line 13 and one more instruction (line 15).
    assert_eq!(
        first(2),
        "sum_squares (module.sum_squares+0x00000043) at calls.mlir:15:11"
    );
    assert_eq!(r[3].1, "", "{r:?}");
    // The add, the branch, then the loop's test.
    assert_eq!(
        first(4),
        "sum_squares (module.sum_squares+0x0000001E) at calls.mlir:10:5"
    );
    // The next pass of the loop stops at the breakpoint, long before 1000.
    assert_eq!(
        r[5].1.lines().nth(1),
        Some("Breakpoint 1, sum_squares (module.sum_squares+0x0000002F) at calls.mlir:13:11"),
        "{r:?}"
    );
    assert_eq!(r[6].1, "error: No symbol \"foo\" in current context.\n");
}

/// gdb's `continue N`: the breakpoint stopped at is ignored N - 1 more
/// times (the count was ignored: the next crossing stopped).
#[test]
fn continue_with_a_count_ignores_the_breakpoint_that_many_times_less_one() {
    let (r, code) = session(
        &args("calls.vmfb", "sum_squares", "5"),
        "break calls.mlir:13\nrun\ncontinue 3\nprint %i1\ninfo breakpoints\nstepi\ncontinue 2\nkill\n",
    );
    assert_eq!(code, 0, "{r:?}");
    assert_eq!(
        r[2].1.lines().next(),
        Some("Will ignore next 2 crossings of breakpoint 1.  Continuing."),
        "{r:?}"
    );
    // Stopped at i = 0, then past i = 1 and 2, at i = 3.
    assert_eq!(r[3].1, "$1 = 3\n", "{r:?}");
    assert_eq!(
        r[6].1.lines().next(),
        Some("Not stopped at any breakpoint; argument ignored."),
        "{r:?}"
    );
}

/// `continue N` words the count as gdb's `ignore` does (N = 1: "Will stop
/// next time", N = 2: "next crossing"), and after the breakpoint stopped
/// at was deleted ignores the count and continues, as gdb does (it was an
/// error, `no breakpoint number 1`, and the program stayed stopped).
#[test]
fn continue_with_a_count_words_small_counts_and_survives_a_deleted_breakpoint() {
    let (r, code) = session(
        &args("calls.vmfb", "sum_squares", "5"),
        "break calls.mlir:13\nrun\ncontinue 1\nprint %i1\ncontinue 2\nprint %i1\ndelete 1\ncontinue 3\n",
    );
    assert_eq!(code, 0, "{r:?}");
    assert_eq!(
        r[2].1.lines().next(),
        Some("Will stop next time breakpoint 1 is reached.  Continuing."),
        "{r:?}"
    );
    assert_eq!(r[3].1, "$1 = 1\n", "{r:?}");
    assert_eq!(
        r[4].1.lines().next(),
        Some("Will ignore next crossing of breakpoint 1.  Continuing."),
        "{r:?}"
    );
    assert_eq!(r[5].1, "$2 = 3\n", "{r:?}");
    let last = &r[7].1;
    assert_eq!(
        last.lines().next(),
        Some("Not stopped at any breakpoint; argument ignored."),
        "{r:?}"
    );
    assert!(
        last.contains("returned]"),
        "the program runs to its end: {r:?}"
    );
}

/// `step 0`, `nexti -5` and the like before `run` say that there is no
/// program, as gdb does (they said nothing: a count of 0 or less skipped
/// the check each step makes).
#[test]
fn a_step_count_of_zero_without_a_program_says_there_is_none() {
    let (r, _) = session(
        &args("calls.vmfb", "sum_squares", "5"),
        "step 0\nnexti -5\nnext 0\n",
    );
    for (command, reply) in &r {
        assert_eq!(
            reply, "error: the program is not being run (use `run`)\n",
            "{command}: {r:?}"
        );
    }
    assert_eq!(r.len(), 3, "{r:?}");
}

/// `ptype`/`whatis` name a value's type; `output` prints the value alone;
/// `printf` formats values as C's printf; mistakes are gdb's messages.
#[test]
fn ptype_whatis_output_and_printf() {
    let script = "whatis %i0\nbreak 13\nrun\nptype %r0\nwhatis %r1\nptype %i8:9\nwhatis %i0 == 5\n\
                  whatis 7\nwhatis/x %i0\nptype\noutput %r0\necho |\\n\noutput/x %i14\necho |\\n\n\
                  printf \"[%s] %x %5ld|%-3d|%c %.1f%%\\n\", %r0, %i14, %i8:9, %i0, %i14, %i14\n\
                  printf \"%d\\n\", %r0\nprintf \"%d %d\\n\", %i0\nprintf \"%y\", %i0\nprintf %i0\n";
    let (r, _) = session(
        &[
            format!("--module={}", data("dbg/frames.vmasm").display()),
            "--function=main".into(),
            "--input=5".into(),
        ],
        script,
    );
    let replies: Vec<&str> = r.iter().map(|(_, reply)| reply.as_str()).collect();
    assert_eq!(
        replies[0],
        "error: the program is not being run (use `run`)\n"
    );
    assert_eq!(replies[3], "type = !vm.list<i32>\n");
    assert_eq!(replies[4], "type = !vm.buffer\n");
    assert_eq!(replies[5], "type = i64\n");
    assert_eq!(replies[6], "type = i32\n");
    assert_eq!(replies[7], "type = i32\n");
    assert_eq!(replies[8], "error: whatis takes no format (/x, ...)\n");
    assert_eq!(
        replies[9],
        "error: ptype needs an expression (a register, source name or number)\n"
    );
    // output: no newline of its own (the next prompt follows on its line).
    assert_eq!(replies[10], "!vm.list<i32>[3] {10, 20, 5}");
    assert_eq!(replies[12], "0x2a");
    assert_eq!(
        replies[14],
        "[!vm.list<i32>[3] {10, 20, 5}] 2a    20|5  |* 42.0%\n"
    );
    assert_eq!(
        replies[15],
        "error: Value of type !vm.list<i32> can't be converted to integer.\n"
    );
    assert_eq!(
        replies[16],
        "error: Wrong number of arguments for specified format-string\n"
    );
    assert_eq!(
        replies[17],
        "error: Unrecognized format specifier 'y' in printf\n"
    );
    assert_eq!(replies[18], "error: Bad format string, missing '\"'\n");
}

/// `info line` says where the code of the stop's line, or of a location's,
/// starts and ends.
#[test]
fn info_line_gives_the_lines_code_range() {
    let (r, code) = session(
        &args("fib.vmfb", "fib", "5"),
        "info line fib.mlir:12\ninfo line\nbreak fib.mlir:12\nrun\nstepi\ninfo line\n\
         info line 0\ninfo line fib.mlir:0\ninfo line fib.mlir:-3\ninfo line 99\n\
         info line 11\nbreak 0\nbreak fib.mlir:99\nlist 5,6\ninfo line\nframe\ninfo line\n",
    );
    assert_eq!(code, 1, "{r:?}");
    assert_eq!(
        r[0].1,
        "Line 12 of \"fib.mlir\" starts at address module.fib+0x00000033 <fib+51> and ends at \
         module.fib+0x0000003A <fib+58>.\n"
    );
    // Before `run`, with nothing listed, gdb has no line to describe.
    assert_eq!(r[1].1, "No line number information available.\n");
    assert_eq!(
        r[5].1,
        "Line 13 of \"fib.mlir\" starts at address module.fib+0x0000003A <fib+58> and ends at \
         module.fib+0x00000041 <fib+65>.\n"
    );
    // gdb's words for lines outside those with code, and for a line
    // without code (the next line's code); `break` refuses them as gdb
    // does (gdb then offers a pending breakpoint, answered no).
    let replies: Vec<&str> = r[6..13].iter().map(|(_, reply)| reply.as_str()).collect();
    assert_eq!(
        replies,
        [
            "error: Line number 0 is out of range for \"fib.mlir\".\n",
            "error: Line number 0 is out of range for \"fib.mlir\".\n",
            "error: Line number -3 is out of range for \"fib.mlir\".\n",
            "error: Line number 99 is out of range for \"fib.mlir\".\n",
            "Line 11 of \"fib.mlir\" is at address module.fib+0x00000033 <fib+51> but contains \
             no code.\n",
            "error: No line 0 in the current file.\n",
            "error: No line 99 in file \"fib.mlir\".\n",
        ]
    );
    // Without a location: the first line `list` showed (gdb's
    // `last_line_listed`), until a frame is shown again.
    assert_eq!(
        r[14].1.lines().last(),
        Some(
            "Line 5 of \"fib.mlir\" starts at address module.fib+0x00000004 <fib+4> and ends at \
             module.fib+0x0000000B <fib+11>."
        ),
        "{r:?}"
    );
    assert_eq!(r[16].1, r[5].1, "{r:?}");
}

/// `rwatch` stops after an instruction of the frame reads the register
/// (with the value read; a call's argument is reported in the callee's
/// first instruction), `awatch` after a read or a change (`Old value`/`New
/// value` when it changed); which instructions read a register comes from
/// the instruction table (a compare, an add, a call's arguments).
#[test]
fn rwatch_and_awatch_stop_at_reads_and_accesses() {
    let (r, code) = session(
        &args("fib.vmfb", "fib", "3"),
        "break fib.mlir:13\nrun\nawatch %i1\ncontinue\ncontinue\ndelete 1\n\
         rwatch %i0 if %i1 == 3\ninfo watchpoints\ncontinue\ncontinue\ncontinue\ncontinue\n",
    );
    assert_eq!(code, 0, "{r:?}");
    assert_eq!(r[2].1, "Hardware access (read/write) watchpoint 2: %i1\n");
    // The add of line 13 reads %i1 (0) and writes 1: a change.
    assert_eq!(
        r[3].1,
        "\nHardware access (read/write) watchpoint 2: %i1\n\nOld value = 0\nNew value = 1\n\
         fib (module.fib+0x00000041) at fib.mlir:14:5\n\
         14\t    scf.yield %k1, %y, %next : i32, i32, i32\n"
    );
    // The loop's compare reads it.
    assert_eq!(
        r[4].1,
        "\nHardware access (read/write) watchpoint 2: %i1\n\nValue = 1\n\
         fib (module.fib+0x00000022) at fib.mlir:8:5\n\
         8\t    scf.condition(%more) %k, %x, %y : i32, i32, i32\n"
    );
    assert_eq!(r[6].1, "Hardware read watchpoint 3: %i0\n");
    assert!(
        r[7].1
            .contains("3       read watchpoint keep y   %i0 in fib (frame #0)\n"),
        "{}",
        r[7].1
    );
    // The compare reads %i0 at every iteration; the condition holds at
    // the last (both watchpoints are reported in that one stop).
    assert!(
        r[10].1.contains("Old value = 2\nNew value = 3\n"),
        "{}",
        r[10].1
    );
    assert_eq!(
        r[11].1,
        "\nHardware access (read/write) watchpoint 2: %i1\n\nValue = 3\n\n\
         Hardware read watchpoint 3: %i0\n\nValue = 3\n\
         fib (module.fib+0x00000022) at fib.mlir:8:5\n\
         8\t    scf.condition(%more) %k, %x, %y : i32, i32, i32\n"
    );
    let (r, code) = session(
        &args("calls.vmfb", "sum_squares", "4"),
        "break calls.mlir:13\nrun\nrwatch %i1\ncontinue\nbt 1\n",
    );
    assert_eq!(code, 0, "{r:?}");
    assert_eq!(
        r[3].1,
        "\nHardware read watchpoint 2: %i1\n\nValue = 0\nfn1 (module.fn1+0x00000001)\n\
         => %i0 = vm.mul.i32 %i0, %i0\n"
    );
    assert_eq!(
        r[4].1,
        "#0  fn1 (module.fn1+0x00000001)\n(More stack frames follow...)\n"
    );
}

/// A branch reads the block-argument sources of the way it goes only
/// (`tests/data/dbg/branches.vmasm`: a `br_table` then a `cond_br` on the
/// input, each way from another register): a read watchpoint on a source
/// of a way not taken does not stop the program.
#[test]
fn read_watchpoints_see_only_the_way_a_branch_goes() {
    let script = "start\nrwatch %i1\nrwatch %i2\nawatch %i3\nrwatch %i4\n\
                  continue\ncontinue\ncontinue\ncontinue\n";
    // The stops after the constants: each (watchpoint, value read).
    let stops = |input: &str| -> Vec<String> {
        let (r, code) = session(&args("dbg/branches.vmasm", "main", input), script);
        assert_eq!(code, 0, "{r:?}");
        r[6..9]
            .iter()
            .map(|(_, reply)| {
                let lines: Vec<&str> = reply.lines().filter(|l| !l.is_empty()).collect();
                format!("{} {}", lines[0], lines[1])
            })
            .collect()
    };
    // 0: the table's case 0 (%i2), then the false way (%i4).
    assert_eq!(
        stops("0"),
        [
            "Hardware read watchpoint 2: %i2 Value = 20",
            "Hardware read watchpoint 4: %i4 Value = 20",
            "[main returned] result[0]: i32=20",
        ]
    );
    // 1: the default (%i1), then the true way (%i3); -1 as 1.
    let one = [
        "Hardware read watchpoint 1: %i1 Value = 10",
        "Hardware access (read/write) watchpoint 3: %i3 Value = 30",
        "[main returned] result[0]: i32=30",
    ];
    assert_eq!(stops("1"), one);
    assert_eq!(stops("-1"), one);
}

/// The registers an instruction reads and writes come from the
/// instruction table's operand roles: an add's operands, a branch table's
/// block-argument sources (every case), a call's arguments, a ref operand;
/// i64 results as pairs.
#[test]
fn register_reads_and_writes_follow_the_operand_roles() {
    use irvm_debugger::RegisterRef::{Pair, Ref, I32};
    let module = irvm::Module::from_assembly(
        "vm.module @u version 0
vm.type !vm.buffer
vm.func @g(%i0: i32) -> (i32) {
^bb0:
  vm.return %i0
}
vm.export @f
vm.func @f(%i0: i32, %i1: i32, %r0: !vm.buffer) -> (i32) {
^bb0:
  %i2 = vm.add.i32 %i0, %i1
  vm.br_table %i0 { default: ^bb1(%i1->%i3), 0: ^bb1(%i2->%i3) }
^bb1:
  %i4 = vm.call @g(%i3)
  %i6:7 = vm.buffer.length %r0
  vm.return %i4
}",
        "u.vmasm",
    )
    .expect("assembles");
    let info = irvm_debugger::DebugInfo::new(vec![(0, "u".to_string(), module)]);
    let uses = |list: Vec<(u32, Vec<irvm_debugger::RegisterRef>)>| -> Vec<_> {
        list.into_iter().map(|(_, r)| r).collect()
    };
    assert_eq!(
        uses(info.register_reads(0, 1)),
        [
            vec![I32(0), I32(1)],
            vec![I32(0), I32(1), I32(2)],
            vec![I32(3)],
            vec![Ref(0)],
            vec![I32(4)],
        ]
    );
    assert_eq!(
        uses(info.register_writes(0, 1)),
        [vec![I32(2)], vec![I32(4)], vec![Pair(6)]]
    );
}

/// gdb's value history: each value `call` and `print FUNCTION(ARGS)` print
/// is `$N`, read back by `$N`, `$` and `$$N` in `print`, `output`,
/// `printf` and `ptype` (also with no program); `output` and `printf`
/// call functions as `print` does (`ptype` never runs code); `help` of a
/// word that is no command says so as gdb does.
#[test]
fn value_history_calls_in_output_and_printf_and_help_of_no_command() {
    let (r, code) = session(
        &args("calls.vmfb", "sum_squares", "4"),
        "help nosuch\nprint $\nstart\nprint square(3)\ncall square(4)\nprint $1\nprint $\n\
         print $$\nprint $$9\nprint $7\noutput square(5)\necho \\n\n\
         printf \"%d %d\\n\", square(2), $2\nptype $1\nptype square(1)\nkill\nprint $2\n",
    );
    assert_eq!(code, 1, "{r:?}");
    let replies: Vec<(&str, &str)> = r.iter().map(|(c, t)| (c.as_str(), t.as_str())).collect();
    assert_eq!(
        replies[0],
        (
            "help nosuch",
            "error: Undefined command: \"nosuch\".  Try \"help\".\n"
        )
    );
    assert_eq!(replies[1].1, "error: History is empty.\n");
    assert_eq!(replies[3].1, "$1 = 9\n");
    assert_eq!(replies[4].1, "$2 = 16\n");
    assert_eq!(replies[5].1, "$3 = 9\n");
    // Each `print` is numbered too, as in gdb: `$` is then `$3`.
    assert_eq!(replies[6].1, "$4 = 9\n");
    assert_eq!(replies[7].1, "$5 = 9\n");
    assert_eq!(replies[8].1, "error: History does not go back to $$9.\n");
    assert_eq!(replies[9].1, "error: History has not yet reached $7.\n");
    assert_eq!(replies[10].0, "output square(5)");
    assert_eq!(replies[10].1, "25");
    assert_eq!(replies[12].1, "4 16\n");
    assert_eq!(replies[13].1, "type = i32\n");
    assert_eq!(
        replies[14].1,
        "error: `square(1)` is a call: only print, call, output and printf call functions\n"
    );
    assert_eq!(replies[16].1, "$6 = 16\n");
}

/// `printf`'s `%c` writes its argument's low byte as it is, as gdb 13
/// does (`printf "%c", -1` writes the byte 0xFF, not U+00FF's two UTF-8
/// bytes), and a NUL ends its piece (gdb prints each piece as a C
/// string); modifiers gdb's parser refuses are refused in its words.
#[test]
fn printf_c_writes_raw_bytes_as_gdb_does() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_irvm"))
        .arg("dbg")
        .args(args("calls.vmfb", "sum_squares", "4"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("irvm dbg starts");
    std::io::Write::write_all(
        &mut child.stdin.take().expect("stdin"),
        b"start\nprintf \"<%c|%c|%c|a%cb|%-3c|>\\n\", -1, 200, 321, 0, 0\nprintf \"%+c\", 1\n",
    )
    .expect("script written");
    let out = child.wait_with_output().expect("irvm dbg ends");
    let stdout = &out.stdout;
    let want: &[u8] = b"<\xff|\xc8|A|ab||>\n";
    assert!(
        stdout.windows(want.len()).any(|w| w == want),
        "{}",
        String::from_utf8_lossy(stdout)
    );
    let text = String::from_utf8_lossy(stdout);
    assert!(
        text.contains("error: Inappropriate modifiers to format specifier 'c' in printf"),
        "{text}"
    );
}

/// `awatch` stops at every write of its register, as gdb's access
/// watchpoint stops at every store: a write of the value the register
/// already holds is `Value = 5` (gdb's words for it), a call's result too
/// (seen back in the frame when the callee returns); which instructions
/// write comes from the instruction table, not from comparing values.
#[test]
fn awatch_sees_a_write_of_the_same_value() {
    let (r, code) = session(
        &[
            format!("--module={}", data("dbg/same_value.vmasm").display()),
            "--function=main".into(),
            "--input=1".into(),
        ],
        "break same.src:7\nrun\nawatch %i1\ncontinue\ncontinue\ncontinue\n",
    );
    assert_eq!(code, 0, "{r:?}");
    let heading = "\nHardware access (read/write) watchpoint 2: %i1\n\n";
    assert_eq!(
        r[3].1,
        format!(
            "{heading}Value = 5\nmain (same.main+0x0000000F) at same.src:8:3\n\
             => %i1 = vm.call @same.five()\n"
        )
    );
    assert_eq!(
        r[4].1,
        format!(
            "{heading}Value = 5\nmain (same.main+0x0000001A) at same.src:9:3\n\
             => %i1 = vm.const.i32 6  // 0x00000006\n"
        )
    );
    assert!(
        r[5].1
            .starts_with(&format!("{heading}Old value = 5\nNew value = 6\n")),
        "{}",
        r[5].1
    );
}

/// `printf`'s arguments are split at the commas outside parentheses, as
/// gdb's parser reads one expression at a time: a call of a function of
/// two parameters is one argument (its comma split it in two, `add(1`
/// and `2)`, and the command was refused).
#[test]
fn printf_takes_a_call_with_several_arguments_as_one() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let module = dir.path().join("pair.vmasm");
    std::fs::write(
        &module,
        "vm.module @pair version 0
vm.export @add
vm.func @add(%i0: i32, %i1: i32) -> (i32) {
^bb0:
  %i2 = vm.add.i32 %i0, %i1
  vm.return %i2
}
vm.export @main
vm.func @main(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.call @add(%i0, %i0)
  vm.return %i1
}
",
    )
    .expect("written");
    let (r, code) = session(
        &[
            format!("--module={}", module.display()),
            "--function=main".into(),
            "--input=5".into(),
        ],
        "start\nprintf \"%d|%d\\n\", add(1, 2), add(%i0, 4)\n\
         printf \"%d\\n\", add(1, 2\nkill\n",
    );
    // (1: a command failed, the last printf.)
    assert_eq!(code, 1, "{r:?}");
    assert_eq!(r[1].1, "3|9\n", "{r:?}");
    assert!(r[2].1.starts_with("error: "), "{r:?}");
}

/// Two modules of one name (as `irvm run` links them: the later one wins
/// every lookup by name): the debugger's names mean the later one, as
/// the VM's do. It read the first one's debug information for them: the
/// later module's `g` showed as the first's `f`, `print f(1)` called `g`
/// (100, not 2), and `break f` stopped in `g`.
#[test]
fn a_module_name_means_the_last_module_of_that_name() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |file: &str, function: &str, body: &str| {
        let path = dir.path().join(file);
        std::fs::write(
            &path,
            format!(
                "vm.module @m version 0
vm.export @{function}
vm.func @{function}(%i0: i32) -> (i32) {{
^bb0:
{body}
  vm.return %i2
}}
"
            ),
        )
        .expect("written");
        format!("--module={}", path.display())
    };
    let first = write(
        "first.vmasm",
        "f",
        "  %i1 = vm.const.i32 1\n  %i2 = vm.add.i32 %i0, %i1",
    );
    let second = write(
        "second.vmasm",
        "g",
        "  %i1 = vm.const.i32 100\n  %i2 = vm.mul.i32 %i0, %i1",
    );
    let (r, _) = session(
        &[first, second, "--function=g".into(), "--input=3".into()],
        "start\nprint f(1)\nprint g(2)\nbreak f\nbreak g\n",
    );
    assert_eq!(
        r[0].1, "g (m.g+0x00000001)\n=> %i1 = vm.const.i32 100  // 0x00000064\n",
        "{r:?}"
    );
    assert_eq!(r[1].1, "$1 = 2\n", "{r:?}");
    assert_eq!(r[2].1, "$2 = 200\n", "{r:?}");
    assert_eq!(
        r[3].1, "Breakpoint 1 at f (m.f+0x00000001) (1 location)\n",
        "{r:?}"
    );
    assert!(
        r[4].1.starts_with("Breakpoint 2 at g (m.g+0x00000001)"),
        "{r:?}"
    );
}
