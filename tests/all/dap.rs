//! `irvm dap` driven as an editor drives it: a small Debug Adapter Protocol
//! client (Content-Length framing, requests, waiting for responses and
//! events) and sessions over the test modules.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::paths::data;

fn path(name: &str) -> String {
    data(name).display().to_string()
}

/// How long any one message may take before the test fails (no hangs).
const WAIT: Duration = Duration::from_secs(20);

/// A DAP client over a running `irvm dap`.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Result<Value, String>>,
    seq: i64,
    /// Events seen while waiting for something else, oldest first.
    events: Vec<Value>,
}

/// Reads one framed message.
fn read_frame(r: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Ok(None);
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').ok_or(format!("bad header {line:?}"))?;
        if name.eq_ignore_ascii_case("Content-Length") {
            length = Some(value.trim().parse::<usize>().map_err(|e| e.to_string())?);
        }
    }
    let n = length.ok_or("no Content-Length")?;
    let mut body = vec![0; n];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| e.to_string())
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_irvm"))
            .arg("dap")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("irvm dap starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_frame(&mut r) {
                    Ok(Some(m)) => {
                        if tx.send(Ok(m)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            messages: rx,
            seq: 0,
            events: Vec::new(),
        }
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let body =
            json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments})
                .to_string();
        self.write_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        self.seq
    }

    fn next_message(&mut self) -> Value {
        match self.messages.recv_timeout(WAIT) {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => panic!("bad message from irvm dap: {e}"),
            Err(_) => panic!(
                "no message from irvm dap within {WAIT:?}; events: {:?}",
                self.events
            ),
        }
    }

    /// Sends a request and returns its response (events that come before
    /// it are kept).
    fn request(&mut self, command: &str, arguments: Value) -> Value {
        let seq = self.send(command, arguments);
        loop {
            let m = self.next_message();
            if m["type"] == "response" && m["request_seq"] == seq {
                assert_eq!(m["command"], command, "{m}");
                return m;
            }
            self.events.push(m);
        }
    }

    /// A successful request's body.
    fn ok(&mut self, command: &str, arguments: Value) -> Value {
        let r = self.request(command, arguments);
        assert_eq!(r["success"], true, "{command} failed: {r}");
        r["body"].clone()
    }

    /// The next event named `name` (earlier ones of other names are kept).
    fn event(&mut self, name: &str) -> Value {
        if let Some(k) = self.events.iter().position(|e| e["event"] == name) {
            return self.events.remove(k);
        }
        loop {
            let m = self.next_message();
            if m["type"] == "event" && m["event"] == name {
                return m;
            }
            self.events.push(m);
        }
    }

    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let status = self.child.wait().expect("irvm dap exits");
        status.code().unwrap_or(-1)
    }
}

/// initialize, launch: the capabilities, and the `initialized` event.
fn launch(c: &mut Client, args: Value) -> Value {
    let caps = c.ok(
        "initialize",
        json!({"clientID": "test", "adapterID": "irvm", "linesStartAt1": true}),
    );
    c.ok("launch", args);
    c.event("initialized");
    caps
}

/// The top frame of thread 1 and the i32 registers of it.
fn top_frame(c: &mut Client) -> (Value, Vec<Value>) {
    c.ok("threads", json!({}));
    let st = c.ok(
        "stackTrace",
        json!({"threadId": 1, "startFrame": 0, "levels": 20}),
    );
    let frame = st["stackFrames"][0].clone();
    let scopes = c.ok("scopes", json!({"frameId": frame["id"]}));
    let i32s = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .find(|s| s["name"] == "i32 registers")
        .expect("an i32 scope")
        .clone();
    let vars = c.ok(
        "variables",
        json!({"variablesReference": i32s["variablesReference"]}),
    );
    (
        frame,
        vars["variables"].as_array().expect("variables").clone(),
    )
}

