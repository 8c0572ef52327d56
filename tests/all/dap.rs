//! `irvm dap` driven as an editor drives it: a small Debug Adapter Protocol
//! client (Content-Length framing, requests, waiting for responses and
//! events) and sessions over the test modules.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::paths::data;

pub(crate) fn path(name: &str) -> String {
    data(name).display().to_string()
}

/// How long any one message may take before the test fails (no hangs).
const WAIT: Duration = Duration::from_secs(20);

/// How long an answer that comes in milliseconds on a quiet machine may take
/// on a loaded one, where what is tested is that it does not wait for a
/// dispatch of seconds to end (terminate cutting one,
/// [`inside_long_dispatch`]); answers inside a dispatch that is not cut are
/// checked by their order before the program's stop instead.
const PROMPT: Duration = Duration::from_secs(2);

/// A DAP client over a running `irvm dap`.
pub(crate) struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Result<Value, String>>,
    seq: i64,
    /// Events seen while waiting for something else, oldest first.
    pub(crate) events: Vec<Value>,
    /// The `seq` of the last message read: each one's is one more.
    last_seq: i64,
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
    pub(crate) fn start() -> Client {
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
            last_seq: 0,
        }
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends a request without waiting for its response; its `seq`.
    pub(crate) fn send(&mut self, command: &str, arguments: Value) -> i64 {
        self.seq += 1;
        let body =
            json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments})
                .to_string();
        self.write_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        self.seq
    }

    /// The next message, event or response.
    pub(crate) fn next_message(&mut self) -> Value {
        match self.messages.recv_timeout(WAIT) {
            Ok(Ok(m)) => {
                assert_eq!(m["seq"], self.last_seq + 1, "seq out of order: {m}");
                self.last_seq += 1;
                m
            }
            Ok(Err(e)) => panic!("bad message from irvm dap: {e}"),
            Err(_) => panic!(
                "no message from irvm dap within {WAIT:?}; events: {:?}",
                self.events
            ),
        }
    }

    /// Sends a request and returns its response (events that come before
    /// it are kept).
    pub(crate) fn request(&mut self, command: &str, arguments: Value) -> Value {
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
    pub(crate) fn ok(&mut self, command: &str, arguments: Value) -> Value {
        let r = self.request(command, arguments);
        assert_eq!(r["success"], true, "{command} failed: {r}");
        r["body"].clone()
    }

    /// The next event named `name` (earlier ones of other names are kept).
    pub(crate) fn event(&mut self, name: &str) -> Value {
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

    /// Ends the session with `disconnect`; the adapter exits with 0.
    pub(crate) fn disconnect_cleanly(mut self) {
        self.ok("disconnect", json!({}));
        assert_eq!(self.finish(), 0);
    }

    /// Sets one breakpoint, on `line` of tests/data's `file`, starts the
    /// launched program and waits for its first stop (returned).
    pub(crate) fn run_to_line(&mut self, file: &str, line: i64) -> Value {
        let set = self.ok(
            "setBreakpoints",
            json!({"source": {"path": path(file)}, "breakpoints": [{"line": line}]}),
        );
        assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
        self.ok("configurationDone", json!({}));
        self.event("stopped")
    }

    fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let status = self.child.wait().expect("irvm dap exits");
        status.code().unwrap_or(-1)
    }
}

/// Launch attributes: `NAME(input)` of tests/data's `NAME.vmfb`, with
/// tests/data as the source directory.
pub(crate) fn program(name: &str, input: &str) -> Value {
    json!({"modules": [path(&format!("{name}.vmfb"))], "function": name, "inputs": [input], "sourceDirs": [path("")]})
}

/// `irvm dap` started, initialized and launched with these attributes.
pub(crate) fn launched(args: Value) -> Client {
    let mut c = Client::start();
    launch(&mut c, args);
    c
}

/// initialize, launch: the capabilities, and the `initialized` event.
pub(crate) fn launch(c: &mut Client, args: Value) -> Value {
    let caps = c.ok(
        "initialize",
        json!({"clientID": "test", "adapterID": "irvm", "linesStartAt1": true}),
    );
    c.ok("launch", args);
    c.event("initialized");
    caps
}

/// The top frame of thread 1 and the i32 registers of it.
pub(crate) fn top_frame(c: &mut Client) -> (Value, Vec<Value>) {
    c.ok("threads", json!({}));
    let st = c.ok(
        "stackTrace",
        json!({"threadId": 1, "startFrame": 0, "levels": 20}),
    );
    let frame = st["stackFrames"][0].clone();
    let vars = scope_variables(c, &frame["id"], "i32 registers");
    (frame, vars)
}

/// The variables of the scope named `scope` (`i32 registers`, ...) of frame
/// `frame`.
pub(crate) fn scope_variables(c: &mut Client, frame: &Value, scope: &str) -> Vec<Value> {
    let scopes = c.ok("scopes", json!({"frameId": frame}));
    let found = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .find(|s| s["name"] == scope)
        .unwrap_or_else(|| panic!("no scope {scope:?} in {scopes}"))
        .clone();
    let vars = c.ok(
        "variables",
        json!({"variablesReference": found["variablesReference"]}),
    );
    vars["variables"].as_array().expect("variables").clone()
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
    let caps = launch(&mut c, program("fib", "6"));
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
    c.disconnect_cleanly();
}

#[test]
fn traps_stop_with_the_status_then_end_the_program() {
    let mut c = launched(
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
    let info = c.ok("exceptionInfo", json!({"threadId": 1}));
    assert_eq!(info["exceptionId"], "INVALID_ARGUMENT");
    assert_eq!(info["description"], "integer division by zero");
    assert_eq!(info["breakMode"], "always");
    assert!(
        info["details"]["stackTrace"]
            .as_str()
            .is_some_and(|t| t.contains("[0] frames.main+0x00000090 frames.src:12:7")),
        "{info}"
    );
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
    c.disconnect_cleanly();
}

#[test]
fn pause_stops_a_long_loop_and_terminate_ends_it() {
    let mut c = launched(program("spin", "1000000000000"));
    c.ok("configurationDone", json!({}));
    // What the protocol guarantees, not how far the loop got by some time:
    // each pause is answered, then stops the program (reason `pause`) in
    // `spin` with its frame readable, its argument intact and its counter
    // below it; the loop never goes back. (A pause may come before any
    // iteration, at once or on a loaded machine: the counter is then as
    // it was; asserting that it moved on after up to three pauses failed
    // once under load.)
    let mut last = 0;
    for _ in 0..3 {
        c.ok("pause", json!({"threadId": 1}));
        let stopped = c.event("stopped");
        assert_eq!(stopped["body"]["reason"], "pause");
        let (frame, _) = top_frame(&mut c);
        assert_eq!(frame["name"], "module.spin");
        let vars = scope_variables(&mut c, &json!(1), "i64 registers");
        assert_eq!(var(&vars, "%i0:1"), "1000000000000");
        let counter: i64 = var(&vars, "%i2:3").parse().expect("a number");
        assert!(
            (last..1_000_000_000_000).contains(&counter),
            "{counter} after {last}"
        );
        last = counter;
        c.ok("continue", json!({"threadId": 1}));
    }
    // terminate while it runs: it stops, and no stop is reported.
    c.ok("terminate", json!({}));
    c.event("terminated");
    // `exited` (as `irvm run` ends a stopped program: 1) came first.
    let exited = c.events.iter().position(|e| e["event"] == "exited");
    assert!(exited.is_some(), "{:?}", c.events);
    assert_eq!(c.events[exited.unwrap_or(0)]["body"]["exitCode"], 1);
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
    c.disconnect_cleanly();
}

#[test]
fn stepping_evaluation_disassembly_and_other_breakpoints() {
    let mut c = launched(
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
    let vars = scope_variables(&mut c, &json!(1), "ref registers");
    let list = vars[0].clone();
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
    let buffer = vars[1].clone();
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
    c.disconnect_cleanly();
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
    let mut c = launched(program("fib", "8"));
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
            .is_some_and(|m| m.contains("A syntax error in expression, near `'.")),
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
    c.disconnect_cleanly();
}

impl Client {
    /// Waits for `irvm dap` to exit (failing after [`WAIT`]); its status.
    fn exit_status(mut self) -> i32 {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("irvm dap did not exit within {WAIT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `spin` over a count it does not finish soon, launched and running.
fn spinning() -> Client {
    let mut c = launched(program("spin", "1000000000000"));
    c.ok("configurationDone", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    c
}

#[test]
fn requests_are_served_while_the_program_runs() {
    let mut c = spinning();
    // threads is answered; frames need a stopped program (`notStopped`).
    let threads = c.ok("threads", json!({}));
    assert_eq!(threads["threads"][0]["id"], 1);
    let r = c.request("stackTrace", json!({"threadId": 1}));
    assert_eq!(r["success"], false);
    assert_eq!(r["message"], "notStopped");
    assert_eq!(
        r["body"]["error"]["format"],
        "the program is running (pause it first)"
    );
    let r = c.request("completions", json!({"text": "%", "column": 2}));
    assert_eq!(r["message"], "notStopped");
    let r = c.request("continue", json!({"threadId": 1}));
    assert_eq!(r["message"], "the program is already running");
    // A breakpoint set during the loop stops it at once.
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")}, "breakpoints": [{"line": 13}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true);
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    assert_eq!(
        stopped["body"]["hitBreakpointIds"][0],
        set["breakpoints"][0]["id"]
    );
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 13);
    // Cleared, running again, then the pause: its answer comes before its
    // stopped event.
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")}, "breakpoints": []}),
    );
    c.ok("continue", json!({"threadId": 1}));
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    c.ok("pause", json!({"threadId": 1}));
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "stopped before the pause response: {:?}",
        c.events
    );
    assert_eq!(c.event("stopped")["body"]["reason"], "pause");
    c.ok("disconnect", json!({}));
    assert_eq!(c.exit_status(), 0);
}

#[test]
fn the_adapter_ends_the_program_and_exits_when_stdin_closes() {
    let mut c = spinning();
    drop(c.stdin.take());
    assert_eq!(c.exit_status(), 0);
}

#[test]
fn error_responses_carry_a_message_body() {
    let mut c = Client::start();
    let r = c.request("frobnicate", json!({}));
    assert_eq!(r["success"], false);
    assert_eq!(r["body"]["error"]["format"], "unknown request `frobnicate`");
    assert!(r["body"]["error"]["id"].is_i64(), "{r}");
    c.disconnect_cleanly();
}

#[test]
fn step_out_of_the_outermost_frame_runs_to_the_end() {
    let mut c = launched(
        json!({"modules": [path("dbg/frames.vmasm")], "function": "main", "inputs": ["5"],
               "sourceDirs": [path("")], "stopOnEntry": true}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    c.ok("stepOut", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.event("terminated");
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    let r = c.request("next", json!({"threadId": 1}));
    assert_eq!(r["message"], "the program has ended");
    c.disconnect_cleanly();
}

/// VS Code's "Jump to Cursor": `gotoTargets` lists where a line of the
/// current function starts, `goto` moves the frame there (a `stopped`
/// event of reason `goto` after the response) and the program goes on
/// from there; lines of other functions are refused.
#[test]
fn goto_moves_the_frame_to_a_line_of_its_function() {
    let mut c = Client::start();
    let caps = launch(
        &mut c,
        json!({"modules": [path("dbg/frames.vmasm")], "function": "main", "inputs": ["5"],
               "sourceDirs": [path("")]}),
    );
    assert_eq!(caps["supportsGotoTargetsRequest"], true);
    let stopped = c.run_to_line("dbg/frames.src", 9);
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    let source = json!({"path": path("dbg/frames.src")});
    let other = c.request("gotoTargets", json!({"source": source, "line": 3}));
    assert_eq!(other["success"], false);
    assert_eq!(
        other["message"],
        "line 3 has no code in `main`, the function the program is stopped in \
         (goto moves only within it)"
    );
    let stale = c.request("goto", json!({"threadId": 1, "targetId": 7}));
    assert_eq!(
        stale["message"],
        "no goto target 7 (ask `gotoTargets` first)"
    );
    let targets = c.ok("gotoTargets", json!({"source": source, "line": 12}));
    let target = &targets["targets"][0];
    assert_eq!(target["label"], "frames.main+0x00000089", "{targets}");
    assert_eq!(target["line"], 12);
    assert_eq!(target["column"], 7);
    assert!(
        target["instructionPointerReference"].is_string(),
        "{target}"
    );
    assert_eq!(targets["targets"].as_array().map(Vec::len), Some(1));
    c.ok("goto", json!({"threadId": 1, "targetId": target["id"]}));
    assert_eq!(c.event("stopped")["body"]["reason"], "goto");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 12, "{frame}");
    assert_eq!(
        frame["instructionPointerReference"],
        target["instructionPointerReference"]
    );
    // The debug console calls functions (a hover never does).
    let called = c.ok(
        "evaluate",
        json!({"expression": "twice(%i0)", "context": "repl", "frameId": frame["id"]}),
    );
    // (numbered in gdb's value history, as gdb's console shows a call)
    assert_eq!(called["result"], "$1 = 10");
    let hover = c.request(
        "evaluate",
        json!({"expression": "twice(%i0)", "context": "hover", "frameId": frame["id"]}),
    );
    assert_eq!(hover["success"], false, "{hover}");
    let watch = c.request(
        "evaluate",
        json!({"expression": "twice(%i0)", "context": "watch", "frameId": frame["id"]}),
    );
    assert_eq!(watch["success"], false, "{watch}");
    let failed = c.request(
        "evaluate",
        json!({"expression": "main(3)", "context": "repl", "frameId": frame["id"]}),
    );
    assert_eq!(
        failed["message"],
        "the call of `main` failed: INVALID_ARGUMENT: integer division by zero \
         (it was abandoned; the program stays where it stopped)"
    );
    // Lines 9 to 11 skipped: b is 0, and so is b / (n - 3).
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("output")["body"]["output"], "EXEC @main\n");
    assert_eq!(c.event("output")["body"]["output"], "result[0]: i32=0\n");
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.disconnect_cleanly();
}

/// In a function without debug information the lines are those of its
/// disassembly document: one instruction each.
#[test]
fn goto_moves_within_a_disassembly_document() {
    let mut c = launched(
        json!({"modules": [path("lib_b.vmfb"), path("app_a.vmfb")], "function": "main", "inputs": ["4"],
               "stopOnEntry": true}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 3);
    // Line 2 is the block label: no instruction.
    let label = c.request("gotoTargets", json!({"source": frame["source"], "line": 2}));
    assert_eq!(label["success"], false, "{label}");
    let targets = c.ok("gotoTargets", json!({"source": frame["source"], "line": 4}));
    let target = targets["targets"][0].clone();
    assert_eq!(target["line"], 4, "{targets}");
    c.ok("goto", json!({"threadId": 1, "targetId": target["id"]}));
    assert_eq!(c.event("stopped")["body"]["reason"], "goto");
    let (moved, _) = top_frame(&mut c);
    assert_eq!(moved["line"], 4, "{moved}");
    assert_eq!(moved["source"], frame["source"]);
    c.disconnect_cleanly();
}

/// `EXEC @function` goes out once the `__init`s have run, where `irvm run`
/// prints it, and `stepOut` of an `__init`'s outermost frame is refused
/// as gdb refuses `finish` there.
#[test]
fn exec_follows_the_initializers_and_step_out_of_an_init_is_refused() {
    let mut c = launched(json!({"modules": [path("dbg/counter.vmasm")], "function": "main"}));
    c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "__init"}]}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "function breakpoint");
    assert!(
        c.events.iter().all(|e| e["event"] != "output"),
        "{:?}",
        c.events
    );
    let out = c.request("stepOut", json!({"threadId": 1}));
    assert_eq!(out["success"], false);
    assert_eq!(
        out["message"],
        "\"finish\" not meaningful in the outermost frame."
    );
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("output")["body"]["output"], "EXEC @main\n");
    assert_eq!(c.event("output")["body"]["output"], "result[0]: i32=101\n");
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.disconnect_cleanly();
}

