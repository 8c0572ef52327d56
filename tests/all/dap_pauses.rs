//! `pause` where the program runs no instruction for long: inside a host
//! call that yields many times (`tests/data/dbg/yielding.vmasm` over the
//! `yieldable_test` plugin), and during a function called from the debug
//! console, with raw DAP messages as `tests/all/dap.rs` sends them.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::common::cli::yieldable_plugin;
use crate::dap::{launch, path, program, scope_variables, top_frame, Client};

/// Yields of the host call: seconds of resumptions in a debug build, so
/// that a pause lands inside it, and few enough to finish after it.
const YIELDS: u32 = 3_000_000;

/// The responses to `seqs`, by `seq`, reading every message (events are
/// kept) until all have come, in any order; also the order they came in.
fn responses(c: &mut Client, seqs: &[i64]) -> (HashMap<i64, Value>, Vec<i64>) {
    let mut got = HashMap::new();
    let mut order = Vec::new();
    while got.len() < seqs.len() {
        let m = c.next_message();
        match m["request_seq"].as_i64() {
            Some(s) if m["type"] == "response" && seqs.contains(&s) => {
                order.push(s);
                got.insert(s, m);
            }
            _ => c.events.push(m),
        }
    }
    (got, order)
}

#[test]
fn pause_stops_inside_a_yielding_host_call_and_continue_resumes_it() {
    let Some(plugin) = yieldable_plugin() else {
        eprintln!("skipping: libyieldable_test.so not built");
        return;
    };
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [plugin.display().to_string(), path("dbg/yielding.vmasm")],
               "function": "main", "inputs": ["5", YIELDS.to_string()], "stopOnEntry": true}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    // Stopped before the call, then running and paused. A pause that
    // lands before the call begins stops the program at it: go on again.
    c.ok("next", json!({"threadId": 1, "granularity": "instruction"}));
    c.event("stopped");
    let (at_call, _) = top_frame(&mut c);
    let mut stopped = Value::Null;
    for _ in 0..5 {
        c.ok("continue", json!({"threadId": 1}));
        // (Answered before the program goes on: give the call time to
        // begin, as a user would.)
        std::thread::sleep(std::time::Duration::from_millis(300));
        c.ok("pause", json!({"threadId": 1}));
        stopped = c.event("stopped");
        if stopped["body"]["description"].is_string() {
            break;
        }
    }
    assert_eq!(stopped["body"]["reason"], "pause", "{stopped}");
    assert_eq!(
        stopped["body"]["description"], "Paused inside a host call that yields",
        "{stopped}"
    );
    // The frame stands at the call, with its registers; functions can be
    // called there; it cannot be moved.
    let (frame, i32s) = top_frame(&mut c);
    assert_eq!(
        frame["instructionPointerReference"],
        at_call["instructionPointerReference"]
    );
    assert!(
        i32s.iter().any(|v| v["name"] == "%i0" && v["value"] == "5"),
        "{i32s:?}"
    );
    let called = c.ok(
        "evaluate",
        json!({"expression": "twice(4)", "frameId": frame["id"], "context": "repl"}),
    );
    assert_eq!(called["result"], "$1 = 8");
    let targets = c.ok(
        "gotoTargets",
        json!({"source": frame["source"], "line": frame["line"]}),
    );
    let moved = c.request(
        "goto",
        json!({"threadId": 1, "targetId": targets["targets"][0]["id"]}),
    );
    assert_eq!(
        moved["message"],
        "the program stopped inside a host call that yields: it cannot go on elsewhere until \
         the call returns (`stepi`, `next` or `continue` goes on with it)",
        "{moved}"
    );
    // Going on resumes the call where it was: its result is ARG + YIELDS.
    c.ok("continue", json!({"threadId": 1}));
    let result = loop {
        let e = c.event("output");
        if e["body"]["category"] == "stdout" && e["body"]["output"] != "EXEC @main\n" {
            break e;
        }
    };
    assert_eq!(
        result["body"]["output"],
        format!("result[0]: i32={}\n", 5 + YIELDS + 1)
    );
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.disconnect_cleanly();
}

