//! `irvm dbg` where it copies gdb's commands, compared with what gdb
//! itself prints for a small C program: expressions over numbers without
//! a program, frame moves past the ends of the stack, relative line
//! locations, register names in `info registers`, `source -v`.

use crate::common::paths::data;

/// Runs `irvm dbg` with `args` and `script` on stdin: each command's reply
/// (what follows its echoed `(irvm) CMD` up to the next prompt), and the
/// exit code.
fn session(args: &[String], script: &str) -> (Vec<(String, String)>, i32) {
    let (text, code) = crate::dbg::dbg(args, script);
    let mut replies = Vec::new();
    for part in text.split("(irvm) ").skip(1) {
        let (command, reply) = part.split_once('\n').unwrap_or((part, ""));
        replies.push((command.to_string(), reply.to_string()));
    }
    (replies, code)
}

fn fib_args() -> Vec<String> {
    vec![
        format!("--module={}", data("fib.vmfb").display()),
        "--function=fib".into(),
        "--input=5".into(),
    ]
}

/// The reply to each command of `script`, in order.
fn replies(args: &[String], script: &str) -> Vec<String> {
    session(args, script)
        .0
        .into_iter()
        .map(|(_, reply)| reply)
        .collect()
}

/// gdb evaluates `print 1+2`, `printf "%d\n", 5` and `output 7` before
/// `run`, with C's arithmetic (ints wrap, `/` truncates, division by zero
/// and `%` of a float are errors in gdb's words); registers still need a
/// program.
#[test]
fn numbers_print_without_a_program_with_c_arithmetic() {
    let r = replies(
        &fib_args(),
        "print 1+2\nprint (1 + 2) * 3\nprintf \"%d %.2f\\n\", 7 / 2, 7.0 / 2\noutput -5 % 3\n\
         echo \\n\nprint 2147483647 + 1\nwhatis 5000000000\nprint 1/0\nprint 1.5 % 1\n\
         print %i1\nprint 1 << 40\nprint 3 > 2 > 1\nprint 1 +\nprint 5 % 2\n",
    );
    assert_eq!(r[0], "$1 = 3\n");
    assert_eq!(r[1], "$2 = 9\n");
    assert_eq!(r[2], "3 3.50\n");
    assert_eq!(r[3], "-2");
    assert_eq!(r[5], "$3 = -2147483648\n");
    assert_eq!(r[6], "type = i64\n");
    assert_eq!(r[7], "error: cannot print `1/0`: Division by zero\n");
    assert_eq!(
        r[8],
        "error: cannot print `1.5 % 1`: Integer-only operation on floating point number.\n"
    );
    assert_eq!(r[9], "error: the program is not being run (use `run`)\n");
    assert_eq!(
        r[10],
        "warning: left shift count >= width of type\n$4 = 0\n"
    );
    assert_eq!(r[11], "$5 = 0\n");
    assert!(r[12].starts_with("error: cannot print `1 +`"), "{r:?}");
    assert_eq!(r[13], "$6 = 1\n");
}

/// Arithmetic over registers and source names in the running program, in
/// `print` and in a breakpoint's condition.
#[test]
fn registers_take_part_in_arithmetic() {
    let r = replies(
        &fib_args(),
        "break fib.mlir:9 if %i1 * 2 + 1 == 5\nrun\nprint %i1 + 10\nprint (%i3 + %i4) * 2\n\
         print %next-1\nprint %x-y\n",
    );
    assert!(r[1].contains("Breakpoint 1, fib"), "{r:?}");
    assert_eq!(r[2], "$1 = 12\n");
    assert_eq!(r[3], "$2 = 6\n");
    // A source name followed by `-` is a subtraction when the whole word
    // names nothing (names may hold `-`).
    assert_eq!(r[4], "$3 = 0\n");
    assert_eq!(
        r[5],
        "error: `%x-y` is neither a register nor a source name of this function\n"
    );
}