#[test]
fn the_last_step_does_not_land_on_the_function_line() {
    // fib's final vm.return is at `func.func @fib` (3:1), the compiler's
    // location: stepping from the loop condition ends the program.
    let mut c = launched(program("fib", "0"));
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [{"line": 8}]}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    c.ok("next", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    c.disconnect_cleanly();
}

#[test]
fn lines_and_columns_from_zero() {
    let mut c = Client::start();
    c.ok(
        "initialize",
        json!({"adapterID": "irvm", "linesStartAt1": false, "columnsStartAt1": false}),
    );
    c.ok("launch", program("fib", "3"));
    // Line 10 from 0 is line 11 (blank): it moves to 12, 11 from 0.
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [{"line": 10}]}),
    );
    assert_eq!(set["breakpoints"][0]["line"], 11);
    let far = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [{"line": 10}, {"line": i64::MIN}, {"line": i64::MAX}]}),
    );
    assert_eq!(far["breakpoints"][1]["verified"], false);
    assert_eq!(far["breakpoints"][2]["verified"], false);
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(
        (frame["line"].clone(), frame["column"].clone()),
        (json!(11), json!(12))
    );
    let dis = c.ok(
        "disassemble",
        json!({"memoryReference": frame["instructionPointerReference"], "instructionCount": 1}),
    );
    assert_eq!(dis["instructions"][0]["line"], 11);
    assert_eq!(dis["instructions"][0]["column"], 12);
    c.disconnect_cleanly();
}

/// An address as a number.
fn address(v: &Value) -> u64 {
    let text = v.as_str().expect("an address");
    u64::from_str_radix(text.trim_start_matches("0x"), 16).expect("hex")
}

#[test]
fn disassemble_as_the_disassembly_view_asks() {
    let mut c = launched(program("fib", "3"));
    c.run_to_line("fib.mlir", 13);
    let (frame, _) = top_frame(&mut c);
    let ip = frame["instructionPointerReference"].clone();
    let dis = c.ok(
        "disassemble",
        json!({"memoryReference": ip, "instructionOffset": -200, "instructionCount": 400, "resolveSymbols": true}),
    );
    let insts = dis["instructions"].as_array().expect("instructions");
    assert_eq!(insts.len(), 400);
    // Addresses strictly increase; the function's 9 instructions sit
    // between filler entries; the stopped-at one is entry 200.
    let addresses: Vec<u64> = insts.iter().map(|i| address(&i["address"])).collect();
    assert!(addresses.windows(2).all(|w| w[0] < w[1]), "{addresses:x?}");
    assert_eq!(insts[200]["address"], ip);
    let real: Vec<usize> = (0..400)
        .filter(|&k| insts[k]["presentationHint"] != "invalid")
        .collect();
    assert_eq!(real.len(), 9, "{real:?}");
    assert!(
        real.windows(2).all(|w| w[1] == w[0] + 1),
        "contiguous: {real:?}"
    );
    assert!(real[0] > 0 && *real.last().expect("last") < 399);
    assert!(insts[real[0] - 1]["instruction"] == "" && insts[real[8] + 1]["instruction"] == "");
    // Block labels are symbols of the instructions they start.
    assert!(insts
        .iter()
        .all(|i| !i["instruction"].as_str().unwrap_or("").starts_with('^')));
    assert_eq!(insts[real[0]]["symbol"], "fib");
    let symbols: Vec<&str> = insts.iter().filter_map(|i| i["symbol"].as_str()).collect();
    assert_eq!(symbols, ["fib", "fib ^bb1", "fib ^bb2", "fib ^bb3"]);
    assert_eq!(insts[200]["instruction"], "%i1 = vm.add.i32 %i1, %i2");
    // Scrolling up from the first filler entry: more filler just below.
    let first = insts[0]["address"].clone();
    let up = c.ok(
        "disassemble",
        json!({"memoryReference": first, "instructionOffset": -50, "instructionCount": 50}),
    );
    let up = up["instructions"].as_array().expect("instructions");
    assert_eq!(up.len(), 50);
    assert!(up.iter().all(|i| i["presentationHint"] == "invalid"));
    assert_eq!(address(&up[49]["address"]) + 1, addresses[0]);
    // Offsets beyond any address: an error, not a crash.
    for far in [i64::MIN, i64::MAX] {
        let r = c.request(
            "disassemble",
            json!({"memoryReference": ip, "instructionOffset": far, "instructionCount": 2}),
        );
        assert_eq!(
            r["message"], "the address range of this function is exhausted",
            "{r}"
        );
    }
    // Past the end, and from there backwards: the same instructions.
    let last = insts[real[8]]["address"].clone();
    let back = c.ok(
        "disassemble",
        json!({"memoryReference": last, "instructionOffset": -8, "instructionCount": 12}),
    );
    let back = back["instructions"].as_array().expect("instructions");
    assert_eq!(back[..9], insts[real[0]..=real[8]]);
    assert_eq!(back[9]["presentationHint"], "invalid");
    c.disconnect_cleanly();
}