#[test]
fn pause_abandons_a_debug_console_call_that_runs_on() {
    let mut args = program("spin", "3");
    args["stopOnEntry"] = json!(true);
    let mut c = Client::start();
    launch(&mut c, args);
    c.ok("configurationDone", json!({}));
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    let call =
        json!({"expression": "spin(1000000000000)", "frameId": frame["id"], "context": "repl"});
    // While the call runs (hours), requests are answered as while the
    // program runs. One sent before the session began the call waits for
    // it (and a request that runs the program would then run it:
    // `configurationDone`, refused either way, stands for them): the
    // first round that saw the call begun is checked (the session begins
    // it within milliseconds; 200 ms leaves room for a loaded machine, and
    // three rounds for a very loaded one).
    let mut checked = false;
    for _ in 0..3 {
        let evaluate = c.send("evaluate", call.clone());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let threads = c.send("threads", json!({}));
        let trace = c.send("stackTrace", json!({"threadId": 1}));
        let go = c.send("configurationDone", json!({}));
        let pause = c.send("pause", json!({"threadId": 1}));
        let (got, order) = responses(&mut c, &[evaluate, threads, trace, go, pause]);
        // The call was abandoned; the pause is answered; the program
        // stays where it stopped.
        assert_eq!(got[&pause]["success"], true, "{:?}", got[&pause]);
        assert_eq!(
            got[&evaluate]["message"],
            "the call of `spin` failed: CANCELLED: the call of module.spin was paused and \
             abandoned (it was abandoned; the program stays where it stopped)"
        );
        if order.last() != Some(&evaluate) {
            // Served after the call: the session had not begun it.
            continue;
        }
        assert_eq!(
            got[&threads]["body"]["threads"][0]["name"], "main",
            "{:?}",
            got[&threads]
        );
        assert_eq!(got[&trace]["message"], "notStopped");
        assert_eq!(
            got[&go]["message"],
            "a function called from the debug console is running (`pause` abandons it)"
        );
        checked = true;
        break;
    }
    assert!(checked, "no round saw the call begun");
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    // Stopped where it was: the same frame, and the program goes on to its
    // result.
    let (again, _) = top_frame(&mut c);
    assert_eq!(
        again["instructionPointerReference"],
        frame["instructionPointerReference"]
    );
    c.ok("continue", json!({"threadId": 1}));
    let result = loop {
        let e = c.event("output");
        if e["body"]["category"] == "stdout" && e["body"]["output"] != "EXEC @spin\n" {
            break e;
        }
    };
    assert_eq!(result["body"]["output"], "result[0]: i64=6\n");
    c.disconnect_cleanly();
}

/// `restart` during a debug-console call abandons it and starts the
/// program again.
#[test]
fn restart_abandons_a_debug_console_call() {
    let mut args = program("spin", "3");
    args["stopOnEntry"] = json!(true);
    let mut c = Client::start();
    launch(&mut c, args);
    c.ok("configurationDone", json!({}));
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    let evaluate = c.send(
        "evaluate",
        json!({"expression": "spin(1000000000000)", "frameId": frame["id"], "context": "repl"}),
    );
    let restart = c.send("restart", json!({}));
    let (got, order) = responses(&mut c, &[evaluate, restart]);
    assert_eq!(order, [evaluate, restart]);
    assert!(
        got[&evaluate]["message"]
            .as_str()
            .is_some_and(|m| m.contains("paused and abandoned")),
        "{:?}",
        got[&evaluate]
    );
    assert_eq!(got[&restart]["success"], true, "{:?}", got[&restart]);
    // Started again: stopped at its entry.
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    c.disconnect_cleanly();
}