/// C's `%` written without blanks (`10%3`, `%i1%-3`) is the remainder
/// where the word after it names nothing, as gdb reads `print 10%-3`
/// (before, `%3` and `%-3` were refused as unknown source names while the
/// program ran).
#[test]
fn a_remainder_written_without_blanks_is_an_operator() {
    let r = replies(
        &fib_args(),
        "break fib.mlir:12\nrun\nprint 10%3\nprint 10%-3\nprint %i1%4\nprint (9)%%i2\n\
         print %next%2\nprint %nosuch\nprint 1 + %nosuch\nprintf \"%d\\n\", 7%-4\n",
    );
    assert!(r[1].contains("Breakpoint 1, fib"), "{r:?}");
    assert_eq!(r[2], "$1 = 1\n");
    assert_eq!(r[3], "$2 = 1\n");
    assert_eq!(r[4], "$3 = 0\n");
    assert_eq!(r[5], "$4 = 0\n");
    assert_eq!(r[6], "$5 = 1\n");
    let unknown = "`%nosuch` is neither a register nor a source name of this function\n";
    assert_eq!(r[7], format!("error: {unknown}"));
    assert_eq!(r[8], format!("error: {unknown}"));
    assert_eq!(r[9], "3\n");
}

/// A number with a leading 0 is C's octal, as gdb reads it (`print 010`
/// is 8; `08` is gdb's invalid number), in `print` and in `set var`
/// (before, both read it as a decimal).
#[test]
fn a_leading_zero_is_octal_as_in_c() {
    let r = replies(
        &fib_args(),
        "print 010\nprint 08\nprint -017 + 1\nprint 010.5\nbreak fib.mlir:12\nrun\n\
         set var %i3 = 017\nprint %i3\nprint %i3 == 15\n",
    );
    assert_eq!(r[0], "$1 = 8\n");
    assert_eq!(r[1], "error: cannot print `08`: Invalid number \"08\".\n");
    assert_eq!(r[2], "$2 = -14\n");
    assert_eq!(r[3], "$3 = 10.5\n");
    assert!(r[5].contains("Breakpoint 1, fib"), "{r:?}");
    assert_eq!(r[7], "$4 = 15\n", "{r:?}");
    assert_eq!(r[8], "$5 = 1\n");
}

/// `-2147483648` is the literal 2147483648 negated, a `long` in C as in
/// gdb (`ptype` says `long`): divided by -1 it is 2147483648, where the
/// `int` INT_MIN / -1 wraps (before, the negative literal was an i32 and
/// both wrapped). An i32 register still takes it.
#[test]
fn a_negative_literal_is_typed_by_its_digits_as_in_c() {
    let r = replies(
        &fib_args(),
        "print -2147483648 / -1\nptype -2147483648\nprint (-2147483647 - 1) / -1\n\
         ptype -5\nbreak fib.mlir:12\nrun\nset var %i3 = -2147483648\nptype %i3\nprint %i3\n",
    );
    assert_eq!(r[0], "$1 = 2147483648\n");
    assert_eq!(r[1], "type = i64\n");
    assert_eq!(r[2], "$2 = -2147483648\n");
    assert_eq!(r[3], "type = i32\n");
    assert!(r[5].contains("Breakpoint 1, fib"), "{r:?}");
    assert_eq!(r[7], "type = i32\n", "{r:?}");
    assert_eq!(r[8], "$3 = -2147483648\n");
}

fn frames_args() -> Vec<String> {
    vec![
        format!("--module={}", data("dbg/frames.vmasm").display()),
        "--function=main".into(),
        "--input=5".into(),
    ]
}