/// A temporary directory for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("irvm-dap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn sources_keep_the_clients_path_and_match_whole_paths() {
    let dir = scratch("sources");
    // The project opened through a symlink.
    let link = dir.join("project");
    std::os::unix::fs::symlink(data(""), &link).expect("symlink");
    // Another file of the same name elsewhere.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).expect("other dir");
    std::fs::copy(data("fib.mlir"), other.join("fib.mlir")).expect("copy");
    let through_link = link.join("fib.mlir").display().to_string();
    let mut c = launched(
        json!({"modules": [link.join("fib.vmfb").display().to_string()], "function": "fib", "inputs": ["3"]}),
    );
    let elsewhere = c.ok(
        "setBreakpoints",
        json!({"source": {"path": other.join("fib.mlir").display().to_string()}, "breakpoints": [{"line": 12}]}),
    );
    assert_eq!(elsewhere["breakpoints"][0]["verified"], false);
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": through_link}, "breakpoints": [{"line": 13}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true);
    c.ok("configurationDone", json!({}));
    let stopped = c.event("stopped");
    assert_eq!(
        stopped["body"]["hitBreakpointIds"],
        json!([set["breakpoints"][0]["id"]])
    );
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["source"]["path"], through_link.as_str());
    assert_eq!(frame["source"]["name"], "fib.mlir");
    c.disconnect_cleanly();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn functions_without_debug_information_show_their_disassembly() {
    let mut c = launched(
        json!({"modules": [path("lib_b.vmfb"), path("app_a.vmfb")], "function": "main", "inputs": ["4"],
               "stopOnEntry": true}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    let frame = &st["stackFrames"][0];
    assert_eq!(frame["source"]["name"], "app_a.main.vmasm");
    let reference = frame["source"]["sourceReference"].clone();
    assert!(reference.as_i64().is_some_and(|r| r > 0), "{frame}");
    // Line 1 is a header, 2 the block label, 3 the first instruction.
    assert_eq!(frame["line"], 3);
    // Nothing that makes VS Code pass over the frame where it stopped.
    assert!(
        frame.get("presentationHint").is_none()
            && frame["source"].get("presentationHint").is_none(),
        "{frame}"
    );
    let text = c.ok(
        "source",
        json!({"source": frame["source"], "sourceReference": reference}),
    );
    let lines: Vec<&str> = text["content"].as_str().expect("content").lines().collect();
    assert_eq!(lines[1], "^bb0:");
    assert!(
        lines[2].contains("vm.call @lib_b.add(%i0, %i0)"),
        "{lines:?}"
    );
    let r = c.request("source", json!({"sourceReference": 99}));
    assert_eq!(r["message"], "no source with reference 99");
    // A breakpoint in that document: the label line 2 moves to line 3's
    // instruction; line 4 is the second call.
    let set = c.ok(
        "setBreakpoints",
        json!({"source": frame["source"], "breakpoints": [{"line": 2}, {"line": 4}, {"line": 9}]}),
    );
    let bps = set["breakpoints"].as_array().expect("breakpoints");
    assert_eq!(
        (bps[0]["verified"].clone(), bps[0]["line"].clone()),
        (json!(true), json!(3))
    );
    assert_eq!(
        (bps[1]["verified"].clone(), bps[1]["line"].clone()),
        (json!(true), json!(4))
    );
    assert_eq!(bps[2]["verified"], false);
    c.ok(
        "setBreakpoints",
        json!({"source": frame["source"], "breakpoints": [{"line": 4}]}),
    );
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    assert_eq!(st["stackFrames"][0]["line"], 4);
    assert!(lines[3].contains("vm.call @lib_b.widen"), "{lines:?}");
    c.disconnect_cleanly();
}

/// Where the protocol's JSON schema is: `IRVM_DAP_SCHEMA`, or where
/// `.ci/run` puts it.
fn dap_schema() -> Option<std::path::PathBuf> {
    let path = match std::env::var_os("IRVM_DAP_SCHEMA") {
        Some(p) => std::path::PathBuf::from(p),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?)
            .join(".cache/irvm-dap-schema/debugAdapterProtocol.json"),
    };
    path.is_file().then_some(path)
}

#[test]
fn microsofts_test_harness_with_every_message_checked_against_the_schema() {
    let suite = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dap-node");
    let node_works = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_works {
        eprintln!("skipping: no `node` on PATH (.ci/run runs this suite with Debian's or the machine's node)");
        return;
    }
    if !suite
        .join("node_modules/@vscode/debugadapter-testsupport")
        .is_dir()
    {
        eprintln!(
            "skipping: tests/dap-node has no node_modules (run `npm ci` there; .ci/run does)"
        );
        return;
    }
    let Some(schema) = dap_schema() else {
        eprintln!(
            "skipping: no debugAdapterProtocol.json (set IRVM_DAP_SCHEMA; .ci/run fetches it to \
             ~/.cache/irvm-dap-schema)"
        );
        return;
    };
    let out = Command::new("node")
        .arg("--test")
        .current_dir(&suite)
        .env("IRVM_BIN", env!("CARGO_BIN_EXE_irvm"))
        .env("IRVM_DAP_SCHEMA", schema)
        .output()
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the node suite failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("# fail 0"), "{text}");
    assert!(!text.contains("# pass 0"), "{text}");
}

/// The variables of the frame's "Source names" scope.
fn source_names(c: &mut Client, frame: &Value) -> Vec<Value> {
    let scopes = c.ok("scopes", json!({"frameId": frame["id"]}));
    let scope = scopes["scopes"][0].clone();
    assert_eq!(scope["name"], "Source names", "{scopes}");
    let vars = c.ok(
        "variables",
        json!({"variablesReference": scope["variablesReference"]}),
    );
    vars["variables"].as_array().expect("variables").clone()
}

#[test]
fn source_names_in_variables_hover_and_evaluate() {
    let mut c = launched(program("fib", "6"));
    c.run_to_line("fib.mlir", 14);
    c.ok("continue", json!({"threadId": 1}));
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    let vars = source_names(&mut c, &frame);
    let by_name = |n: &str| {
        vars.iter()
            .find(|v| v["name"] == n)
            .unwrap_or_else(|| panic!("{n} not in {vars:?}"))
            .clone()
    };
    // Second iteration, before the yield: k1 = 2, next = 1 + 1.
    assert_eq!(by_name("%one")["value"], "1");
    assert_eq!(by_name("%one")["type"], "i32 in %i2");
    assert_eq!(by_name("%one")["evaluateName"], "%i2");
    assert_eq!(by_name("%k1")["value"], "2");
    assert_eq!(by_name("%k1")["type"], "i32 in %i1, shared with %zero");
    assert_eq!(by_name("%next")["value"], "2");
    assert_eq!(by_name("%next")["type"], "i32 in %i5, shared with %more");
    let names: Vec<&str> = vars.iter().filter_map(|v| v["name"].as_str()).collect();
    assert_eq!(names, ["%k1", "%more", "%n", "%next", "%one", "%zero"]);
    // The argument, where the calling convention put it.
    assert_eq!(by_name("%n")["value"], "6");
    assert_eq!(by_name("%n")["type"], "i32 in %i0");
    let hover = c.ok(
        "evaluate",
        json!({"expression": "%k1", "frameId": frame["id"], "context": "hover"}),
    );
    assert_eq!(hover["result"], "2");
    let watch = c.ok(
        "evaluate",
        json!({"expression": "%next >= %one", "frameId": frame["id"], "context": "watch"}),
    );
    assert_eq!(watch["result"], "1");
    let r = c.request(
        "evaluate",
        json!({"expression": "%s", "frameId": frame["id"], "context": "hover"}),
    );
    assert_eq!(
        r["message"],
        "`%s` is neither a register nor a source name of this function"
    );
    c.disconnect_cleanly();
}

#[test]
fn a_source_name_spelled_like_a_register_is_the_sources_over_the_text() {
    // spin.mlir names `%i1 = arith.addi %i, %one : i64`.
    let mut c = launched(program("spin", "10"));
    c.run_to_line("spin.mlir", 15);
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    let frame = st["stackFrames"][0].clone();
    let hover = c.ok(
        "evaluate",
        json!({"expression": "%i1", "frameId": frame["id"], "context": "hover"}),
    );
    assert_eq!(hover["result"], "1");
    assert_eq!(hover["type"], "i64");
    let n = c.ok(
        "evaluate",
        json!({"expression": "%n", "frameId": frame["id"], "context": "hover"}),
    );
    assert_eq!(
        (n["result"].clone(), n["type"].clone()),
        (json!("10"), json!("i64"))
    );
    let repl = c.ok(
        "evaluate",
        json!({"expression": "%i1", "frameId": frame["id"], "context": "repl"}),
    );
    // The VM's %i1: one i32 slot (here the high half of an i64 pair).
    assert_eq!(repl["type"], "i32");
    c.disconnect_cleanly();
}

