//! `irvm dbg` and a host call that yields many times
//! (`tests/data/dbg/yielding.vmasm` over the `yieldable_test` plugin): a
//! Ctrl-C while the program waits in it stops there, in the frame of the
//! call, which `continue` resumes where it was.

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::common::cli::yieldable_plugin;
use crate::common::paths::data;

/// Yields of the host call: seconds of resumptions in a debug build, so
/// that a Ctrl-C lands inside it, and few enough to finish after it.
const YIELDS: u32 = 3_000_000;

/// What `irvm dbg` says when a pause stops the program inside the call.
const INSIDE: &str = "(inside the host call there, which yields: going on resumes it)";

/// Reads lines up to one containing `want` (returned with those before
/// it); with `sigint`, sends SIGINT to `pid` each 100 ms meanwhile.
fn read_until(lines: &Receiver<String>, want: &str, sigint: Option<i32>) -> Vec<String> {
    let start = Instant::now();
    let mut seen = Vec::new();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no {want:?} within 30 s: {seen:?}"
        );
        if let Some(pid) = sigint {
            // SAFETY: signalling our own child process.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
        }
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                // (A command's echo, `(irvm) ...`, is not what it prints.)
                let found = line.contains(want) && !line.starts_with("(irvm) echo ");
                seen.push(line);
                if found {
                    return seen;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => panic!("irvm dbg ended early: {seen:?}"),
        }
    }
}

#[test]
fn sigint_stops_inside_a_yielding_host_call_and_continue_resumes_it() {
    let Some(plugin) = yieldable_plugin() else {
        eprintln!("skipping: libyieldable_test.so not built");
        return;
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args([
            "dbg".to_string(),
            format!("--module={}", plugin.display()),
            format!("--module={}", data("dbg/yielding.vmasm").display()),
            "--function=main".into(),
            "--input=5".into(),
            format!("--input={YIELDS}"),
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
    let mut send = |text: &str| {
        stdin.write_all(text.as_bytes()).expect("command");
        stdin.flush().expect("flush");
    };
    // Stopped before the call; then `continue` and Ctrl-C. A Ctrl-C that
    // lands before the call begins stops the program at it: go on again.
    send("start\nstepi\n");
    read_until(&lines, "vm.call.yieldable", None);
    let mut stop = Vec::new();
    for _ in 0..5 {
        send("continue\n");
        read_until(&lines, "(irvm) continue", None);
        // (The echo comes as the command is read: give the call time to
        // begin, as a user would.)
        std::thread::sleep(Duration::from_millis(300));
        read_until(&lines, "Program received signal SIGINT", Some(pid));
        send("echo end of stop\\n\n");
        stop = read_until(&lines, "end of stop", None);
        if stop.iter().any(|l| l == INSIDE) {
            break;
        }
    }
    assert!(stop.iter().any(|l| l == INSIDE), "{stop:?}");
    // The frame stands at the call, which has begun.
    assert!(
        stop.iter().any(|l| l == "main (yielding.main+0x00000008)"),
        "{stop:?}"
    );
    // Its frame cannot be moved; its registers can be read; functions can
    // be called, but not into the host module the program waits in.
    send("jump *0x1d\nprint %i0\nprint twice(4)\nprint again(1)\necho end\\n\n");
    let replies = read_until(&lines, "end", None);
    assert!(
        replies.contains(
            &"error: the program stopped inside a host call that yields: it cannot jump until \
              the call returns (`stepi`, `next` or `continue` goes on with it)"
                .to_string()
        ),
        "{replies:?}"
    );
    assert!(replies.contains(&"$1 = 5".to_string()), "{replies:?}");
    assert!(replies.contains(&"$2 = 8".to_string()), "{replies:?}");
    assert!(
        replies.iter().any(|l| l.contains(
            "`yieldable_test.yield_n`: the program waits in a call of its host module that \
             yields; a call made meanwhile cannot enter that module"
        )),
        "{replies:?}"
    );
    // `stepi` resumes the host call and stops at the instruction after it
    // (with the call's result), then `continue` ends the program.
    send("stepi\nprint %i3\ncontinue\nquit\n");
    let rest = read_until(&lines, "result[0]", None);
    assert!(
        rest.iter().any(|l| l == "main (yielding.main+0x0000001D)"),
        "{rest:?}"
    );
    let sum = 5 + YIELDS as i64;
    assert!(rest.contains(&format!("$3 = {sum}")), "{rest:?}");
    assert_eq!(
        rest.last().map(String::as_str),
        Some(format!("result[0]: i32={}", sum + 1).as_str())
    );
    drop(stdin);
    let status = child.wait().expect("exit");
    // (The refused `jump` makes the exit code 1, as any failed command.)
    assert_eq!(status.code(), Some(1));
}