/// gdb's `up N` and `down N` move as far as the stack goes and print that
/// frame, even when it is the frame already selected; only `up` and `down`
/// without a count refuse to move past the end. A negative count goes the
/// other way (`up -1` is `down 1`).
#[test]
fn up_and_down_with_a_count_stop_at_the_ends_of_the_stack() {
    let r = replies(
        &frames_args(),
        "break twice\nrun\nup 99\nup 99\nup\ndown 99\ndown 99\ndown\nup -1\ndown -1\nup 0\nup 1+0\n",
    );
    let main = "#1  main (frames.main+0x00000001) at frames.src:8:7\n8\t  a = twice(n)\n";
    let twice = "#0  twice (frames.twice+0x00000001) at frames.src:3:7\n";
    assert_eq!(r[2], main);
    assert_eq!(r[3], main);
    assert_eq!(r[4], "error: Initial frame selected; you cannot go up.\n");
    assert!(r[5].starts_with(twice), "{r:?}");
    assert!(r[6].starts_with(twice), "{r:?}");
    assert_eq!(
        r[7],
        "error: Bottom (innermost) frame selected; you cannot go down.\n"
    );
    assert!(r[8].starts_with(twice), "{r:?}");
    assert_eq!(r[9], main);
    assert_eq!(r[10], main);
    // (at the outermost already: a count never refuses)
    assert_eq!(r[11], main);
}

/// `info registers NAME...` takes the names `print` takes (`%i1`, `%i0:1`,
/// a source name), and the name without its `%` as gdb takes `rip` beside
/// `$rip`; each is shown as it is reached, and another word is gdb's
/// `Invalid register`.
#[test]
fn info_registers_takes_register_names() {
    let r = replies(
        &fib_args(),
        "break fib.mlir:12\nrun\ninfo registers %i1 i2 %next %i0:1 r0\ninfo registers foo\n\
         info r %i99\ninfo all-registers %i1\n",
    );
    assert_eq!(
        r[2],
        "%i1      i32  0\n%i2      i32  1\n%i5      i32  1\n%i0:1    i64  5\n\
         error: Invalid register `r0'\n"
    );
    assert_eq!(r[3], "error: Invalid register `foo'\n");
    assert_eq!(r[4], "error: Invalid register `%i99'\n");
    assert_eq!(r[5], "%i1      i32  0\n");
}

/// `source -v FILE` shows each command after a `+` before it runs (one
/// `+` more inside a user command), into the files it sources, and only
/// while it runs; `-s` and `-v` come in any order, and another option is
/// the start of the file's name, as gdb reads them.
#[test]
fn source_v_shows_each_command_as_gdb_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inner = dir.path().join("inner.gdb");
    std::fs::write(&inner, "echo in\\n\n").expect("inner");
    let outer = dir.path().join("outer.gdb");
    std::fs::write(
        &outer,
        format!(
            "define foo\necho foo\\n\nend\nfoo\nsource {}\nprint 1\n",
            inner.display()
        ),
    )
    .expect("outer");
    let (o, i) = (outer.display(), inner.display());
    let r = replies(
        &fib_args(),
        &format!("source -v {o}\nsource {o}\nsource -s -v {i}\nsource -v\nsource -q {i}\n"),
    );
    assert_eq!(
        r[0],
        format!("+define foo\n+foo\n++echo foo\\n\nfoo\n+source {i}\n+echo in\\n\nin\n+print 1\n$1 = 1\n")
    );
    // (The second reading defines `foo` again: gdb's question, answered.)
    assert_eq!(
        r[1],
        "Redefine command \"foo\"? (y or n) [answered Y; input not from terminal]\n\
         foo\nin\n$2 = 1\n"
    );
    assert_eq!(r[2], "+echo in\\n\nin\n");
    assert_eq!(r[3], "error: -v: No such file or directory.\n");
    assert_eq!(r[4], format!("error: -q {i}: No such file or directory.\n"));
}