#[test]
fn the_vscode_extension_packages_and_finds_irvm() {
    let extension = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode");
    let npx_works = Command::new("npx")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !npx_works {
        eprintln!("skipping: no `npx` on PATH (.ci/run packages the extension with npm's)");
        return;
    }
    if !extension.join("node_modules/@vscode/vsce").is_dir() {
        eprintln!(
            "skipping: editors/vscode has no node_modules (run `npm ci` there; .ci/run does)"
        );
        return;
    }
    // The extension's own tests: finding irvm through the setting and
    // PATH, and the `%name` under the mouse.
    let out = Command::new("node")
        .arg("--test")
        .current_dir(&extension)
        .output()
        .expect("node runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("# fail 0"), "{text}");
    // The README's packaging command.
    let dir = tempfile::tempdir().expect("temp dir");
    let vsix = dir.path().join("irvm-debug.vsix");
    let out = Command::new("npx")
        .args([
            "@vscode/vsce",
            "package",
            "--allow-missing-repository",
            "--skip-license",
            "--out",
        ])
        .arg(&vsix)
        .current_dir(&extension)
        .stdin(Stdio::null())
        .output()
        .expect("npx runs");
    assert!(
        out.status.success(),
        "vsce package failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The package holds the extension and its manifest declares the
    // debugger (read back with Python's zipfile, as .ci/run has python3).
    let listing = Command::new("python3")
        .args([
            "-c",
            "import json, sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             names = sorted(n for n in z.namelist() if n.startswith('extension/'))\n\
             manifest = json.loads(z.read('extension/package.json'))\n\
             print(json.dumps({'files': names, 'debuggers': manifest['contributes']['debuggers'],\n\
                               'breakpoints': manifest['contributes']['breakpoints']}))",
        ])
        .arg(&vsix)
        .output()
        .expect("python3 runs");
    assert!(
        listing.status.success(),
        "{}",
        String::from_utf8_lossy(&listing.stderr)
    );
    let package: Value = serde_json::from_slice(&listing.stdout).expect("json");
    assert_eq!(
        package["files"],
        json!([
            "extension/extension.js",
            "extension/find-irvm.js",
            "extension/hover-name.js",
            "extension/package.json",
            "extension/readme.md"
        ])
    );
    assert_eq!(package["debuggers"][0]["type"], "irvm");
    assert_eq!(
        package["breakpoints"],
        json!([{"language": "mlir"}, {"language": "vmasm"}])
    );
}

/// `main` calls `count`, a loop of N iterations, on line 8; line 9 adds.
const COUNTING: &str = "vm.module @m version 0\nvm.type i32\n\
vm.func @count(%i0: i32) -> (i32) {\n^bb0:\n\
  %i1 = vm.const.i32.zero loc(\"m.src\":2:3)\n\
  %i3 = vm.const.i32 1 loc(\"m.src\":2:3)\n\
  vm.br ^bb1() loc(\"m.src\":2:3)\n\
^bb1:\n\
  %i2 = vm.cmp.lt.i32.s %i1, %i0 loc(\"m.src\":3:3)\n\
  vm.cond_br %i2, ^bb2(), ^bb3() loc(\"m.src\":3:3)\n\
^bb2:\n\
  %i1 = vm.add.i32 %i1, %i3 loc(\"m.src\":4:3)\n\
  vm.br ^bb1() loc(\"m.src\":4:3)\n\
^bb3:\n\
  vm.return %i1 loc(\"m.src\":5:3)\n}\n\
vm.export @main\n\
vm.func @main(%i0: i32) -> (i32) {\n^bb0:\n\
  %i1 = vm.call @m:0(%i0) loc(\"m.src\":8:3)\n\
  %i2 = vm.add.i32 %i1, %i1 loc(\"m.src\":9:3)\n\
  vm.return %i2 loc(\"m.src\":10:3)\n}\n";

#[test]
fn a_request_during_a_step_over_a_long_call_does_not_end_the_step() {
    let dir = scratch("step");
    let module = dir.join("m.vmasm");
    std::fs::write(&module, COUNTING).expect("module");
    let mut c = launched(
        json!({"modules": [module.display().to_string()], "function": "main", "inputs": ["1000000"],
               "stopOnEntry": true}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    c.ok("next", json!({"threadId": 1}));
    // Served while the step runs (its answer comes before the stop).
    c.ok("threads", json!({}));
    let set = c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "nosuch"}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], false);
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "step");
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    assert_eq!(st["totalFrames"], 1);
    assert_eq!(st["stackFrames"][0]["line"], 9);
    let e = c.ok("evaluate", json!({"expression": "%i1", "frameId": 1}));
    assert_eq!(e["result"], "1000000");
    c.disconnect_cleanly();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The values of the "Source names" scope of the top frame, by name.
fn named_values(c: &mut Client) -> Vec<(String, String, String)> {
    let (frame, _) = top_frame(c);
    source_names(c, &frame)
        .iter()
        .map(|v| {
            let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            (text("name"), text("value"), text("type"))
        })
        .collect()
}

#[test]
fn a_hovered_word_without_its_percent_sign_is_the_source_name() {
    // VS Code's and nvim-dap's word under the mouse leaves out the `%`.
    let mut c = launched(program("fib", "6"));
    c.run_to_line("fib.mlir", 14);
    c.ok("continue", json!({"threadId": 1}));
    c.event("stopped");
    let hover = |c: &mut Client, e: &str| {
        c.request(
            "evaluate",
            json!({"expression": e, "frameId": 1, "context": "hover"}),
        )
    };
    // Second iteration, before the yield: k1 = 2, next = 1 + 1.
    assert_eq!(hover(&mut c, "next")["body"]["result"], "2");
    assert_eq!(hover(&mut c, "k1")["body"]["result"], "2");
    assert_eq!(hover(&mut c, "n")["body"]["result"], "6");
    // A bare register spelling is nothing the source names: an error.
    let r = hover(&mut c, "i5");
    assert_eq!(r["success"], false, "{r}");
    // Outside a hover a bare word is not a source name.
    let r = c.request(
        "evaluate",
        json!({"expression": "next", "frameId": 1, "context": "watch"}),
    );
    assert_eq!(r["success"], false, "{r}");
    // An error names what was typed, not the registers it stands for.
    let r = c.request(
        "evaluate",
        json!({"expression": "%next +", "frameId": 1, "context": "watch"}),
    );
    let message = r["message"].as_str().expect("message");
    assert!(
        message.contains("%next +") && !message.contains("%i5"),
        "{message}"
    );
    c.disconnect_cleanly();
}

#[test]
fn registers_that_overlap_are_shared() {
    // spin.mlir line 14: %more (an i32 in %i10) and %x, %acc1 (the i64
    // pair %i10:11) overlap.
    let mut c = launched(program("spin", "10"));
    c.run_to_line("spin.mlir", 14);
    let names = named_values(&mut c);
    let type_of = |n: &str| {
        names
            .iter()
            .find(|(name, _, _)| name == n)
            .unwrap_or_else(|| panic!("{n} not in {names:?}"))
            .2
            .clone()
    };
    assert_eq!(type_of("%more"), "i32 in %i10, shared with %acc1, %x");
    assert_eq!(type_of("%x"), "i64 in %i10:11, shared with %acc1, %more");
    c.disconnect_cleanly();
}

#[test]
fn arguments_are_named_only_inside_their_functions_text() {
    // divz.mlir: @quot is inlined into @main; the trap is on quot's line,
    // where `%a` is quot's argument, not main's.
    let mut c = launched(
        json!({"modules": [path("divz.vmfb")], "function": "main", "inputs": ["1", "0"],
               "sourceDirs": [path("")]}),
    );
    c.ok("setExceptionBreakpoints", json!({"filters": ["trap"]}));
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "exception");
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    assert_eq!(st["stackFrames"][0]["line"], 2);
    let hover = |c: &mut Client, e: &str| {
        c.request(
            "evaluate",
            json!({"expression": e, "frameId": 1, "context": "hover"}),
        )
    };
    assert_eq!(hover(&mut c, "%a")["success"], false);
    assert_eq!(hover(&mut c, "%b")["success"], false);
    assert_eq!(hover(&mut c, "%s")["body"]["result"], "2");
    c.disconnect_cleanly();
}

/// `main` calls `g`; the text calls `g` before defining it.
const CALLER_FIRST: &str = "vm.module @c version 0\nvm.type i32\n\
vm.func @g(%i0: i32) -> (i32) {\n^bb0:\n\
  %i1 = vm.add.i32 %i0, %i0 loc(\"c.mlir\":6:8)\n\
  vm.return %i1 loc(\"c.mlir\":7:3)\n}\n\
vm.export @main\n\
vm.func @main(%i0: i32) -> (i32) {\n^bb0:\n\
  %i1 = vm.call @c:0(%i0) loc(\"c.mlir\":2:8)\n\
  vm.return %i1 loc(\"c.mlir\":3:3)\n}\n";

const CALLER_FIRST_MLIR: &str = r"func.func @main(%n: i32) -> i32 {
  %r = func.call @g(%n) : (i32) -> i32
  return %r : i32
}
func.func @g(%a: i32) -> i32 {
  %v = arith.addi %a, %a : i32
  return %v : i32
}
";

#[test]
fn argument_names_come_from_the_definition_not_a_call() {
    let dir = scratch("call-first");
    std::fs::write(dir.join("c.vmasm"), CALLER_FIRST).expect("module");
    std::fs::write(dir.join("c.mlir"), CALLER_FIRST_MLIR).expect("source");
    let mut c = launched(
        json!({"modules": [dir.join("c.vmasm").display().to_string()], "function": "main",
               "inputs": ["3"]}),
    );
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": dir.join("c.mlir").display().to_string()}, "breakpoints": [{"line": 6}]}),
    );
    c.ok("configurationDone", json!({}));
    c.event("stopped");
    let names: Vec<(String, String)> = named_values(&mut c)
        .into_iter()
        .map(|(n, v, _)| (n, v))
        .collect();
    assert_eq!(
        names,
        [("%a".into(), "3".into()), ("%v".into(), "0".into())]
    );
    c.disconnect_cleanly();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_path_recorded_on_another_machine_is_found_by_its_trailing_components() {
    let dir = scratch("moved");
    let project = dir.join("proj");
    std::fs::create_dir_all(&project).expect("project dir");
    let module = "vm.module @m version 0\nvm.type i32\nvm.export @main\n\
        vm.func @main(%i0: i32) -> (i32) {\n^bb0:\n\
        %i1 = vm.mul.i32 %i0, %i0 loc(\"/home/ci/build/proj/m.mlir\":2:8)\n\
        vm.return %i1 loc(\"/home/ci/build/proj/m.mlir\":3:3)\n}\n";
    std::fs::write(dir.join("m.vmasm"), module).expect("module");
    let text =
        "func.func @main(%n: i32) -> i32 {\n  %w = arith.muli %n, %n : i32\n  return %w : i32\n}\n";
    std::fs::write(project.join("m.mlir"), text).expect("source");
    // A decoy with the same name, less of the path in common.
    std::fs::write(dir.join("m.mlir"), "// not this one\n").expect("decoy");
    let source = project.join("m.mlir").display().to_string();
    let mut c = launched(
        json!({"modules": [dir.join("m.vmasm").display().to_string()], "function": "main",
               "inputs": ["3"], "sourceDirs": [dir.display().to_string()]}),
    );
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": source}, "breakpoints": [{"line": 2}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["source"]["path"], source.as_str());
    assert_eq!(frame["line"], 2);
    c.disconnect_cleanly();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn logpoints_log_without_stopping_and_conditions_take_source_names() {
    let mut c = Client::start();
    let caps = launch(&mut c, program("fib", "3"));
    assert_eq!(caps["supportsLogPoints"], true);
    // Line 14 (the yield) runs after %k1 and %next are computed.
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [
            {"line": 14, "logMessage": "k1 = {%k1}, next = {%next} {{literally}}"}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    let bad = c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "fib", "condition": "%nosuch == 1"},
                               {"name": "fib", "logMessage": "{%nosuch}"}]}),
    );
    for b in bad["breakpoints"].as_array().expect("breakpoints") {
        assert_eq!(b["verified"], false, "{b}");
        assert!(
            b["message"].as_str().is_some_and(|m| m.contains("%nosuch")),
            "{b}"
        );
    }
    c.ok("configurationDone", json!({}));
    c.event("terminated");
    let logged: Vec<String> = c
        .events
        .iter()
        .filter(|e| e["event"] == "output" && e["body"]["category"] == "console")
        .filter_map(|e| e["body"]["output"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        logged,
        [
            "k1 = 1, next = 1 {literally}\n",
            "k1 = 2, next = 2 {literally}\n",
            "k1 = 3, next = 3 {literally}\n"
        ]
    );
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    assert_eq!(c.finish(), 0);

    // A condition in source names stops only where it holds.
    let mut c = launched(program("fib", "6"));
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [{"line": 14, "condition": "%k1 == 4"}]}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    let k1 = c.ok("evaluate", json!({"expression": "%k1", "frameId": 1}));
    assert_eq!(k1["result"], "4");
    c.ok("continue", json!({"threadId": 1}));
    c.event("terminated");
    assert_eq!(c.finish(), 0);
}