/// A debug-console call that a request interrupted (new breakpoints, which
/// the reader thread answers and the program takes up through the VM's
/// interrupt; a request handed to the session) and a `pause` abandoned
/// leaves no stop behind: the next `next` steps one line, as without the
/// call, and `continue` runs to the end.
#[test]
fn after_a_paused_console_call_next_and_continue_run_normally() {
    for handed_over in [false, true] {
        let mut args = program("spin", "3");
        args["stopOnEntry"] = json!(true);
        let mut c = Client::start();
        launch(&mut c, args);
        c.ok("configurationDone", json!({}));
        c.event("stopped");
        let (frame, _) = top_frame(&mut c);
        let evaluate = c.send(
            "evaluate",
            json!({"expression": "spin(1000000000000)", "frameId": frame["id"], "context": "repl"}),
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
        let other = if handed_over {
            c.send("setExceptionBreakpoints", json!({"filters": []}))
        } else {
            c.send(
                "setBreakpoints",
                json!({"source": {"path": path("spin.mlir")}, "breakpoints": []}),
            )
        };
        let pause = c.send("pause", json!({"threadId": 1}));
        let (got, _) = responses(&mut c, &[evaluate, other, pause]);
        assert!(
            got[&evaluate]["message"]
                .as_str()
                .is_some_and(|m| m.contains("abandoned")),
            "{:?}",
            got[&evaluate]
        );
        assert_eq!(got[&other]["success"], true, "{:?}", got[&other]);
        let line = frame["line"].as_i64().expect("line");
        c.ok("next", json!({"threadId": 1}));
        let stopped = c.event("stopped");
        assert_eq!(stopped["body"]["reason"], "step", "{stopped:?}");
        let (after, _) = top_frame(&mut c);
        assert_ne!(after["line"].as_i64(), Some(line), "{after:?} {frame:?}");
        c.ok("continue", json!({"threadId": 1}));
        let result = loop {
            let e = c.event("output");
            if e["body"]["category"] == "stdout" && e["body"]["output"] != "EXEC @spin\n" {
                break e;
            }
        };
        assert_eq!(
            result["body"]["output"], "result[0]: i64=6\n",
            "{handed_over}"
        );
        assert!(
            c.events.iter().all(|e| e["event"] != "stopped"),
            "{handed_over}: {:?}",
            c.events
        );
        c.disconnect_cleanly();
    }
}

/// Stopped at a breakpoint, a debug-console call that new breakpoints
/// interrupted (the program takes them up through the VM's interrupt) and a
/// `pause` abandoned leaves no stop behind: `continue` leaves the
/// breakpoint's instruction and stops at it in the next iteration, with
/// the loop's registers moved on, not at once where it was.
#[test]
fn after_a_paused_console_call_continue_leaves_the_breakpoint() {
    let mut c = Client::start();
    launch(&mut c, program("spin", "3"));
    let stopped = c.run_to_line("spin.mlir", 12);
    assert_eq!(stopped["body"]["reason"], "breakpoint", "{stopped:?}");
    let (frame, _) = top_frame(&mut c);
    let before = scope_variables(&mut c, &frame["id"], "i64 registers");
    let evaluate = c.send(
        "evaluate",
        json!({"expression": "spin(1000000000000)", "frameId": frame["id"], "context": "repl"}),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let set = c.send(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")}, "breakpoints": [{"line": 12}]}),
    );
    let pause = c.send("pause", json!({"threadId": 1}));
    let (got, _) = responses(&mut c, &[evaluate, set, pause]);
    assert!(
        got[&evaluate]["message"]
            .as_str()
            .is_some_and(|m| m.contains("abandoned")),
        "{:?}",
        got[&evaluate]
    );
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "breakpoint", "{stopped:?}");
    let (again, _) = top_frame(&mut c);
    let after = scope_variables(&mut c, &again["id"], "i64 registers");
    assert_eq!(again["line"], frame["line"]);
    assert_ne!(before, after, "stopped again where it was");
    c.disconnect_cleanly();
}