/// Relative line locations count from the selected frame's line, as
/// gdb's from its last displayed line (`+0` is `+5`, `-0` `-15`, as in
/// gdb); before `run` from nine lines above the entry function's first
/// line (gdb's default source line around `main`); numbers past 32 bits
/// wrap as gdb's linespecs wrap them; a file with no code is gdb's `No
/// source file named`.
#[test]
fn relative_and_wrapped_line_numbers_read_as_gdb_reads_them() {
    let r = replies(
        &fib_args(),
        "info line +1\nbreak +1\nbreak fib.mlir:12\nrun\ninfo line +1\ninfo line -1\n\
         info line +0\ninfo line -0\ninfo line nosuch.c:3\ninfo line 99999999999\n\
         info line 4294967308\ninfo line -99999999999\ninfo line fib.mlir:+12\nbreak 99999999999\n\
         break nosuch.c:3\njump nosuch.c:3\njump -1000\njump +1\n",
    );
    // fib's first line is 4: before run, + and - count from line 1.
    assert_eq!(
        r[0],
        "Line 2 of \"fib.mlir\" is at address module.fib+0x00000001 <fib+1> but contains no code.\n"
    );
    assert_eq!(
        r[1],
        "Breakpoint 1 at fib (module.fib+0x00000001) at fib.mlir:4:11 (1 location)\n"
    );
    assert!(r[3].contains("Breakpoint 1, fib"), "{r:?}");
    assert_eq!(
        r[4],
        "Line 5 of \"fib.mlir\" starts at address module.fib+0x00000004 <fib+4> and ends at module.fib+0x0000000B <fib+11>.\n"
    );
    assert_eq!(
        r[5],
        "Line 3 of \"fib.mlir\" is at address module.fib+0x00000001 <fib+1> but contains no code.\n"
    );
    assert_eq!(
        r[6],
        "Line 9 of \"fib.mlir\" is at address module.fib+0x00000033 <fib+51> but contains no code.\n"
    );
    assert_eq!(
        r[7],
        "error: Line number -11 is out of range for \"fib.mlir\".\n"
    );
    assert_eq!(r[8], "error: No source file named nosuch.c.\n");
    assert_eq!(
        r[9],
        "error: Line number 1215752191 is out of range for \"fib.mlir\".\n"
    );
    let line_12 = "Line 12 of \"fib.mlir\" starts at address module.fib+0x00000033 <fib+51> and ends at module.fib+0x0000003A <fib+58>.\n";
    assert_eq!(r[10], line_12);
    assert_eq!(
        r[11],
        "error: Line number -1215752187 is out of range for \"fib.mlir\".\n"
    );
    assert_eq!(r[12], line_12);
    assert_eq!(r[13], "error: No line 1215752191 in the current file.\n");
    assert_eq!(r[14], "error: No source file named nosuch.c.\n");
    assert_eq!(r[15], "error: No source file named nosuch.c.\n");
    assert_eq!(r[16], "error: No line -996 in the current file.\n");
    // jump +1 from line 4 goes on at line 5's code, then stops at 12.
    assert!(
        r[17].starts_with("Continuing at module.fib+0x00000004.\n\nBreakpoint 2, fib"),
        "{r:?}"
    );
}

/// `list LINE` reads a number past 32 bits as the other commands do, and
/// a line past the end is gdb 13's message (the file's name unquoted).
#[test]
fn list_wraps_line_numbers_as_gdb_does() {
    let r = replies(&fib_args(), "list 99999999999\nlist fib.mlir:4294967308\n");
    assert_eq!(
        r[0],
        "error: Line number 1215752186 out of range; fib.mlir has 17 lines.\n"
    );
    assert!(r[1].starts_with("  7\t    %more"), "{r:?}");
}

/// The entry frame's last `vm.return` reading a watched register is
/// reported as the program ends (no instruction comes after it to stop
/// at), as other frames' returns are at their caller's next instruction;
/// a condition that did not hold at the read keeps it quiet.
#[test]
fn the_entry_frames_return_reports_its_reads() {
    for (kind, title) in [
        ("awatch", "Hardware access (read/write) watchpoint"),
        ("rwatch", "Hardware read watchpoint"),
    ] {
        let (text, _) = crate::dbg::dbg(
            &[
                format!("--module={}", data("fib.vmfb").display()),
                "--function=fib".into(),
                "--input=2".into(),
            ],
            &format!(
                "break fib.mlir:14\nrun\ndelete\n{kind} %i3\n{}",
                "continue\n".repeat(4)
            ),
        );
        let end = format!(
            "(irvm) continue\n\n{title} 2: %i3\n\nValue = 1\n[fib returned]\nresult[0]: i32=1\n"
        );
        assert!(text.contains(&end), "{kind}: {text}");
    }
    let (text, _) = crate::dbg::dbg(
        &[
            format!("--module={}", data("fib.vmfb").display()),
            "--function=fib".into(),
            "--input=2".into(),
        ],
        "break fib.mlir:14\nrun\ndelete\nrwatch %i3 if %i3 == 7\ncontinue\n",
    );
    assert!(
        text.ends_with("(irvm) continue\n[fib returned]\nresult[0]: i32=1\n"),
        "{text}"
    );
}