fn var<'a>(vars: &'a [Value], name: &str) -> &'a str {
    vars.iter()
        .find(|v| v["name"] == name)
        .and_then(|v| v["value"].as_str())
        .unwrap_or_else(|| panic!("{name} not in {vars:?}"))
}

#[test]
fn fib_breakpoints_four_stops_then_the_result() {
    let mut c = Client::start();
    let caps = launch(
        &mut c,
        json!({"modules": [path("fib.vmfb")], "function": "fib", "inputs": ["6"], "sourceDirs": [path("")]}),
    );
    assert_eq!(caps["supportsConditionalBreakpoints"], true);
    assert_eq!(caps["exceptionBreakpointFilters"][0]["filter"], "trap");
    // Line 11 is blank: the breakpoint moves to 12, the next with code.
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [{"line": 11}, {"line": 40}]}),
    );
    let bps = set["breakpoints"].as_array().expect("breakpoints");
    assert_eq!(bps[0]["verified"], true);
    assert_eq!(bps[0]["line"], 12);
    assert_eq!(bps[1]["verified"], false, "{}", bps[1]);
    c.ok("setExceptionBreakpoints", json!({"filters": []}));
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("output")["body"]["output"], "EXEC @fib\n");
    for k in 0..4 {
        let stopped = c.event("stopped");
        assert_eq!(stopped["body"]["reason"], "breakpoint", "{stopped}");
        assert_eq!(stopped["body"]["hitBreakpointIds"][0], bps[0]["id"]);
        let (frame, vars) = top_frame(&mut c);
        assert_eq!(frame["name"], "module.fib");
        assert_eq!(frame["line"], 12);
        assert_eq!(frame["column"], 13);
        assert!(
            frame["source"]["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("tests/data/fib.mlir")),
            "{frame}"
        );
        assert!(frame["instructionPointerReference"]
            .as_str()
            .is_some_and(|r| r.starts_with("0x")));
        // %i1 counts the iterations; %i3, %i4 hold consecutive numbers.
        assert_eq!(var(&vars, "%i1"), k.to_string());
        let fib = [0, 1, 1, 2, 3, 5, 8];
        assert_eq!(var(&vars, "%i3"), fib[k].to_string());
        assert_eq!(var(&vars, "%i4"), fib[k + 1].to_string());
        assert_eq!(var(&vars, "%i0"), "6");
        if k == 3 {
            let cleared = c.ok(
                "setBreakpoints",
                json!({"source": {"path": path("fib.mlir")}, "breakpoints": []}),
            );
            assert_eq!(cleared["breakpoints"], json!([]));
        }
        c.ok("continue", json!({"threadId": 1}));
    }
    let out = c.event("output");
    assert_eq!(out["body"]["category"], "stdout");
    assert_eq!(out["body"]["output"], "result[0]: i32=8\n");
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.event("terminated");
    c.ok("disconnect", json!({}));
    assert_eq!(c.finish(), 0);
}

#[test]
fn traps_stop_with_the_status_then_end_the_program() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("dbg/frames.vmasm")], "function": "main", "inputs": ["3"], "sourceDirs": [path("")]}),
    );
    c.ok("setExceptionBreakpoints", json!({"filters": ["trap"]}));
    c.ok("configurationDone", json!({}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "exception");
    assert_eq!(
        stopped["body"]["text"],
        "INVALID_ARGUMENT: integer division by zero"
    );
    let (frame, vars) = top_frame(&mut c);
    assert_eq!(frame["name"], "frames.main");
    assert_eq!(frame["line"], 12);
    // n - 3 is the zero divisor.
    assert_eq!(var(&vars, "%i15"), "0");
    let e = c.ok(
        "evaluate",
        json!({"expression": "%i15 == 0", "frameId": frame["id"], "context": "watch"}),
    );
    assert_eq!(e["result"], "1");
    c.ok("continue", json!({"threadId": 1}));
    let out = c.event("output");
    let err = loop {
        let o = if out["body"]["category"] == "stderr" {
            out.clone()
        } else {
            c.event("output")
        };
        if o["body"]["category"] == "stderr" {
            break o;
        }
    };
    assert_eq!(
        err["body"]["output"],
        "frames.src:12:7: error: INVALID_ARGUMENT: integer division by zero\n  [0] frames.main+0x00000090 frames.src:12:7\n"
    );
    assert_eq!(c.event("exited")["body"]["exitCode"], 1);
    c.event("terminated");
    c.ok("disconnect", json!({}));
    assert_eq!(c.finish(), 0);
}