#[test]
fn disassembly_breakpoints_survive_a_restart_by_their_documents_name() {
    // A new session's references are its own: the client sends the old
    // session's reference with the document's name.
    let mut c = launched(
        json!({"modules": [path("lib_b.vmfb"), path("app_a.vmfb")], "function": "main", "inputs": ["4"]}),
    );
    let stale = json!({"name": "app_a.main.vmasm", "sourceReference": 7});
    let set = c.ok(
        "setBreakpoints",
        json!({"source": stale, "breakpoints": [{"line": 4}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    let text = c.ok("source", json!({"source": stale, "sourceReference": 7}));
    assert!(
        text["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("// app_a.main:")),
        "{text}"
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    let frame = &st["stackFrames"][0];
    assert_eq!(frame["source"]["name"], "app_a.main.vmasm");
    assert_eq!(frame["line"], 4);
    // An unknown reference without a name of such a function: an error.
    let r = c.request(
        "setBreakpoints",
        json!({"source": {"name": "nosuch.vmasm", "sourceReference": 7}, "breakpoints": [{"line": 4}]}),
    );
    assert_eq!(r["message"], "no source with reference 7");
    c.disconnect_cleanly();
}

#[test]
fn every_launch_attribute_the_extension_declares_is_read_and_no_debug_runs_through() {
    let manifest =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode/package.json");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(manifest).expect("package.json"))
            .expect("json");
    let declared = manifest["contributes"]["debuggers"][0]["configurationAttributes"]["launch"]
        ["properties"]
        .as_object()
        .expect("launch attributes")
        .clone();
    // A value of each declared type (a number and a string for `timeout`).
    let mut args = json!({"modules": [path("fib.vmfb")], "function": "fib", "inputs": ["3"],
                          "sourceDirs": [path("")], "type": "irvm", "request": "launch",
                          "name": "fib", "__sessionId": "x", "preLaunchTask": "build",
                          "presentation": {"hidden": false}});
    for (key, spec) in &declared {
        if args.get(key).is_some() {
            continue;
        }
        let kinds: Vec<&str> = match &spec["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(t) => t.iter().filter_map(Value::as_str).collect(),
            other => panic!("{key}: type {other}"),
        };
        args[key] = match (key.as_str(), kinds[0]) {
            ("parameterMode", _) => json!("file"),
            ("parameters", _) => json!([]),
            (_, "integer" | "number") => json!(1_000_000_000),
            (_, "boolean") => json!(false),
            (_, "string") => json!("1000"),
            (_, "array") => json!([]),
            (_, t) => panic!("{key}: type {t}"),
        };
    }
    assert_eq!(declared["timeout"]["type"], json!(["number", "string"]));
    let mut c = Client::start();
    launch(&mut c, args.clone());
    c.ok("disconnect", json!({}));
    let warned = c.events.iter().any(|e| {
        e["body"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("unknown launch attribute"))
    });
    assert!(!warned, "{:?}", c.events);
    assert_eq!(c.finish(), 0);

    // An attribute nobody reads is said so; `noDebug` runs to the end
    // with breakpoints refused.
    args["stopOnEntry"] = json!(true);
    args["noDebug"] = json!(true);
    args["sourceDir"] = json!("typo");
    let mut c = Client::start();
    launch(&mut c, args);
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": [{"line": 13}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], false);
    c.ok("configurationDone", json!({}));
    c.event("terminated");
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    let said = c.events.iter().any(|e| {
        e["body"]["output"]
            .as_str()
            .is_some_and(|o| o.contains("unknown launch attribute `sourceDir`"))
    });
    assert!(said, "{:?}", c.events);
    assert_eq!(c.finish(), 0);
}

#[test]
fn a_second_initialize_is_refused_and_a_cut_header_is_said_so() {
    let mut c = Client::start();
    c.ok("initialize", json!({"adapterID": "irvm"}));
    let r = c.request("initialize", json!({"adapterID": "irvm"}));
    assert_eq!(
        r["message"],
        "already initialized (`initialize` comes once)"
    );
    // The input ends in the middle of a header line.
    c.write_raw(b"Content-Len");
    drop(c.stdin.take());
    let e = c.event("output");
    assert_eq!(
        e["body"]["output"],
        "irvm dap: input ended inside a message header\n"
    );
    assert_eq!(c.finish(), 1);
}

/// A session of `dynamic` over an `n`x`n` tensor running its one vmvx
/// dispatch: the host call `hal.device.queue.execute` that runs it takes
/// seconds in a debug build (6000: about 3 s idle, 8000: 5 s), far longer
/// than the few requests a test sends inside it.
struct LongDispatch {
    c: Client,
    /// The address (`instructionReference`) of the instruction after the
    /// call, where the program goes when the dispatch returns.
    after: Value,
}

/// Launches `dynamic`, stops it at its `hal.device.queue.execute` (an
/// instruction breakpoint, found in the function's disassembly), replaces
/// that breakpoint with one at the next instruction when `stop_after`
/// (else with none), and continues: `continue` is answered just before
/// the program goes on into the call, so what the test sends next reaches
/// the adapter while the dispatch runs, with no sleep that guesses when
/// it starts.
fn inside_long_dispatch(n: u32, stop_after: bool) -> LongDispatch {
    let model = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models/dynamic.vmfb");
    let mut c = launched(
        json!({"modules": [model.display().to_string()], "function": "dynamic",
               "inputs": [format!("{n}x{n}xf32=@/dev/zero")]}),
    );
    // The function's address, from a breakpoint at its first instruction
    // (cleared again), and its instructions.
    let set = c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "dynamic"}]}),
    );
    let reference = set["breakpoints"][0]["instructionReference"].clone();
    assert!(reference.is_string(), "{set}");
    c.ok("setFunctionBreakpoints", json!({"breakpoints": []}));
    let listed = c.ok(
        "disassemble",
        json!({"memoryReference": reference, "instructionOffset": 0, "instructionCount": 400}),
    );
    let instructions = listed["instructions"].as_array().expect("instructions");
    let at = instructions
        .iter()
        .position(|i| {
            i["instruction"]
                .as_str()
                .is_some_and(|t| t.contains("@hal.device.queue.execute("))
        })
        .unwrap_or_else(|| panic!("no hal.device.queue.execute in {listed}"));
    let call = instructions[at]["address"].clone();
    let after = instructions[at + 1]["address"].clone();
    let set = c.ok(
        "setInstructionBreakpoints",
        json!({"breakpoints": [{"instructionReference": call}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    c.ok("configurationDone", json!({}));
    let stopped = c.event("stopped");
    assert_eq!(
        stopped["body"]["reason"], "instruction breakpoint",
        "{stopped}"
    );
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["instructionPointerReference"], call, "{frame}");
    let next = if stop_after {
        json!([{"instructionReference": after}])
    } else {
        json!([])
    };
    c.ok("setInstructionBreakpoints", json!({"breakpoints": next}));
    c.ok("continue", json!({"threadId": 1}));
    LongDispatch { c, after }
}

#[test]
fn terminate_and_stdin_closing_cut_a_long_dispatch() {
    // (8000: the dispatch, cut here, would hold the answers seconds longer
    // than [`PROMPT`].)
    let LongDispatch { mut c, .. } = inside_long_dispatch(8000, false);
    let asked = std::time::Instant::now();
    c.ok("terminate", json!({}));
    c.event("terminated");
    // Waiting for the dispatch takes seconds; it is cut at once.
    assert!(
        asked.elapsed() < PROMPT,
        "terminate took {:?}",
        asked.elapsed()
    );
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"
            && !e["body"]["output"]
                .as_str()
                .is_some_and(|o| o.contains("CANCELLED"))),
        "{:?}",
        c.events
    );
    c.disconnect_cleanly();

    let LongDispatch { c, .. } = inside_long_dispatch(8000, false);
    let asked = std::time::Instant::now();
    assert_eq!(c.finish(), 0);
    assert!(
        asked.elapsed() < PROMPT,
        "exiting took {:?}",
        asked.elapsed()
    );
}

#[test]
fn threads_and_pause_are_answered_inside_a_long_dispatch() {
    // Not cut: the stop waits for the dispatch, which must end within the
    // client's 20 s wait for a message even on a loaded machine. A
    // breakpoint waits at the instruction after the call: had the session
    // answered only once the dispatch returned, the program would have
    // stopped there (`instruction breakpoint`) before `threads` and
    // `pause` were answered; answered inside the call, the pause stops it
    // there first.
    // A machine so loaded that the test's requests go out only after the
    // dispatch ended looks like a session that answers late: that is
    // tried again with a dispatch twice as long, and only a stop before
    // the answers at every size fails the test.
    let mut sizes = [6000, 8500, 12000].into_iter().peekable();
    let (mut c, after, threads_took, pause_took, asked) = loop {
        let n = sizes.next().expect("a size");
        let LongDispatch { mut c, after } = inside_long_dispatch(n, true);
        // The session is inside the dispatch's host call: the reader thread
        // answers.
        let asked = std::time::Instant::now();
        let threads = c.ok("threads", json!({}));
        let threads_took = asked.elapsed();
        assert_eq!(threads["threads"][0]["id"], 1);
        let asked = std::time::Instant::now();
        c.ok("pause", json!({"threadId": 1}));
        let pause_took = asked.elapsed();
        let stopped_first = c.events.iter().any(|e| e["event"] == "stopped");
        if !stopped_first {
            break (c, after, threads_took, pause_took, asked);
        }
        assert!(
            sizes.peek().is_some(),
            "stopped before the pause response at every size: {:?}",
            c.events
        );
        eprintln!("{n}x{n}: the dispatch ended before the requests; trying a longer one");
        c.disconnect_cleanly();
    };
    // The stop comes when the dispatch returns, at the next instruction.
    let stopped = c.event("stopped");
    let stopped_after = asked.elapsed();
    eprintln!(
        "inside the dispatch: threads answered in {threads_took:?}, pause in \
         {pause_took:?}, stopped {stopped_after:?} after the pause"
    );
    assert_eq!(stopped["body"]["reason"], "pause", "{stopped}");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["instructionPointerReference"], after, "{frame}");
    // Stopped in the program, with its frames, and it goes on to its end.
    // iree-compile 3.13 stored a source map for `__init` only, so the
    // frame in `dynamic` shows its disassembly.
    assert_eq!(frame["name"], "module.dynamic", "{frame}");
    assert_eq!(frame["source"]["name"], "module.dynamic.vmasm", "{frame}");
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.event("terminated");
    c.disconnect_cleanly();
}

/// Sends a request inside the long dispatch: its body, answered before the
/// program stopped or ended (which the dispatch's end would bring). How
/// long the answer took is printed, not checked: under CI's load a thread
/// can wait seconds for a core, and the order is what shows the answer
/// came from inside the dispatch.
fn answered_at_once(c: &mut Client, command: &str, arguments: Value) -> Value {
    let asked = std::time::Instant::now();
    let body = c.ok(command, arguments);
    let took = asked.elapsed();
    eprintln!("inside the dispatch: {command} answered in {took:?}");
    assert!(
        c.events
            .iter()
            .all(|e| !["stopped", "exited", "terminated"]
                .contains(&e["event"].as_str().unwrap_or(""))),
        "{command} was answered after a stop: {:?}",
        c.events
    );
    body
}

#[test]
fn breakpoints_disassembly_and_sources_are_answered_inside_a_long_dispatch() {
    // No breakpoint is left: had the session answered these only once the
    // dispatch returned, the program would have run to its end first.
    let LongDispatch { mut c, .. } = inside_long_dispatch(6000, false);
    // `dynamic` has no debug information: a function breakpoint at its
    // first instruction (passed already) gives its address.
    let set = answered_at_once(
        &mut c,
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "dynamic"}]}),
    );
    let entry = &set["breakpoints"][0];
    assert_eq!(entry["verified"], true, "{set}");
    let reference = entry["instructionReference"]
        .as_str()
        .expect("an instruction reference")
        .to_string();
    let listed = answered_at_once(
        &mut c,
        "disassemble",
        json!({"memoryReference": reference, "instructionOffset": 0, "instructionCount": 400}),
    );
    // The largest disassembly keeps `threads` behind it waiting briefly;
    // a larger one is refused.
    let asked = std::time::Instant::now();
    let big = c.send(
        "disassemble",
        json!({"memoryReference": reference, "instructionOffset": -1000, "instructionCount": 2000}),
    );
    let threads = c.ok("threads", json!({}));
    let threads_took = asked.elapsed();
    assert_eq!(threads["threads"][0]["id"], 1);
    let answered = c
        .events
        .iter()
        .position(|m| m["request_seq"] == big)
        .map(|k| c.events.remove(k))
        .expect("the disassembly answered before `threads`");
    assert_eq!(
        answered["body"]["instructions"].as_array().map(Vec::len),
        Some(2000)
    );
    eprintln!("inside the dispatch: threads behind a 2000-instruction disassembly answered in {threads_took:?}");
    assert!(
        c.events
            .iter()
            .all(|e| !["stopped", "exited", "terminated"]
                .contains(&e["event"].as_str().unwrap_or(""))),
        "threads was answered after the program stopped or ended: {:?}",
        c.events
    );
    let r = c.request(
        "disassemble",
        json!({"memoryReference": reference, "instructionCount": 2001}),
    );
    assert_eq!(
        r["message"], "`instructionCount` 2001 is over the limit of 2000",
        "{r}"
    );
    let instructions = listed["instructions"].as_array().expect("instructions");
    let find = |text: &str| {
        instructions
            .iter()
            .find(|i| i["instruction"].as_str().is_some_and(|t| t.contains(text)))
            .unwrap_or_else(|| panic!("no `{text}` in {listed}"))
    };
    let create = find("@hal.buffer_view.create");
    let ret = find("vm.return");
    let document = instructions[0]["location"].clone();
    assert_eq!(document["name"], "module.dynamic.vmasm", "{document}");
    let text = answered_at_once(
        &mut c,
        "source",
        json!({"source": document, "sourceReference": document["sourceReference"]}),
    );
    assert!(
        text["content"]
            .as_str()
            .is_some_and(|t| t.contains("@hal.command_buffer.dispatch")),
        "{text}"
    );
    // Where the program goes after the dispatch: a line of the
    // disassembly document and an instruction.
    let line = create["line"].as_i64().expect("a line");
    let by_line = answered_at_once(
        &mut c,
        "setBreakpoints",
        json!({"source": document, "breakpoints": [{"line": line}]}),
    );
    let line_bp = &by_line["breakpoints"][0];
    assert_eq!(line_bp["verified"], true, "{by_line}");
    assert_eq!(line_bp["line"], line, "{by_line}");
    let by_address = answered_at_once(
        &mut c,
        "setInstructionBreakpoints",
        json!({"breakpoints": [{"instructionReference": ret["address"]}]}),
    );
    let address_bp = &by_address["breakpoints"][0];
    assert_eq!(address_bp["verified"], true, "{by_address}");
    // The dispatch returns, and the program stops where it was asked to.
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "breakpoint", "{stopped}");
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!([line_bp["id"]]));
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], line, "{frame}");
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(
        stopped["body"]["reason"], "instruction breakpoint",
        "{stopped}"
    );
    assert_eq!(
        stopped["body"]["hitBreakpointIds"],
        json!([address_bp["id"]])
    );
    let (frame, _) = top_frame(&mut c);
    assert_eq!(
        frame["instructionPointerReference"], ret["address"],
        "{frame}"
    );
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.event("terminated");
    c.disconnect_cleanly();
}