/// `return %rN` from a function whose result is a ref takes any ref: the
/// bytecode records no ref result types (a signature is its calling
/// convention, `r` for every ref), so there is nothing to check it
/// against; the VM checks a ref's type where it is used, so a ref of
/// another type than the caller expects stops the program at its first
/// use with a clear trap, never misread.
#[test]
fn a_returned_ref_of_another_type_traps_at_its_first_use() {
    let r = replies(
        &[
            format!("--module={}", data("dbg/ref_return.vmasm").display()),
            "--function=main".into(),
            "--input=3".into(),
        ],
        "start\nstepi\nstepi\nreturn 5\nreturn %r0\ncontinue\n",
    );
    // A number is refused (a ref result takes a ref or 0).
    assert!(
        r[3].starts_with("error: `fn0`'s result 0 (a ref) takes a ref register"),
        "{r:?}"
    );
    assert!(r[4].ends_with("=> %i2:3 = vm.buffer.length %r0\n"), "{r:?}");
    assert_eq!(
        r[5],
        "\nProgram stopped: INVALID_ARGUMENT: buffer is not a !vm.buffer\n\
         main (ref_return.main+0x0000000E)\n=> %i2:3 = vm.buffer.length %r0\n"
    );
}

/// C's unsigned and sized integer types as gdb 13.1 evaluates them (each
/// reply is what `gdb -batch PROG -ex 'print ...'` prints with an x86-64
/// C program loaded, `int x = 2` for the register; `whatis` names the
/// type in the VM's spelling: ui32 for `unsigned int`, ui64 `unsigned
/// long`, i8 `char`): literals typed by value, base and suffix (before,
/// `0xFFFFFFFFFFFFFFFF` printed -1 and `1u`, `1.5f`, `0b101` were
/// refused), unsigned winning at equal width, casts, and the `/u`, `/o`,
/// `/c` formats; the i32 register stays C's `int`.
#[test]
fn unsigned_and_sized_integers_evaluate_as_gdb_evaluates_c() {
    let r = replies(
        &fib_args(),
        "print 0xFFFFFFFFFFFFFFFF
whatis 18446744073709551615
print -1 < 1u
         print -1 / 2u
print -1 >> 1u
print 1u - 2
whatis 1ul
print 0b101
         print (unsigned char)200
print (char)65 + 1
print (unsigned long)-1
         print/u -1
print/o 8
print/c 321
print/d 0x80000000
print/x (char)-1
         print 1.5f * 2
whatis 1.5f
print 10f
print 0b
         break fib.mlir:9 if %i1 == 2
run
print %i1 - 3u
whatis %i1
print %i1 - 3 < 0u
         print/x (short)(%i1 - 3)
set var %i1 = 0xFFFFFFFFu
print %i1
",
    );
    let expected = [
        "$1 = 18446744073709551615
",
        "type = ui64
",
        "$2 = 0
",
        "$3 = 2147483647
",
        "$4 = -1
",
        "$5 = 4294967295
",
        "type = ui64
",
        "$6 = 5
",
        "$7 = 200 '\\310'
",
        "$8 = 66
",
        "$9 = 18446744073709551615
",
        "$10 = 4294967295
",
        "$11 = 010
",
        "$12 = 65 'A'
",
        "$13 = -2147483648
",
        "$14 = 0xff
",
        "$15 = 3
",
        "type = f32
",
        "error: cannot print `10f`: Invalid number \"10f\".
",
        "error: cannot print `0b`: Invalid number \"0b\".
",
    ];
    assert_eq!(r[..expected.len()], expected, "{r:?}");
    assert!(r[21].contains("Breakpoint 1, fib"), "{r:?}");
    assert_eq!(
        r[22],
        "$16 = 4294967295
",
        "{r:?}"
    );
    assert_eq!(
        r[23],
        "type = i32
",
        "{r:?}"
    );
    assert_eq!(
        r[24],
        "$17 = 0
",
        "{r:?}"
    );
    assert_eq!(
        r[25],
        "$18 = 0xffff
",
        "{r:?}"
    );
    assert!(r[26].is_empty(), "{r:?}");
    // An i32 register is C's `int`: 0xFFFFFFFFu stored there reads -1.
    assert_eq!(
        r[27],
        "$19 = -1
",
        "{r:?}"
    );
}