#[test]
fn pause_stops_a_long_loop_and_terminate_ends_it() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("spin.vmfb")], "function": "spin", "inputs": ["1000000000000"], "sourceDirs": [path("")]}),
    );
    c.ok("configurationDone", json!({}));
    std::thread::sleep(Duration::from_millis(300));
    c.ok("pause", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "pause");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["name"], "module.spin");
    let scopes = c.ok("scopes", json!({"frameId": 1}));
    let i64s = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .find(|s| s["name"] == "i64 registers")
        .expect("an i64 scope")
        .clone();
    let vars = c.ok(
        "variables",
        json!({"variablesReference": i64s["variablesReference"]}),
    );
    let vars = vars["variables"].as_array().expect("variables").clone();
    assert_eq!(var(&vars, "%i0:1"), "1000000000000");
    let counter: i64 = var(&vars, "%i2:3").parse().expect("a number");
    assert!(counter > 0 && counter < 1_000_000_000_000);
    // Going on and pausing again: the loop moved on.
    c.ok("continue", json!({"threadId": 1}));
    std::thread::sleep(Duration::from_millis(100));
    c.ok("pause", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "pause");
    // terminate while it runs: it stops, and no stop is reported.
    c.ok("continue", json!({"threadId": 1}));
    std::thread::sleep(Duration::from_millis(100));
    c.ok("terminate", json!({}));
    c.event("terminated");
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    // Requests with out-of-range numbers are errors.
    let r = c.request("scopes", json!({"frameId": i64::MIN}));
    assert_eq!(r["message"], format!("no frame with id {}", i64::MIN));
    let r = c.request("variables", json!({"variablesReference": i64::MIN}));
    assert_eq!(r["success"], false);
    c.ok("disconnect", json!({}));
    assert_eq!(c.finish(), 0);
}