/// `setBreakpoints` of spin.mlir's loop line 13 (`set`) or of none.
fn spin_breakpoint(c: &mut Client, set: bool) -> i64 {
    let breakpoints = if set {
        json!([{"line": 13}])
    } else {
        json!([])
    };
    c.send(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")}, "breakpoints": breakpoints}),
    )
}

#[test]
fn a_breakpoint_removed_while_the_program_reaches_it_does_not_stop_it() {
    // Bursts of set and clear while the loop runs: every stop names a
    // breakpoint the last answer before it left set.
    let mut c = spinning();
    let mut stops = 0;
    for _ in 0..25 {
        let sent: Vec<i64> = (0..20)
            .map(|k| spin_breakpoint(&mut c, k % 2 == 0))
            .collect();
        let mut answered = 0;
        let mut set_ids: Vec<Value> = Vec::new();
        let mut stopped = false;
        while answered < sent.len() {
            let m = c.next_message();
            if m["type"] == "response" {
                assert_eq!(m["request_seq"], sent[answered], "{m}");
                assert_eq!(m["success"], true, "{m}");
                let listed = m["body"]["breakpoints"].as_array().expect("breakpoints");
                set_ids = listed.iter().map(|b| b["id"].clone()).collect();
                answered += 1;
            } else if m["event"] == "stopped" {
                let hit = &m["body"]["hitBreakpointIds"][0];
                assert!(
                    set_ids.contains(hit),
                    "stopped at breakpoint {hit}, not among {set_ids:?}: {m}"
                );
                assert_eq!(m["body"]["reason"], "breakpoint", "{m}");
                stops += 1;
                stopped = true;
            }
        }
        // The last answer cleared the line: nothing stops it now.
        if stopped {
            c.ok("continue", json!({"threadId": 1}));
        }
    }
    // How many bursts stopped the loop is timing (none, on a loaded
    // machine, once): not asserted. A breakpoint left set does stop it.
    eprintln!("{stops} of 25 bursts stopped at a breakpoint");
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")}, "breakpoints": [{"line": 13}]}),
    );
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "breakpoint", "{stopped}");
    assert_eq!(
        stopped["body"]["hitBreakpointIds"],
        json!([set["breakpoints"][0]["id"]])
    );
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")}, "breakpoints": []}),
    );
    c.ok("continue", json!({"threadId": 1}));
    c.ok("pause", json!({"threadId": 1}));
    let paused = c.event("stopped");
    assert_eq!(paused["body"]["reason"], "pause", "{paused}");
    c.ok("disconnect", json!({}));
    assert_eq!(c.exit_status(), 0);
}

#[test]
fn seq_rises_by_one_while_a_logpoint_writes_and_the_reader_answers() {
    // A logpoint writes from the session as the reader thread answers
    // `threads`: the client's check of each message's seq (one more than
    // the last) sees them all.
    let mut c = launched(program("spin", "1000000000000"));
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")},
               "breakpoints": [{"line": 13, "logMessage": "acc {%acc1}"}]}),
    );
    c.ok("configurationDone", json!({}));
    for _ in 0..300 {
        c.ok("threads", json!({}));
    }
    assert!(
        c.events.iter().filter(|e| e["event"] == "output").count() > 10,
        "the logpoint wrote little"
    );
    c.ok("disconnect", json!({}));
    assert_eq!(c.exit_status(), 0);
}

#[test]
fn a_bad_breakpoint_entry_fails_the_request_and_changes_nothing() {
    let mut c = launched(program("fib", "6"));
    let fib = json!({"path": path("fib.mlir")});
    let kept = c.ok(
        "setBreakpoints",
        json!({"source": fib, "breakpoints": [{"line": 13}]}),
    );
    let kept_id = kept["breakpoints"][0]["id"].clone();
    // The second entry's hitCondition is not a string: nothing is set,
    // nothing is cleared.
    let r = c.request(
        "setBreakpoints",
        json!({"source": fib, "breakpoints": [{"line": 12}, {"line": 13, "hitCondition": 3}]}),
    );
    assert_eq!(r["success"], false, "{r}");
    assert_eq!(
        r["message"], "breakpoint 1: `hitCondition` must be a string",
        "{r}"
    );
    for (command, entry) in [
        (
            "setFunctionBreakpoints",
            json!({"name": "fib", "condition": 1}),
        ),
        (
            "setInstructionBreakpoints",
            json!({"instructionReference": "0x1", "offset": "x"}),
        ),
    ] {
        let r = c.request(command, json!({"breakpoints": [entry]}));
        assert_eq!(r["success"], false, "{r}");
    }
    c.ok("configurationDone", json!({}));
    let stopped = c.event("stopped");
    assert_eq!(
        stopped["body"]["hitBreakpointIds"],
        json!([kept_id]),
        "{stopped}"
    );
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 13, "{frame}");
    // Cleared: the program runs to its end.
    c.ok("setBreakpoints", json!({"source": fib, "breakpoints": []}));
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.disconnect_cleanly();
}

#[test]
fn a_breakpoint_asked_for_again_keeps_its_id() {
    let mut c = launched(program("fib", "6"));
    let fib = json!({"path": path("fib.mlir")});
    let ids = |body: &Value| -> Vec<Value> {
        body["breakpoints"]
            .as_array()
            .expect("breakpoints")
            .iter()
            .map(|b| b["id"].clone())
            .collect()
    };
    let first = ids(&c.ok(
        "setBreakpoints",
        json!({"source": fib, "breakpoints": [{"line": 13}]}),
    ));
    let second = ids(&c.ok(
        "setBreakpoints",
        json!({"source": fib, "breakpoints": [{"line": 12}, {"line": 13}]}),
    ));
    assert_eq!(second[1], first[0]);
    assert_ne!(second[0], first[0]);
    // Another condition is another breakpoint.
    let third = ids(&c.ok(
        "setBreakpoints",
        json!({"source": fib, "breakpoints": [{"line": 12}, {"line": 13, "condition": "%k == 2"}]}),
    ));
    assert_eq!(third[0], second[0]);
    assert_ne!(third[1], second[1]);
    let function = json!({"breakpoints": [{"name": "fib"}]});
    let f1 = ids(&c.ok("setFunctionBreakpoints", function.clone()));
    let f2 = ids(&c.ok("setFunctionBreakpoints", function));
    assert_eq!(f1, f2);
    c.ok("setFunctionBreakpoints", json!({"breakpoints": []}));
    // The kept breakpoint stops the program, under its id.
    c.ok("configurationDone", json!({}));
    let stopped = c.event("stopped");
    assert_eq!(
        stopped["body"]["hitBreakpointIds"],
        json!([third[0]]),
        "{stopped}"
    );
    c.ok("setBreakpoints", json!({"source": fib, "breakpoints": []}));
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.disconnect_cleanly();
}

#[test]
fn a_pause_sent_right_after_a_continue_stops_the_program_it_started() {
    let mut c = launched(program("spin", "1000000000000"));
    let stopped = c.run_to_line("spin.mlir", 13);
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("spin.mlir")}, "breakpoints": []}),
    );
    // Both sent before either is answered: answered in order, and the
    // pause stops the running program.
    let go = c.send("continue", json!({"threadId": 1}));
    let pause = c.send("pause", json!({"threadId": 1}));
    let mut order = Vec::new();
    while order.len() < 3 {
        let m = c.next_message();
        if m["type"] == "response" {
            assert_eq!(m["success"], true, "{m}");
            order.push(m["request_seq"].clone());
        } else if m["event"] == "stopped" {
            assert_eq!(m["body"]["reason"], "pause", "{m}");
            order.push(json!("stopped"));
        }
    }
    assert_eq!(order, vec![json!(go), json!(pause), json!("stopped")]);
    // Running: `threads` (which the reader thread could answer) sent
    // behind `stackTrace` (which the session answers) is answered after.
    c.ok("continue", json!({"threadId": 1}));
    let mut order = Vec::new();
    for _ in 0..20 {
        order.push(c.send("stackTrace", json!({"threadId": 1})));
        order.push(c.send("threads", json!({})));
    }
    for expected in order {
        let m = c.next_message();
        assert_eq!(m["request_seq"], expected, "{m}");
    }
    c.ok("disconnect", json!({}));
    assert_eq!(c.exit_status(), 0);
}