/// gdb numbers every value `print` shows (`$3 = 12`, a register's and
/// an assignment's too: `print $rip` is `$N = ...`), keeping it in the
/// value history, and `$N` takes part in expressions of its own type
/// (`print $1 + 1`; an i64 stays one, as gdb's `long`).
#[test]
fn print_numbers_its_values_and_history_takes_part_in_expressions() {
    let r = replies(
        &fib_args(),
        "print 5\nprint $1 + 1\nprint $ * $$\nbreak fib.mlir:9\nrun\nprint %i1\n\
         print %i1 = 7\nprint $5 + 1\nprint/x $3\nprint 5000000000\nwhatis $8 - 4999999999\n\
         print $12 + 1\noutput $2 - 1\n",
    );
    assert_eq!(r[..3], ["$1 = 5\n", "$2 = 6\n", "$3 = 30\n"], "{r:?}");
    assert_eq!(r[5], "$4 = 0\n", "{r:?}");
    assert_eq!(r[6], "$5 = 7\n", "{r:?}");
    assert_eq!(r[7], "$6 = 8\n", "{r:?}");
    assert_eq!(r[8], "$7 = 0x1e\n", "{r:?}");
    assert_eq!(r[9], "$8 = 5000000000\n", "{r:?}");
    assert_eq!(r[10], "type = i64\n", "{r:?}");
    assert_eq!(
        r[11], "error: cannot print `$12 + 1`: History has not yet reached $12.\n",
        "{r:?}"
    );
    assert_eq!(r[12], "5", "{r:?}");
}

/// `define` of a built-in command's name asks gdb's question first
/// (answered yes off a terminal, as gdb answers it) and the definition
/// then replaces the command; an abbreviation (`p`) is no command of its
/// own, so defining it asks nothing, as in gdb 13.1.
#[test]
fn defining_a_built_in_command_asks_first_as_gdb_does() {
    let r = replies(
        &fib_args(),
        "define print\necho mine\\n\nend\nprint 1\ndefine p\necho short\\n\nend\np 2\n",
    );
    assert_eq!(
        r[0],
        "Really redefine built-in command \"print\"? (y or n) [answered Y; input not from terminal]\n"
    );
    // (The body's lines and `end` answer nothing.)
    assert_eq!(r[1..3], ["", ""]);
    assert_eq!(r[3], "mine\n");
    assert_eq!(r[4..7], ["", "", ""]);
    assert_eq!(r[7], "short\n");
}

