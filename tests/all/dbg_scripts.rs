//! `irvm dbg` driven as gdb users drive gdb: `-ex` and `-x` on the command
//! line (with `--batch`), `source FILE`, and user commands (`define`,
//! `document`, `$argN`, `$argc`).

use crate::common::paths::data;

/// Runs `irvm dbg` on `fib.vmfb` (`--input=5`) with `args` after it and
/// `stdin` as its input: (stdout, exit code).
fn dbg_fib(args: &[&str], stdin: &str) -> (String, i32) {
    dbg_fib_of(5, args, stdin)
}

/// [`dbg_fib`] with `--input=N`.
fn dbg_fib_of(n: u32, args: &[&str], stdin: &str) -> (String, i32) {
    let mut all = vec![
        format!("--module={}", data("fib.vmfb").display()),
        "--function=fib".to_string(),
        format!("--input={n}"),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    crate::dbg::dbg(&all, stdin)
}

/// `-ex` and `-x` run in command line order before stdin's commands, and
/// are not echoed (as gdb does not echo them); gdb's single-dash
/// spellings are taken.
#[test]
fn ex_and_x_run_in_order_before_the_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cmds.gdb");
    std::fs::write(&file, "echo [file]\\n\nbreak fib.mlir:12\n").expect("file");
    let file = file.display().to_string();
    let (out, code) = dbg_fib(
        &[
            "-ex",
            "echo [1]\\n",
            "-x",
            &file,
            "--ex=echo [2]\\n",
            "-ex",
            "run",
        ],
        "print %next\ncontinue\n",
    );
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "[1]",
            "[file]",
            "Breakpoint 1 at fib (module.fib+0x00000033) at fib.mlir:12:13 (1 location)",
            "[2]",
            "",
            "Breakpoint 1, fib (module.fib+0x00000033) at fib.mlir:12:13",
        ],
        "{out}"
    );
    // Then stdin's commands, echoed after the prompt.
    assert!(out.contains("(irvm) print %next\n$1 = 1\n"), "{out}");
}

/// gdb's `-batch` (irvm's `--batch` without a file) leaves after the
/// `-ex` and `-x` commands, reading nothing from stdin; a failing one
/// does not stop the next, and makes the exit code 1.
#[test]
fn batch_without_a_file_leaves_after_the_startup_commands() {
    let (out, code) = dbg_fib(&["-ex", "run", "-batch"], "echo never\\n\n");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "[fib returned]\nresult[0]: i32=5\n");
    let (out, code) = dbg_fib(&["-ex", "bogus", "-ex", "echo after\\n", "--batch"], "");
    assert_eq!(code, 1, "{out}");
    assert_eq!(out, "error: unknown command `bogus` (try `help`)\nafter\n");
    // With a file, --batch reads the file after them.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("batch.gdb");
    std::fs::write(&file, "echo [batch]\\n\n").expect("file");
    let batch = format!("--batch={}", file.display());
    let (out, code) = dbg_fib(&["-ex", "echo [ex]\\n", &batch], "");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "[ex]\n(irvm) echo [batch]\\n\n[batch]\n");
}

/// An error in a command file ends that file (naming the file and line,
/// as gdb's `Error in sourced command file`), not the session; `source`
/// nests, and missing or unreadable files are named.
#[test]
fn an_error_ends_the_sourced_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inner = dir.path().join("inner.gdb");
    std::fs::write(
        &inner,
        "echo [inner]\\n\nprint %nosuch\necho [not reached]\\n\n",
    )
    .expect("inner");
    let outer = dir.path().join("outer.gdb");
    std::fs::write(
        &outer,
        format!(
            "echo [outer]\\n\nsource {}\necho [not reached]\\n\n",
            inner.display()
        ),
    )
    .expect("outer");
    let source = format!("source {}", outer.display());
    let (out, code) = dbg_fib(&[], &format!("start\n{source}\necho [next]\\n\n"));
    assert_eq!(code, 1, "{out}");
    let expected = format!(
        "(irvm) {source}\n[outer]\n[inner]\nerror: {}:2: Error in sourced command file:\n\
         {}:2: Error in sourced command file:\n",
        outer.display(),
        inner.display()
    );
    assert!(out.contains(&expected), "{out}");
    assert!(!out.contains("[not reached]"), "{out}");
    assert!(out.ends_with("(irvm) echo [next]\\n\n[next]\n"), "{out}");
    let (out, code) = dbg_fib(
        &[
            "-x",
            "/nonexistent/cmds.gdb",
            "-ex",
            "source",
            "-ex",
            "source /",
        ],
        "",
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "error: /nonexistent/cmds.gdb: No such file or directory.\n\
         error: source command requires file name of file to source.\n\
         error: /: Is a directory.\n"
    );
}