#[test]
fn set_variable_and_data_breakpoints_on_registers() {
    let mut c = Client::start();
    let caps = launch(&mut c, program("fib", "12"));
    assert_eq!(caps["supportsSetVariable"], true);
    assert_eq!(caps["supportsDataBreakpoints"], true);
    c.run_to_line("fib.mlir", 12);
    let (frame, _) = top_frame(&mut c);
    let scopes = c.ok("scopes", json!({"frameId": frame["id"]}));
    let reference = |name: &str| {
        scopes["scopes"]
            .as_array()
            .expect("scopes")
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no scope {name}"))["variablesReference"]
            .clone()
    };
    let (registers, names) = (reference("i32 registers"), reference("Source names"));
    // Watch %k (the iteration count, %i1) by its source name.
    let info = c.ok(
        "dataBreakpointInfo",
        json!({"variablesReference": names, "name": "%k1"}),
    );
    assert_eq!(
        info["accessTypes"],
        json!(["write", "read", "readWrite"]),
        "{info}"
    );
    let id = info["dataId"].as_str().expect("a data id").to_string();
    let set = c.ok(
        "setDataBreakpoints",
        json!({"breakpoints": [{"dataId": id}, {"dataId": "9:0:0:%i1"}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    assert_eq!(set["breakpoints"][1]["verified"], false, "{set}");
    let watch = set["breakpoints"][0]["id"].clone();
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": []}),
    );
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "data breakpoint", "{stopped}");
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!([watch]));
    assert_eq!(stopped["body"]["text"], "%i1: 0 -> 1");
    // Set the count (k1, before the yield) to 10 by register name: two
    // iterations are left, and fib(12) returns 2 instead of 144.
    let (frame, _) = top_frame(&mut c);
    let scopes = c.ok("scopes", json!({"frameId": frame["id"]}));
    let registers_now = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .find(|s| s["name"] == "i32 registers")
        .expect("i32 registers")["variablesReference"]
        .clone();
    let r = c.ok(
        "setVariable",
        json!({"variablesReference": registers_now, "name": "%i1", "value": "10"}),
    );
    assert_eq!(r["value"], "10");
    let bad = c.request(
        "setVariable",
        json!({"variablesReference": registers_now, "name": "%i1", "value": "1.5e10"}),
    );
    assert_eq!(bad["success"], false);
    assert_eq!(bad["message"], "15000000000 is out of range for %i1 (i32)");
    let stale = c.request(
        "setVariable",
        json!({"variablesReference": registers, "name": "%q", "value": "1"}),
    );
    assert_eq!(stale["success"], false, "{stale}");
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["text"], "%i1: 10 -> 11");
    c.ok("setDataBreakpoints", json!({"breakpoints": []}));
    c.ok("continue", json!({"threadId": 1}));
    let out = c.event("output");
    assert_eq!(out["body"]["output"], "EXEC @fib\n");
    let out = c.event("output");
    assert_eq!(out["body"]["output"], "result[0]: i32=2\n");
    c.disconnect_cleanly();
}

/// Data breakpoints that see a change at the same instruction stop the
/// program once, with every one of them hit (two on fib's count here).
#[test]
fn data_breakpoints_that_fire_together_are_all_hit() {
    let mut c = Client::start();
    launch(&mut c, program("fib", "12"));
    c.run_to_line("fib.mlir", 12);
    let (frame, _) = top_frame(&mut c);
    let info = c.ok(
        "dataBreakpointInfo",
        json!({"frameId": frame["id"], "name": "%i1"}),
    );
    let id = info["dataId"].clone();
    let set = c.ok(
        "setDataBreakpoints",
        json!({"breakpoints": [{"dataId": id}, {"dataId": id}]}),
    );
    let ids = [
        set["breakpoints"][0]["id"].clone(),
        set["breakpoints"][1]["id"].clone(),
    ];
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": []}),
    );
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "data breakpoint", "{stopped}");
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!(ids));
    assert_eq!(stopped["body"]["text"], "%i1: 0 -> 1; %i1: 0 -> 1");
    c.disconnect_cleanly();
}

/// What cannot be watched gets no data id, and data breakpoints with
/// attributes of the wrong type or ones irvm does not keep are refused
/// with a message (they were set without them: a `condition` that is no
/// string was dropped, a `hitCondition` ignored).
#[test]
fn data_breakpoints_refuse_what_they_cannot_keep() {
    let mut c = Client::start();
    launch(&mut c, program("fib", "12"));
    c.run_to_line("fib.mlir", 12);
    let (frame, _) = top_frame(&mut c);
    let missing = c.ok(
        "dataBreakpointInfo",
        json!({"frameId": frame["id"], "name": "%i99"}),
    );
    assert!(missing["dataId"].is_null(), "{missing}");
    assert_eq!(
        missing["description"],
        "%i99 is out of range (the frame has 6 i32 registers)"
    );
    let info = c.ok(
        "dataBreakpointInfo",
        json!({"frameId": frame["id"], "name": "%i1"}),
    );
    let id = info["dataId"].clone();
    let set = c.ok(
        "setDataBreakpoints",
        json!({"breakpoints": [
            {"dataId": id, "condition": 5},
            {"dataId": id, "accessType": 5},
            {"dataId": id, "hitCondition": "3"},
            {"dataId": id, "condition": "%i1 > 3"},
        ]}),
    );
    let refused = [
        "`condition` must be a string",
        "`accessType` must be a string",
        "data breakpoints take no `hitCondition` (a `condition` can test the register)",
    ];
    for (k, message) in refused.iter().enumerate() {
        assert_eq!(set["breakpoints"][k]["verified"], false, "{set}");
        assert_eq!(set["breakpoints"][k]["message"], *message, "{set}");
    }
    assert_eq!(set["breakpoints"][3]["verified"], true, "{set}");
    c.disconnect_cleanly();

    // Nothing runs past a trap: nothing there is watched.
    let mut c = launched(
        json!({"modules": [path("dbg/frames.vmasm")], "function": "main", "inputs": ["3"], "sourceDirs": [path("")]}),
    );
    c.ok("setExceptionBreakpoints", json!({"filters": ["trap"]}));
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "exception");
    let (frame, _) = top_frame(&mut c);
    let trapped = c.ok(
        "dataBreakpointInfo",
        json!({"frameId": frame["id"], "name": "%i15"}),
    );
    assert!(trapped["dataId"].is_null(), "{trapped}");
    assert_eq!(
        trapped["description"],
        "the program stopped at a trap: nothing runs past it to watch"
    );
    c.disconnect_cleanly();
}

#[test]
fn buffers_and_tensors_have_memory_the_client_reads() {
    let mut c = Client::start();
    let caps = launch(
        &mut c,
        json!({"modules": [path("../models/add.vmfb")], "function": "add",
               "inputs": ["2x3xf32=1,2,3,4,5,6", "2x3xf32=10"], "stopOnEntry": true}),
    );
    assert_eq!(caps["supportsReadMemoryRequest"], true);
    assert_eq!(caps["supportsExceptionInfoRequest"], true);
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    let r = c.request("exceptionInfo", json!({"threadId": 1}));
    assert_eq!(r["message"], "the program is not stopped at a trap");
    let (frame, _) = top_frame(&mut c);
    let refs = scope_variables(&mut c, &frame["id"], "ref registers");
    let tensor = refs.iter().find(|v| v["name"] == "%r0").expect("%r0");
    let reference = tensor["memoryReference"].clone();
    assert!(reference.is_string(), "{tensor}");
    let null = refs.iter().find(|v| v["name"] == "%r2").expect("%r2");
    assert!(null.get("memoryReference").is_none(), "{null}");
    let floats = |data: &Value| -> Vec<f32> {
        let bytes = base64_decode(data.as_str().expect("data"));
        bytes
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect()
    };
    let m = c.ok(
        "readMemory",
        json!({"memoryReference": reference, "offset": 4, "count": 8}),
    );
    assert_eq!(m["address"], "0x4");
    assert_eq!(floats(&m["data"]), [2.0, 3.0]);
    assert_eq!(m["unreadableBytes"], 0);
    // Past the end (24 bytes): the bytes there are unreadable.
    let m = c.ok(
        "readMemory",
        json!({"memoryReference": reference, "offset": 20, "count": 8}),
    );
    assert_eq!(floats(&m["data"]), [6.0]);
    assert_eq!(m["unreadableBytes"], 4);
    // Before the start: the data begins at 0.
    let m = c.ok(
        "readMemory",
        json!({"memoryReference": reference, "offset": -4, "count": 8}),
    );
    assert_eq!(m["address"], "0x0");
    assert_eq!(floats(&m["data"]), [1.0]);
    // So far before it that the offset has no negation (i64::MIN): none
    // of the bytes asked for exist, and the adapter goes on serving.
    let m = c.ok(
        "readMemory",
        json!({"memoryReference": reference, "offset": i64::MIN, "count": 8}),
    );
    assert_eq!(m["address"], "0x0");
    assert_eq!(m["data"], "");
    let bad = c.request("readMemory", json!({"memoryReference": "m99", "count": 4}));
    assert_eq!(bad["message"], "no memory with reference `m99`");
    let bad = c.request(
        "readMemory",
        json!({"memoryReference": reference, "count": -1}),
    );
    assert_eq!(bad["success"], false);
    c.disconnect_cleanly();
}

/// Standard base64 (the readMemory data), decoded.
pub(crate) fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {text}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::new();
    for group in digits.chunks(4) {
        let mut n = 0u32;
        for (k, d) in group.iter().enumerate() {
            n |= (*d as u32) << (18 - 6 * k);
        }
        out.extend(&n.to_be_bytes()[1..group.len()]);
    }
    out
}

/// A launch whose input is a FIFO nobody writes (no `timeout`): the read
/// waits (the test holds the FIFO open to write, silent, once the adapter
/// has opened it), but a `disconnect` or `terminate` meanwhile is answered
/// and ends the session (the launch fails, given up), and so does stdin
/// closing.
#[test]
fn disconnect_terminate_and_stdin_closing_end_a_launch_reading_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("never.npy");
    match Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {}
        _ => {
            eprintln!("skipping: no `mkfifo`");
            return;
        }
    }
    let model = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/onnx/test_abs.vmfb");
    let args = json!({"modules": [model.display().to_string()], "function": "test_abs",
                      "inputs": [format!("@{}", fifo.display())]});
    let start_launch = || {
        let mut c = Client::start();
        c.ok(
            "initialize",
            json!({"clientID": "test", "adapterID": "irvm", "linesStartAt1": true}),
        );
        let launch = c.send("launch", args.clone());
        let writer = reading(&fifo);
        (c, launch, writer)
    };
    let given_up = |c: &mut Client, launch: i64| {
        let r = loop {
            let m = c.next_message();
            if m["type"] == "response" && m["request_seq"] == launch {
                break m;
            }
            c.events.push(m);
        };
        assert_eq!(r["success"], false, "{r}");
        let text = r.to_string();
        assert!(
            text.contains("CANCELLED") && text.contains("never.npy"),
            "{r}"
        );
    };
    for ending in ["disconnect", "terminate"] {
        let (mut c, launch, _writer) = start_launch();
        let asked = std::time::Instant::now();
        let ended = c.send(ending, json!({}));
        given_up(&mut c, launch);
        let r = c.next_message();
        assert_eq!(
            (&r["type"], &r["request_seq"], &r["success"]),
            (&json!("response"), &json!(ended), &json!(true)),
            "{r}"
        );
        assert!(
            asked.elapsed() < PROMPT,
            "{ending} took {:?}",
            asked.elapsed()
        );
        if ending == "terminate" {
            c.event("terminated");
            c.ok("disconnect", json!({}));
        }
        assert_eq!(c.exit_status(), 0, "{ending}");
    }
    let (mut c, _, _writer) = start_launch();
    drop(c.stdin.take());
    assert_eq!(c.exit_status(), 0);
}