/// C's character constants as gdb 13.1 reads them (each reply is what
/// `gdb -batch PROG -ex 'print ...'` prints): a `char` (`whatis` i8)
/// that prints with its character, escapes included, and is an `int` in
/// arithmetic; malformed ones get gdb's words. Before, `print 'a'` was
/// "`` is neither a register ... nor a number", naming nothing.
#[test]
fn character_constants_evaluate_as_gdb_reads_them() {
    let r = replies(
        &fib_args(),
        "print 'a'\nwhatis 'a'\nprint 'a' + 1\nprint '\\n'\nprint '\\377'\nprint '\\x41'\n\
         print (unsigned char)'\\377'\nprint 'a' == 97\nprint -'a'\nprint 'ab'\nprint ''\n\
         print 'a\nprint/x 'z'\n",
    );
    let expected = [
        "$1 = 97 'a'\n",
        "type = i8\n",
        "$2 = 98\n",
        "$3 = 10 '\\n'\n",
        "$4 = -1 '\\377'\n",
        "$5 = 65 'A'\n",
        "$6 = 255 '\\377'\n",
        "$7 = 1\n",
        "$8 = -97\n",
        "error: cannot print `'ab'`: Invalid character constant.\n",
        "error: cannot print `''`: A character constant must contain at least one character.\n",
        "error: cannot print `'a`: Unmatched single quote.\n",
        "$9 = 0x7a\n",
    ];
    assert_eq!(r[..expected.len()], expected, "{r:?}");
}

/// gdb 13.1's conditional operator, `sizeof` and floats with an exponent
/// mark but no digits (each reply is what `gdb -batch PROG -ex 'print
/// ...'` or `-ex 'whatis ...'` prints for a gcc-built x86-64 program,
/// the VM's names for C's types: `i32` is `int`). Before, `1 ? 2 : 3` was
/// junk after the expression, `sizeof(int)` a call (`You can't do that
/// without a process to debug.`) and `1.5e` an invalid number.
#[test]
fn conditional_sizeof_and_empty_exponents_evaluate_as_gdb_does() {
    let r = replies(
        &fib_args(),
        "print 1 ? 2 : 3\nprint 0 ? 1/0 : 5\nwhatis 1 ? 2 : 3.5\nprint 0 ? 2 : 0 ? 4 : 5\n\
         print 1 ? : 3\nprint sizeof(int)\nwhatis sizeof(int)\nprint sizeof(unsigned char)\n\
         print sizeof 1.5\nprint sizeof(1/0)\nprint sizeof (char)1\nprint 1)\nprint 1.5e\n\
         print 1e+\nprint 0x1p\nwhatis 1.5ef\nprint 1.5e+x\n\
         break fib.mlir:9 if %i1 == 2\nrun\nprint sizeof %i0:1\nprint %i1?%i0:%i2\n\
         print %k1 == 2 ? %n : %one\nprint sizeof(%n)\n\
         print %k1?%n:%one\n",
    );
    let near = |t: &str| format!("A syntax error in expression, near `{t}'.\n");
    let expected = [
        "$1 = 2\n".to_string(),
        "$2 = 5\n".into(),
        "type = i32\n".into(),
        "$3 = 5\n".into(),
        format!("error: cannot print `1 ? : 3`: {}", near(": 3")),
        "$4 = 4\n".into(),
        "type = i32\n".into(),
        "$5 = 1\n".into(),
        "$6 = 8\n".into(),
        "$7 = 4\n".into(),
        format!("error: cannot print `sizeof (char)1`: {}", near("1")),
        "error: cannot print `1)`: Junk after end of expression.\n".into(),
        "$8 = 1.5\n".into(),
        "$9 = 1\n".into(),
        "$10 = 1\n".into(),
        "type = f32\n".into(),
        "error: cannot print `1.5e+x`: Invalid number \"1.5e+x\".\n".into(),
    ];
    assert_eq!(r[..expected.len()], expected, "{r:?}");
    assert!(r[expected.len() + 1].contains("Breakpoint 1, fib"), "{r:?}");
    // The registers' own sizes and the conditional over registers and
    // source names (`%i1` is 2 there, `%i0` the input 5); a `:` right
    // after a name is the conditional's (`%n:%one`).
    assert_eq!(
        r[expected.len() + 2..][..5],
        [
            "$11 = 8\n",
            "$12 = 5\n",
            "$13 = 5\n",
            "$14 = 4\n",
            "$15 = 5\n"
        ],
        "{r:?}"
    );
}