/// `source FILE` and `-x FILE` look for a file not found as named in the
/// `--source-dir` directories (gdb's source path), as gdb's `source`
/// does: a name with a `/` only with `-s` (an absolute one taken as
/// relative to each directory); the current directory comes first.
#[test]
fn source_and_x_search_the_source_dirs() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sub")).expect("sub");
    std::fs::write(dir.path().join("s.gdb"), "echo [from-dir]\\n\n").expect("file");
    std::fs::write(dir.path().join("sub/t.gdb"), "echo [from-sub]\\n\n").expect("file");
    let source_dir = format!("--source-dir={}", dir.path().display());
    let (out, code) = dbg_fib(
        &[&source_dir, "-x", "s.gdb"],
        "source s.gdb\nsource sub/t.gdb\nsource -s sub/t.gdb\nsource -s /sub/t.gdb\n\
         source nosuch.gdb\n",
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out,
        "[from-dir]\n(irvm) source s.gdb\n[from-dir]\n(irvm) source sub/t.gdb\n\
         error: sub/t.gdb: No such file or directory.\n(irvm) source -s sub/t.gdb\n[from-sub]\n\
         (irvm) source -s /sub/t.gdb\n[from-sub]\n(irvm) source nosuch.gdb\n\
         error: nosuch.gdb: No such file or directory.\n"
    );
}

/// `define` makes a command of the lines up to `end`, with `$argN` and
/// `$argc` its arguments (quoted words kept whole); a missing argument is
/// gdb's error when its line is reached; `document` gives `help` its
/// text; a definition calling itself ends at the nesting limit.
#[test]
fn user_commands_take_arguments_and_documentation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("defs.gdb");
    std::fs::write(
        &file,
        "define show\n  echo argc=$argc first=$arg0 second=$arg1\\n\n  print $arg0\nend\n\
         document show\nShows two things.\nend\n\
         define forever\nforever\nend\n",
    )
    .expect("defs");
    let x = file.display().to_string();
    let (out, code) = dbg_fib(
        &["-x", &x],
        "break fib.mlir:12\nrun\nshow %i1 \"a b\"\nshow %i1\nhelp show\nforever\n\
         define show\necho redefined\\n\nend\nshow\ndocument nosuch\n",
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("(irvm) show %i1 \"a b\"\nargc=2 first=%i1 second=\"a b\"\n$1 = 0\n"),
        "{out}"
    );
    assert!(
        out.contains("(irvm) show %i1\nerror: Missing argument 1 in user function.\n"),
        "{out}"
    );
    assert!(
        out.contains("(irvm) help show\nShows two things.\n"),
        "{out}"
    );
    assert!(
        out.contains("(irvm) forever\nerror: Max user call depth exceeded -- command aborted"),
        "{out}"
    );
    // gdb's question on redefining a command, answered yes with the
    // commands not from a terminal; read from stdin, the body lines are
    // echoed as they are read.
    assert!(
        out.contains(
            "(irvm) define show\nRedefine command \"show\"? (y or n) [answered Y; input not \
             from terminal]\n"
        ),
        "{out}"
    );
    assert!(out.contains("(irvm) show\nredefined\n"), "{out}");
    assert!(
        out.ends_with("error: Undefined command: \"nosuch\".\n"),
        "{out}"
    );
}

/// A breakpoint's command list that goes on through a user command
/// (`define go` ... `continue`) runs at each of many stops: the next
/// stop's list runs after the one that continued, not inside it (it ran
/// one level deeper at each stop, and the 64th stop ended the session's
/// script with gdb's `Max user call depth exceeded`).
#[test]
fn a_user_command_continuing_from_a_command_list_does_not_nest() {
    let (out, code) = dbg_fib_of(
        100,
        &[],
        "define go\ncontinue\nend\nbreak fib.mlir:12\ncommands\nsilent\ngo\nend\nrun\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("error"), "{out}");
    assert!(
        out.contains("[fib returned]\nresult[0]: i32=-980107325\n"),
        "{out}"
    );
}

/// A user command of a built-in's name replaces it, as gdb's redefinition
/// does (gdb asks first; a script's answer is yes), but for the words that
/// read the lines after them and `source`.
#[test]
fn define_replaces_built_ins_but_not_the_words_that_read_lines() {
    let (out, code) = dbg_fib(
        &[],
        "define next\necho [my next]\\n\nend\nnext\ndefine source\ndefine end\n",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("(irvm) next\n[my next]\n"), "{out}");
    assert!(
        out.contains("(irvm) define source\nerror: `source` cannot be redefined\n"),
        "{out}"
    );
    assert!(out.ends_with("error: `end` cannot be redefined\n"), "{out}");
}

/// `-ex "define NAME"` reads the body from the session's input, as gdb's
/// `-ex` does (with `--batch` and no file there is none: an empty body).
#[test]
fn define_in_ex_reads_its_body_from_the_input() {
    let (out, code) = dbg_fib(
        &["-ex", "define greet", "-ex", "echo after\\n"],
        "echo hi\\n\nend\ngreet\n",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "(irvm) echo hi\\n\n(irvm) end\nafter\n(irvm) greet\nhi\n"
    );
    let (out, code) = dbg_fib(&["--batch", "-ex", "define greet", "-ex", "greet"], "");
    assert_eq!((out.as_str(), code), ("", 0));
}