/// Waits until something has the FIFO `fifo` open for reading (the
/// adapter, reading an input from it): a writer's open that does not wait
/// then succeeds. That writer is returned: kept open and silent, it leaves
/// the reader waiting for data.
fn reading(fifo: &std::path::Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    let start = std::time::Instant::now();
    loop {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo);
        match opened {
            Ok(writer) => return writer,
            // No reader yet.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => panic!("opening {} to write: {e}", fifo.display()),
        }
        assert!(
            start.elapsed() < WAIT,
            "nothing opened {} to read within {WAIT:?}",
            fifo.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A module whose `__init` loops forever (no `timeout`), with an export
/// `f`: its initializer runs under the debugger when the program starts.
const SPINNING_INIT: &str = "vm.module @m version 0\n\nvm.export @__init\n\
    vm.func @__init() -> () {\n^bb0:\n  %i0 = vm.const.i32 1\n  vm.br ^bb1()\n^bb1:\n  \
    vm.cond_br %i0, ^bb1(), ^bb2()\n^bb2:\n  vm.return\n}\n\nvm.export @f\n\
    vm.func @f() -> () {\n^bb0:\n  vm.return\n}\n";

/// `irvm dap` launched on [`SPINNING_INIT`] and started: inside `__init`.
fn spinning_in_init(name: &str) -> Client {
    let dir = scratch(name);
    let module = dir.join("m.vmasm");
    std::fs::write(&module, SPINNING_INIT).expect("module");
    let mut c = Client::start();
    let asked = std::time::Instant::now();
    launch(
        &mut c,
        json!({"modules": [module.display().to_string()], "function": "f"}),
    );
    // The launch does not run the initializer: it is answered at once.
    assert!(
        asked.elapsed() < PROMPT,
        "launch took {:?}",
        asked.elapsed()
    );
    c.ok("configurationDone", json!({}));
    c
}

#[test]
fn pause_terminate_and_disconnect_reach_a_looping_init() {
    // pause: a stop inside `__init`, with its frame and registers, then
    // terminate ends the session.
    let mut c = spinning_in_init("init-pause");
    c.ok("pause", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "pause");
    let (frame, vars) = top_frame(&mut c);
    assert_eq!(frame["name"], "m.__init", "{frame}");
    // (1 once the loop runs; 0 if the pause came before the first
    // instruction.)
    assert!(["0", "1"].contains(&var(&vars, "%i0")), "{vars:?}");
    // It goes on, and is paused again.
    c.ok("continue", json!({"threadId": 1}));
    c.ok("pause", json!({"threadId": 1}));
    assert_eq!(c.event("stopped")["body"]["reason"], "pause");
    c.ok("continue", json!({"threadId": 1}));
    let asked = std::time::Instant::now();
    c.ok("terminate", json!({}));
    c.event("terminated");
    assert!(
        asked.elapsed() < PROMPT,
        "terminate took {:?}",
        asked.elapsed()
    );
    assert!(
        c.events.iter().all(|e| e["event"] != "stopped"),
        "{:?}",
        c.events
    );
    c.disconnect_cleanly();

    // terminate and disconnect while it runs end the session promptly.
    for ending in ["terminate", "disconnect"] {
        let mut c = spinning_in_init(&format!("init-{ending}"));
        let asked = std::time::Instant::now();
        c.ok(ending, json!({}));
        if ending == "terminate" {
            c.event("terminated");
            c.ok("disconnect", json!({}));
        }
        assert_eq!(c.exit_status(), 0, "{ending}");
        assert!(
            asked.elapsed() < PROMPT,
            "{ending} took {:?}",
            asked.elapsed()
        );
    }
}

/// `completions` (the debug console's): the frame's source names and
/// registers that start with the word before the cursor, which they
/// replace (`start`, `length` in the client's column base); `ne` (no `%`,
/// as typed) finds `%next` too. Refused while the program runs.
#[test]
fn completions_offer_source_names_and_registers() {
    let mut c = Client::start();
    let caps = launch(&mut c, program("fib", "6"));
    assert_eq!(caps["supportsCompletionsRequest"], true);
    let none = c.ok("completions", json!({"text": "%ne", "column": 4}));
    assert_eq!(
        none["targets"],
        json!([]),
        "nothing before the program runs"
    );
    c.run_to_line("fib.mlir", 14);
    let labels = |body: &Value| -> Vec<String> {
        body["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .map(|t| t["label"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let got = c.ok(
        "completions",
        json!({"text": "%k1 + %ne", "column": 10, "frameId": 1}),
    );
    assert_eq!(labels(&got), ["%next"]);
    assert_eq!(got["targets"][0]["start"], 7);
    assert_eq!(got["targets"][0]["length"], 3);
    let bare = c.ok("completions", json!({"text": "ne", "column": 3}));
    assert_eq!(labels(&bare), ["%next"]);
    assert_eq!(bare["targets"][0]["start"], 1);
    let registers = c.ok("completions", json!({"text": "%i", "column": 3}));
    let found = labels(&registers);
    assert!(found.contains(&"%i0".to_string()), "{found:?}");
    assert!(found.iter().all(|l| l.starts_with("%i")), "{found:?}");
    let r = c.request("completions", json!({"text": "x", "column": 9}));
    assert_eq!(r["message"], "`column` 9 is outside the text");
    // A console input of several lines: the cursor is at `column` of
    // `line` (the whole text's column 3 is after `x\n`, which completed
    // the empty word to every name).
    let second = c.ok(
        "completions",
        json!({"text": "x\n%ne + 1", "line": 2, "column": 4}),
    );
    assert_eq!(labels(&second), ["%next"]);
    assert_eq!(second["targets"][0]["start"], 1);
    assert_eq!(second["targets"][0]["length"], 3);
    let first = c.ok("completions", json!({"text": "ne\n%i", "column": 3}));
    assert_eq!(labels(&first), ["%next"]);
    let r = c.request(
        "completions",
        json!({"text": "x\ny", "line": 3, "column": 1}),
    );
    assert_eq!(r["message"], "`line` 3 is outside the text");
    c.disconnect_cleanly();
}

/// Breakpoints of every kind stop only in their own module, though another
/// module's function at the same ordinal and offset runs first
/// (`tests/data/dbg/twin_lib.vmasm`, `twin_app.vmasm`: `lib.__init` runs
/// before `app.__init`, `app.main` before `lib.f`).
#[test]
fn breakpoints_stop_only_in_their_own_module() {
    let mut c = launched(
        json!({"modules": [path("dbg/twin_lib.vmasm"), path("dbg/twin_app.vmasm")],
               "function": "main", "inputs": ["3"]}),
    );
    let set = c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "app.__init"}]}),
    );
    let init = set["breakpoints"][0]["instructionReference"].clone();
    assert!(init.is_string(), "{set}");
    // (`hitCondition` 1: the first hit, which `app.main` would be.)
    let set = c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "lib.f", "hitCondition": "1"}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    let function_bp = set["breakpoints"][0]["id"].clone();
    let set = c.ok(
        "setInstructionBreakpoints",
        json!({"breakpoints": [{"instructionReference": init}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    let instruction_bp = set["breakpoints"][0]["id"].clone();
    // twin.src is not on disk: the recorded name is matched.
    let set = c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("dbg/twin.src")}, "breakpoints": [{"line": 3}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    c.ok("configurationDone", json!({}));
    let stopped = c.event("stopped");
    assert_eq!(
        stopped["body"]["reason"], "instruction breakpoint",
        "{stopped}"
    );
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!([instruction_bp]));
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["name"], "app.__init", "{frame}");
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(
        stopped["body"]["reason"], "function breakpoint",
        "{stopped}"
    );
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!([function_bp]));
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["name"], "lib.f", "{frame}");
    assert_eq!(frame["line"], 3, "{frame}");
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.event("terminated");
    c.disconnect_cleanly();
}

/// A data breakpoint on a register of an initializer's frame ends when
/// that frame returns: the program stops before the next call's first
/// instruction (the other module's `__init`, at the same depth) with the
/// breakpoint removed, and does not watch that frame in its place.
#[test]
fn a_data_breakpoint_in_an_initializer_ends_with_its_frame() {
    let mut c = launched(
        json!({"modules": [path("dbg/twin_lib.vmasm"), path("dbg/twin_app.vmasm")],
               "function": "main", "inputs": ["3"]}),
    );
    c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "lib.__init"}]}),
    );
    c.ok("configurationDone", json!({}));
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["name"], "lib.__init", "{frame}");
    let scopes = c.ok("scopes", json!({"frameId": frame["id"]}));
    let registers = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .find(|s| s["name"] == "i32 registers")
        .expect("i32 registers")["variablesReference"]
        .clone();
    let info = c.ok(
        "dataBreakpointInfo",
        json!({"variablesReference": registers, "name": "%i0"}),
    );
    let set = c.ok(
        "setDataBreakpoints",
        json!({"breakpoints": [{"dataId": info["dataId"]}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    let watch = set["breakpoints"][0]["id"].clone();
    c.ok("setFunctionBreakpoints", json!({"breakpoints": []}));
    c.ok("continue", json!({"threadId": 1}));
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["text"], "%i0: 0 -> 7", "{stopped}");
    c.ok("continue", json!({"threadId": 1}));
    let removed = c.event("breakpoint");
    assert_eq!(removed["body"]["reason"], "removed", "{removed}");
    assert_eq!(removed["body"]["breakpoint"]["id"], watch, "{removed}");
    let stopped = c.event("stopped");
    assert_eq!(stopped["body"]["reason"], "data breakpoint", "{stopped}");
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!([watch]));
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["name"], "app.__init", "{frame}");
    c.ok("continue", json!({"threadId": 1}));
    assert_eq!(c.event("exited")["body"]["exitCode"], 0);
    c.event("terminated");
    c.disconnect_cleanly();
}

/// A module whose `__init` fails ends the program with `irvm run`'s
/// report of it (`module 'm' failed to initialize: ...`), as the README
/// promises; it was reported as a failure of the function.
#[test]
fn a_failing_init_is_reported_as_irvm_run_reports_it() {
    let dir = scratch("init-fails");
    let module = dir.join("m.vmasm");
    std::fs::write(
        &module,
        "vm.module @m version 0\n\nvm.export @__init\nvm.func @__init() -> () {\n^bb0:\n  \
         %i0 = vm.const.i32 3\n  vm.fail %i0, \"init refused\"\n}\n\nvm.export @f\n\
         vm.func @f() -> () {\n^bb0:\n  vm.return\n}\n",
    )
    .expect("module");
    let mut c = launched(json!({"modules": [module.display().to_string()], "function": "f"}));
    c.ok("configurationDone", json!({}));
    let exited = c.event("exited");
    assert_eq!(exited["body"]["exitCode"], 1);
    let stderr: Vec<String> = c
        .events
        .iter()
        .filter(|e| e["event"] == "output" && e["body"]["category"] == "stderr")
        .map(|e| e["body"]["output"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        stderr,
        [
            "irvm run: module 'm' failed to initialize: INVALID_ARGUMENT; init refused\n  \
          [0] m.__init+0x00000008\n"
        ]
    );
    c.disconnect_cleanly();
    let _ = std::fs::remove_dir_all(&dir);
}