#[test]
fn stepping_evaluation_disassembly_and_other_breakpoints() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("dbg/frames.vmasm")], "function": "main", "inputs": ["5"],
               "sourceDirs": [path("")], "stopOnEntry": true, "fuel": 1000000}),
    );
    let fbs = c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "twice", "hitCondition": "2"}, {"name": "nosuch"}]}),
    );
    assert_eq!(fbs["breakpoints"][0]["verified"], true);
    assert_eq!(fbs["breakpoints"][1]["verified"], false);
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 8);
    // stepIn enters twice (line 3); stepOut returns to main's next line.
    c.ok("stepIn", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "step");
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    assert_eq!(st["totalFrames"], 2);
    assert_eq!(st["stackFrames"][0]["name"], "frames.twice");
    assert_eq!(st["stackFrames"][0]["line"], 3);
    assert_eq!(st["stackFrames"][1]["line"], 8);
    c.ok("stepOut", json!({"threadId": 1}));
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(
        (frame["name"].as_str(), frame["line"].as_i64()),
        (Some("frames.main"), Some(9))
    );
    // The function breakpoint's hit condition: its second hit stops.
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "function breakpoint");
    let e = c.ok("evaluate", json!({"expression": "%i0", "frameId": 1}));
    assert_eq!(e["result"], "10");
    let e = c.request("evaluate", json!({"expression": "%i99", "frameId": 1}));
    assert_eq!(e["success"], false);
    assert_eq!(
        e["message"],
        "%i99 is out of range (the frame has 2 i32 registers)"
    );
    c.ok("setFunctionBreakpoints", json!({"breakpoints": []}));
    // next by instruction, then by line.
    c.ok("next", json!({"threadId": 1, "granularity": "instruction"}));
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 4);
    // An instruction breakpoint on the buffer store (line 11), found in
    // the disassembly.
    let ip = frame["instructionPointerReference"]
        .as_str()
        .expect("ip")
        .to_string();
    let main_ip = c.ok("stackTrace", json!({"threadId": 1}))["stackFrames"][1]
        ["instructionPointerReference"]
        .as_str()
        .expect("caller ip")
        .to_string();
    let dis = c.ok(
        "disassemble",
        json!({"memoryReference": main_ip, "instructionOffset": 0, "instructionCount": 40}),
    );
    let insts = dis["instructions"].as_array().expect("instructions");
    assert_eq!(insts.len(), 40);
    assert!(
        insts[0]["instruction"]
            .as_str()
            .is_some_and(|t| t.contains("vm.call")),
        "{}",
        insts[0]
    );
    let store = insts
        .iter()
        .find(|i| {
            i["instruction"]
                .as_str()
                .is_some_and(|t| t.starts_with("vm.buffer.store.i8"))
        })
        .expect("the store")
        .clone();
    assert_eq!(store["line"], 11);
    assert_eq!(insts.last().expect("last")["presentationHint"], "invalid");
    let ibs = c.ok(
        "setInstructionBreakpoints",
        json!({"breakpoints": [{"instructionReference": store["address"]}, {"instructionReference": ip, "offset": 1}]}),
    );
    assert_eq!(ibs["breakpoints"][0]["verified"], true);
    assert_eq!(
        ibs["breakpoints"][1]["verified"], false,
        "the middle of an instruction"
    );
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(
        c.event("stopped")["body"]["reason"],
        "instruction breakpoint"
    );
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 11);
    assert_eq!(frame["instructionPointerReference"], store["address"]);
    // The list in %r0 expands to its elements; the buffer to its bytes.
    let scopes = c.ok("scopes", json!({"frameId": 1}));
    let refs = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .find(|s| s["name"] == "ref registers")
        .expect("a ref scope")
        .clone();
    let vars = c.ok(
        "variables",
        json!({"variablesReference": refs["variablesReference"]}),
    );
    let list = vars["variables"][0].clone();
    assert_eq!(list["name"], "%r0");
    assert_eq!(list["value"], "!vm.list<i32>[3] {10, 20, 5}");
    assert_eq!(list["type"], "!vm.list<i32>");
    let items = c.ok(
        "variables",
        json!({"variablesReference": list["variablesReference"]}),
    );
    let values: Vec<&str> = items["variables"]
        .as_array()
        .expect("items")
        .iter()
        .map(|v| v["value"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(values, ["10", "20", "5"]);
    let buffer = vars["variables"][1].clone();
    let bytes = c.ok(
        "variables",
        json!({"variablesReference": buffer["variablesReference"]}),
    );
    assert_eq!(bytes["variables"][0]["value"], "20");
    assert_eq!(
        bytes["variables"][1]["value"],
        "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    );
    c.ok("setInstructionBreakpoints", json!({"breakpoints": []}));
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("output")["body"]["output"], "EXEC @main\n");
    assert_eq!(c.event("output")["body"]["output"], "result[0]: i32=10\n");
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.ok("disconnect", json!({}));
    assert_eq!(c.finish(), 0);
}

#[test]
fn bad_messages_get_errors_not_panics() {
    let mut c = Client::start();
    // Not JSON: reported, and the session goes on.
    c.write_raw(b"Content-Length: 9\r\n\r\n{not json");
    let e = c.event("output");
    assert!(
        e["body"]["output"]
            .as_str()
            .is_some_and(|t| t.starts_with("irvm dap: message is not JSON")),
        "{e}"
    );
    let r = c.request("frobnicate", json!({}));
    assert_eq!(
        (r["success"].clone(), r["message"].clone()),
        (json!(false), json!("unknown request `frobnicate`"))
    );
    let r = c.request("stackTrace", json!({"threadId": 1}));
    assert_eq!(r["message"], "no program: send `launch` first");
    let r = c.request("launch", json!({"modules": "fib.vmfb"}));
    assert_eq!(r["message"], "`modules` must be an array of strings");
    let r = c.request("launch", json!({"modules": [path("fib.vmfb")]}));
    assert_eq!(
        r["message"],
        "`function` is required (the exported function to debug)"
    );
    let r = c.request(
        "launch",
        json!({"modules": [path("fib.vmfb")], "function": "fib", "inputs": ["1", "2"]}),
    );
    assert_eq!(
        r["message"],
        "INVALID_ARGUMENT; `fib` expects 1 arguments but 2 --input were given"
    );
    let r = c.request(
        "launch",
        json!({"modules": [path("fib.vmfb")], "function": "fib", "inputs": ["1"], "fuel": "lots"}),
    );
    assert_eq!(r["success"], false);
    assert!(
        r["message"].as_str().is_some_and(|m| m.contains("lots")),
        "{r}"
    );
    let r = c.request("continue", json!({"threadId": 1}));
    assert_eq!(r["message"], "no program: send `launch` first");
    // Broken framing ends the session with a message and status 1.
    c.write_raw(b"Content-Length: twelve\r\n\r\n");
    let e = c.event("output");
    assert_eq!(
        e["body"]["output"],
        "irvm dap: bad Content-Length `twelve`\n"
    );
    assert_eq!(c.finish(), 1);
    let mut c = Client::start();
    c.write_raw(b"Hello there\r\n\r\n");
    let e = c.event("output");
    assert_eq!(
        e["body"]["output"],
        "irvm dap: bad header line `Hello there` (expected `Content-Length: N`)\n"
    );
    assert_eq!(c.finish(), 1);
    let mut c = Client::start();
    c.write_raw(b"Content-Length: 99999999999\r\n\r\n");
    let e = c.event("output");
    assert!(
        e["body"]["output"]
            .as_str()
            .is_some_and(|t| t.contains("over the limit")),
        "{e}"
    );
    assert_eq!(c.finish(), 1);
    // The end of input mid-body is an error too; a clean end is not.
    let mut c = Client::start();
    c.write_raw(b"Content-Length: 50\r\n\r\n{\"seq\":1}");
    drop(c.stdin.take());
    let e = c.event("output");
    assert!(
        e["body"]["output"]
            .as_str()
            .is_some_and(|t| t.contains("50-byte message body")),
        "{e}"
    );
    assert_eq!(c.finish(), 1);
    assert_eq!(Client::start().finish(), 0);
}

#[test]
fn source_breakpoint_conditions_and_hit_conditions() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("fib.vmfb")], "function": "fib", "inputs": ["8"], "sourceDirs": [path("")]}),
    );
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [
            {"line": 13, "condition": "%i1 >= 2", "hitCondition": "% 2"},
            {"line": 12, "condition": "%i1 =="},
            {"line": 12, "hitCondition": "often"}
        ]}),
    );
    let bps = set["breakpoints"].as_array().expect("breakpoints");
    assert_eq!(bps[0]["verified"], true);
    assert_eq!(bps[1]["verified"], false);
    assert!(
        bps[1]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot evaluate")),
        "{}",
        bps[1]
    );
    assert_eq!(bps[2]["verified"], false);
    assert!(
        bps[2]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("bad hit condition")),
        "{}",
        bps[2]
    );
    c.ok("configurationDone", json!({}));
    // The condition holds from i = 2; every second of those hits stops.
    for want in ["3", "5", "7"] {
        assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
        let (frame, vars) = top_frame(&mut c);
        assert_eq!(frame["line"], 13);
        assert_eq!(var(&vars, "%i1"), want);
        c.ok("continue", json!({"threadId": 1}));
    }
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.ok("disconnect", json!({}));
    assert_eq!(c.finish(), 0);
}
