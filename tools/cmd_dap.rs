//! `irvm dap`: a Debug Adapter Protocol server on stdin/stdout, so editors
//! (VS Code, Neovim's nvim-dap, ...) can debug IREE VM programs. It is a
//! second front end over [`irvm_debugger::Debugger`], like `irvm dbg`.
//!
//! Messages are JSON bodies after a `Content-Length: N` header and a blank
//! line. A reader thread parses them and hands them to the session; it
//! also interrupts the running program for each so the session serves it
//! (the session is busy running it then), ends it at once on `terminate`
//! and `disconnect`, and itself answers the requests that need nothing of
//! the program (`threads`, and `pause` while it runs), which are so
//! answered even inside a long host call. Everything written
//! to stdout is a protocol message: the program's results go out as
//! `output` events.

mod disassembly;
mod names;
mod sources;

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use clap::{Args, FromArgMatches};
use irvm::loader::SourcePosition;
use irvm::{Ref, Value};
use irvm_debugger::{
    expandable, ref_children, BreakpointRequest, CodeAddress, DebugValue, Debugger, Format,
    PauseHandle, Stop,
};
use serde_json::{json, Map, Value as Json};

use self::disassembly::{Bases, DisassembleRequest, MAX_INSTRUCTIONS};
use self::names::{FunctionNames, SourceNames};
use self::sources::Sources;
use crate::cmd_run::LimitArgs;

/// Arguments of `irvm dap` (everything else comes in `launch`).
#[derive(clap::Args)]
pub struct DapArgs {}

/// Largest message body accepted.
const MAX_BODY_BYTES: usize = 16 << 20;
/// Longest header line accepted.
const MAX_HEADER_BYTES: u64 = 4096;

/// What the reader thread hands over.
enum Incoming {
    /// A parsed message.
    Message(Json),
    /// A message that is not JSON (the stream goes on).
    Malformed(String),
    /// The stream cannot go on (bad framing, read error, end of input).
    End(Option<String>),
}

/// Runs `irvm dap`.
pub fn main(_args: DapArgs) -> ExitCode {
    let control = Arc::new(Control::default());
    let (tx, rx) = channel();
    let reader_control = control.clone();
    let seq = Arc::new(AtomicU64::new(1));
    let reader_seq = seq.clone();
    std::thread::spawn(move || {
        read_messages(std::io::stdin().lock(), tx, &reader_control, &reader_seq)
    });
    let mut server = Server {
        rx,
        seq,
        control,
        session: None,
        vars: Vec::new(),
        trap_filter: false,
        source_bps: HashMap::new(),
        function_bps: Vec::new(),
        instruction_bps: Vec::new(),
        ended: false,
        initialized: false,
        bases: Bases { line: 1, column: 1 },
        sources: Sources::default(),
        names: HashMap::new(),
    };
    server.serve()
}

/// What the reader thread shares with the session.
#[derive(Default)]
struct Control {
    /// The running program's pause handle, once launched.
    pause: Mutex<Option<PauseHandle>>,
    /// Ends the running program even inside a long host call (a dispatch),
    /// once launched.
    cancel: Mutex<Option<irvm::InterruptHandle>>,
    /// `cancel` was used: a CANCELLED trap is the client's doing.
    cancelled: AtomicBool,
    /// The program is running (a request that runs it was answered and
    /// its stop is not yet reported). Held while a response from the
    /// reader thread is written, and set false before the stop's events
    /// go out, so the reader never answers after `stopped` or `exited`.
    running: Mutex<bool>,
    /// The reader thread answered a `pause` of the running program: the
    /// session reports the stop (`stopped`, reason `pause`) at the next
    /// instruction.
    pause_asked: AtomicBool,
}

impl Control {
    /// Stops a running program briefly so that the session serves what
    /// came (a program that is not running stops at once when it goes on,
    /// then goes on after the messages are served).
    fn interrupt(&self) {
        if let Some(p) = self
            .pause
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            p.interrupt();
        }
    }

    /// Marks the program as running or not (see [`Control::running`]).
    fn set_running(&self, on: bool) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = on;
    }

    /// Answers the requests that need no state of the program, from the
    /// reader thread, so that they are answered at once even while the
    /// session is inside a long host call (a dispatch): `threads` always,
    /// and `pause` of a running program (its `stopped` event follows at
    /// the program's next instruction). Whether it answered.
    fn answer(&self, seq: &AtomicU64, message: &Json) -> bool {
        if message.get("type").and_then(Json::as_str) != Some("request") {
            return false;
        }
        let request_seq = message.get("seq").and_then(Json::as_i64).unwrap_or(0);
        let body = match message.get("command").and_then(Json::as_str) {
            Some("threads")
                if message
                    .get("arguments")
                    .is_none_or(|a| a.is_null() || a.is_object()) =>
            {
                json!({"threads": [{"id": 1, "name": "main"}]})
            }
            Some("pause") => {
                let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
                if !*running {
                    return false;
                }
                write_message(seq, response(request_seq, "pause", Ok(Json::Null)));
                self.pause_asked.store(true, Ordering::Relaxed);
                self.interrupt();
                return true;
            }
            _ => return false,
        };
        let command = message.get("command").and_then(Json::as_str).unwrap_or("");
        write_message(seq, response(request_seq, command, Ok(body)));
        true
    }

    /// Ends the running program (for `terminate`, `disconnect` or the
    /// client going): a host call in progress is cut at its next check
    /// (a vmvx kernel's loop back edge, a native dispatch's next
    /// workgroup), not waited for.
    fn cancel(&self) {
        if let Some(c) = self
            .cancel
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            self.cancelled.store(true, Ordering::Relaxed);
            c.interrupt();
        }
    }
}

/// Reads framed messages until the stream ends or breaks. Each one is
/// handed over, then the running program is interrupted so that the
/// session serves it at once.
fn read_messages(
    mut input: impl BufRead,
    tx: Sender<Incoming>,
    control: &Control,
    seq: &AtomicU64,
) {
    loop {
        let outcome = read_message(&mut input);
        let message = match outcome {
            Ok(Some(body)) => match serde_json::from_slice::<Json>(&body) {
                Ok(m) if m.is_object() && control.answer(seq, &m) => continue,
                Ok(m) if m.is_object() => Incoming::Message(m),
                Ok(_) => Incoming::Malformed("a message must be a JSON object".into()),
                Err(e) => Incoming::Malformed(format!("message is not JSON: {e}")),
            },
            Ok(None) => Incoming::End(None),
            Err(e) => Incoming::End(Some(e)),
        };
        let end = matches!(message, Incoming::End(_));
        let ends_program = end
            || matches!(&message, Incoming::Message(m)
                if m.get("type").and_then(Json::as_str) == Some("request")
                    && matches!(m.get("command").and_then(Json::as_str), Some("terminate" | "disconnect")));
        if tx.send(message).is_err() {
            return;
        }
        control.interrupt();
        if ends_program {
            control.cancel();
        }
        if end {
            return;
        }
    }
}

/// One message body; `None` at a clean end of input.
fn read_message(input: &mut impl BufRead) -> Result<Option<Vec<u8>>, String> {
    let mut length: Option<usize> = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let n = input
            .by_ref()
            .take(MAX_HEADER_BYTES)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("reading a message header: {e}"))?;
        if n == 0 {
            if first {
                return Ok(None);
            }
            return Err("input ended inside a message header".into());
        }
        first = false;
        if line.last() != Some(&b'\n') {
            if (n as u64) < MAX_HEADER_BYTES {
                return Err("input ended inside a message header".into());
            }
            return Err(format!(
                "a header line is longer than {MAX_HEADER_BYTES} bytes (expected `Content-Length: N`)"
            ));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!(
                "bad header line `{text}` (expected `Content-Length: N`)"
            ));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| format!("bad Content-Length `{}`", value.trim()))?;
            if n > MAX_BODY_BYTES {
                return Err(format!(
                    "Content-Length {n} is over the limit of {MAX_BODY_BYTES} bytes"
                ));
            }
            length = Some(n);
        }
    }
    let n = length.ok_or("a message header without Content-Length")?;
    let mut body = vec![0u8; n];
    input
        .read_exact(&mut body)
        .map_err(|e| format!("reading a {n}-byte message body: {e}"))?;
    Ok(Some(body))
}

/// The launched program.
struct Session {
    dbg: Debugger,
    function: String,
    stop_on_entry: bool,
    started: bool,
    /// `noDebug`: the program runs without stopping.
    no_debug: bool,
}

/// What a `variablesReference` stands for (valid until the next run).
enum VarRef {
    /// One bank of a frame's registers.
    Bank { frame: usize, bank: &'static str },
    /// The source names of a frame's function.
    Names { frame: usize },
    /// The children of a list or buffer.
    Children(Ref),
}

/// A request's failure: the message the client shows.
type Reply = Result<Json, String>;

/// What serving a message leads to.
enum Next {
    /// Go on (serving, or running the program).
    Serve,
    /// The program was running and is now stopped by `pause` (answered).
    Paused,
    /// The program was running and ended (`terminate`).
    Ended,
    /// The adapter exits with this status.
    Exit(ExitCode),
}

/// Message of requests that need a stopped program, while it runs (the
/// spec's `notStopped`).
const NOT_STOPPED: &str = "notStopped";

struct Server {
    rx: Receiver<Incoming>,
    /// The next message's sequence number (logpoints write too).
    seq: Arc<AtomicU64>,
    control: Arc<Control>,
    session: Option<Session>,
    vars: Vec<VarRef>,
    trap_filter: bool,
    /// Breakpoint ids per source path (setBreakpoints replaces them).
    source_bps: HashMap<String, Vec<u32>>,
    function_bps: Vec<u32>,
    instruction_bps: Vec<u32>,
    /// The program ended (exited and terminated were sent).
    ended: bool,
    /// `initialize` came.
    initialized: bool,
    /// The client's line and column bases (`linesStartAt1`,
    /// `columnsStartAt1`).
    bases: Bases,
    sources: Sources,
    /// Source names per (module, function), made on first use.
    names: HashMap<(String, u32), Rc<FunctionNames>>,
}

/// The string field `key` of `args`.
fn str_arg<'a>(args: &'a Json, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

/// The array-of-strings field `key` of `args`.
fn strings_arg(args: &Json, key: &str) -> Result<Vec<String>, String> {
    match args.get(key) {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(items)) => items
            .iter()
            .map(|v| match v {
                Json::String(s) => Ok(s.clone()),
                Json::Number(n) => Ok(n.to_string()),
                _ => Err(format!("`{key}` must be an array of strings")),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an array of strings")),
    }
}

/// The integer field `key` of `args`.
fn int_arg(args: &Json, key: &str) -> Result<Option<i64>, String> {
    match args.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be an integer")),
    }
}

/// The limit attributes of `launch`, with the `irvm run` flags they are
/// (which are accepted as attribute names too).
const LIMIT_KEYS: [(&str, &str); 7] = [
    ("fuel", "fuel"),
    ("timeout", "timeout"),
    ("maxStackDepth", "max-stack-depth"),
    ("maxStackBytes", "max-stack-bytes"),
    ("maxBufferBytes", "max-buffer-bytes"),
    ("maxListElements", "max-list-elements"),
    ("maxMemoryBytes", "max-memory-bytes"),
];

/// The limits of a `launch` request, read as `irvm run`'s flags.
fn limits_from(args: &Json) -> Result<LimitArgs, String> {
    let mut argv = vec!["limits".to_string()];
    for (camel, flag) in LIMIT_KEYS {
        let value = args.get(camel).or_else(|| args.get(flag));
        match value {
            None | Some(Json::Null) => {}
            Some(Json::Number(n)) => argv.push(format!("--{flag}={n}")),
            Some(Json::String(s)) => argv.push(format!("--{flag}={s}")),
            Some(_) => return Err(format!("`{camel}` must be a number")),
        }
    }
    let cmd = LimitArgs::augment_args(clap::Command::new("limits"));
    let matches = cmd.try_get_matches_from(argv).map_err(|e| {
        e.to_string()
            .lines()
            .next()
            .unwrap_or("bad limit")
            .to_string()
    })?;
    LimitArgs::from_arg_matches(&matches).map_err(|e| e.to_string())
}

/// Writes a message to stdout with the next sequence number.
fn write_message(seq: &AtomicU64, mut message: Map<String, Json>) {
    message.insert("seq".into(), json!(seq.fetch_add(1, Ordering::Relaxed)));
    let body = Json::Object(message).to_string();
    let mut out = std::io::stdout().lock();
    let written =
        write!(out, "Content-Length: {}\r\n\r\n{body}", body.len()).and_then(|()| out.flush());
    if written.is_err() {
        // The client is gone: nothing more can be said.
        std::process::exit(1);
    }
}

/// A response. A failure carries its message twice, as the
/// schema's `ErrorResponse` has it: `message`, and `body.error` (a
/// `Message` the client shows).
fn response(request_seq: i64, command: &str, reply: Reply) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("type".into(), json!("response"));
    m.insert("request_seq".into(), json!(request_seq));
    m.insert("command".into(), json!(command));
    match reply {
        Ok(body) => {
            m.insert("success".into(), json!(true));
            if !body.is_null() {
                m.insert("body".into(), body);
            }
        }
        Err(message) => {
            let format = if message == NOT_STOPPED {
                "the program is running (pause it first)".to_string()
            } else {
                message.clone()
            };
            m.insert("success".into(), json!(false));
            m.insert("message".into(), json!(message));
            m.insert(
                "body".into(),
                json!({"error": {"id": 1, "format": format, "showUser": false}}),
            );
        }
    }
    m
}

/// The launch attributes `irvm dap` reads (the VS Code extension declares
/// them all), and those clients add.
const LAUNCH_ATTRIBUTES: &[&str] = &[
    "modules",
    "function",
    "inputs",
    "stopOnEntry",
    "noDebug",
    "sourceDirs",
    "parameters",
    "parameterMode",
    "fuel",
    "timeout",
    "maxStackDepth",
    "maxStackBytes",
    "maxBufferBytes",
    "maxListElements",
    "maxMemoryBytes",
    // The configuration's own fields, and those VS Code gives every
    // debugger (it sends them along).
    "type",
    "request",
    "name",
    "preLaunchTask",
    "postDebugTask",
    "internalConsoleOptions",
    "debugServer",
    "presentation",
    "suppressMultipleSessionWarning",
    "windows",
    "osx",
    "linux",
    "cwd",
    "env",
    "console",
];

/// The first launch attribute that is not read (nor a client's own:
/// `type`, `__sessionId`, ...), if any.
fn unknown_launch_attribute(args: &Json) -> Option<String> {
    let known = |k: &str| {
        LAUNCH_ATTRIBUTES.contains(&k)
            || k.starts_with("__")
            || LIMIT_KEYS.iter().any(|(_, flag)| *flag == k)
    };
    args.as_object()?.keys().find(|k| !known(k)).cloned()
}

/// Parses `0x...` (or decimal) memory references.
fn parse_reference(text: &str) -> Option<u64> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

impl Server {
    fn send(&mut self, message: Map<String, Json>) {
        write_message(&self.seq, message);
    }

    fn event(&mut self, event: &str, body: Json) {
        let mut m = Map::new();
        m.insert("type".into(), json!("event"));
        m.insert("event".into(), json!(event));
        if !body.is_null() {
            m.insert("body".into(), body);
        }
        self.send(m);
    }

    /// Sends a response ([`response`]).
    fn respond(&mut self, request_seq: i64, command: &str, reply: Reply) {
        self.send(response(request_seq, command, reply));
    }

    fn output(&mut self, category: &str, text: &str) {
        self.event("output", json!({"category": category, "output": text}));
    }

    fn serve(&mut self) -> ExitCode {
        loop {
            let Ok(incoming) = self.rx.recv() else {
                return ExitCode::FAILURE;
            };
            if let Next::Exit(code) = self.handle(incoming, false) {
                return code;
            }
        }
    }

    /// Serves one message; `running`: the program is running (stopped
    /// only by an interrupt).
    fn handle(&mut self, incoming: Incoming, running: bool) -> Next {
        let message = match incoming {
            Incoming::Message(m) => m,
            Incoming::Malformed(e) => {
                eprintln!("irvm dap: {e}");
                self.output("important", &format!("irvm dap: {e}\n"));
                return Next::Serve;
            }
            Incoming::End(end) => {
                // The client is gone: the program is stopped with it.
                if let Some(s) = self.session.as_mut() {
                    s.dbg.kill();
                }
                let Some(e) = end else {
                    return Next::Exit(ExitCode::SUCCESS);
                };
                eprintln!("irvm dap: {e}");
                self.output("important", &format!("irvm dap: {e}\n"));
                return Next::Exit(ExitCode::FAILURE);
            }
        };
        if message.get("type").and_then(Json::as_str) != Some("request") {
            return Next::Serve; // responses to reverse requests, events: nothing to do
        }
        let seq = message.get("seq").and_then(Json::as_i64).unwrap_or(0);
        let Some(command) = message.get("command").and_then(Json::as_str) else {
            self.respond(seq, "", Err("a request needs a `command`".into()));
            return Next::Serve;
        };
        let command = command.to_string();
        let args = message.get("arguments").cloned().unwrap_or(Json::Null);
        if !(args.is_null() || args.is_object()) {
            self.respond(seq, &command, Err("`arguments` must be an object".into()));
            return Next::Serve;
        }
        match command.as_str() {
            "disconnect" => {
                if let Some(s) = self.session.as_mut() {
                    s.dbg.kill();
                }
                self.respond(seq, &command, Ok(Json::Null));
                Next::Exit(ExitCode::SUCCESS)
            }
            "terminate" => {
                // A program that started ends here, as `irvm run` ends one
                // that is stopped: exit code 1.
                let started = self.session.as_ref().is_some_and(|s| s.started);
                if let Some(s) = self.session.as_mut() {
                    s.dbg.kill();
                }
                self.stop_running();
                self.respond(seq, &command, Ok(Json::Null));
                self.end_program(started.then_some(1));
                if running {
                    Next::Ended
                } else {
                    Next::Serve
                }
            }
            "pause" if running => {
                self.respond(seq, &command, Ok(Json::Null));
                self.stop_running();
                Next::Paused
            }
            "stackTrace" | "scopes" | "variables" | "evaluate" if running => {
                self.respond(seq, &command, Err(NOT_STOPPED.into()));
                Next::Serve
            }
            "configurationDone" | "continue" | "next" | "stepIn" | "stepOut" | "launch"
                if running =>
            {
                self.respond(seq, &command, Err("the program is already running".into()));
                Next::Serve
            }
            "configurationDone" | "continue" | "next" | "stepIn" | "stepOut" => {
                match self.prepare_run(&command) {
                    Ok(()) => {
                        let body = if command == "continue" {
                            json!({"allThreadsContinued": true})
                        } else {
                            Json::Null
                        };
                        self.respond(seq, &command, Ok(body));
                        self.run(&command, &args)
                    }
                    Err(e) => {
                        self.respond(seq, &command, Err(e));
                        Next::Serve
                    }
                }
            }
            _ => {
                let reply = self.request(&command, &args);
                self.respond(seq, &command, reply);
                Next::Serve
            }
        }
    }

    /// The launch asked for `noDebug`.
    fn no_debug(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.no_debug)
    }

    /// The answer to a breakpoints request under `noDebug`: none set.
    fn no_breakpoints(args: &Json) -> Reply {
        let count = match args.get("breakpoints") {
            Some(Json::Array(a)) => a.len(),
            _ => 0,
        };
        let refused = json!({"verified": false, "message": "the launch asked for noDebug: the program runs without stopping"});
        Ok(json!({"breakpoints": vec![refused; count]}))
    }

    fn session(&mut self) -> Result<&mut Session, String> {
        self.session
            .as_mut()
            .ok_or_else(|| "no program: send `launch` first".to_string())
    }

    /// The requests that do not run the program.
    fn request(&mut self, command: &str, args: &Json) -> Reply {
        match command {
            "initialize" => self.initialize(args),
            "launch" => self.launch(args),
            "setBreakpoints"
            | "setFunctionBreakpoints"
            | "setInstructionBreakpoints"
            | "setExceptionBreakpoints"
                if self.no_debug() =>
            {
                Self::no_breakpoints(args)
            }
            "setBreakpoints" => self.set_breakpoints(args),
            "setFunctionBreakpoints" => self.set_function_breakpoints(args),
            "setExceptionBreakpoints" => self.set_exception_breakpoints(args),
            "setInstructionBreakpoints" => self.set_instruction_breakpoints(args),
            "threads" => Ok(json!({"threads": [{"id": 1, "name": "main"}]})),
            "stackTrace" => self.stack_trace(args),
            "scopes" => self.scopes(args),
            "variables" => self.variables(args),
            "evaluate" => self.evaluate(args),
            "disassemble" => self.disassemble(args),
            "source" => self.source(args),
            // Stopped already (or not started): nothing to do.
            "pause" => Ok(Json::Null),
            other => Err(format!("unknown request `{other}`")),
        }
    }

    fn initialize(&mut self, args: &Json) -> Reply {
        if self.initialized {
            return Err("already initialized (`initialize` comes once)".into());
        }
        self.initialized = true;
        let base = |key: &str| match args.get(key) {
            None | Some(Json::Null) => Ok(1),
            Some(Json::Bool(b)) => Ok(i64::from(*b)),
            Some(_) => Err(format!("`{key}` must be true or false")),
        };
        self.bases = Bases {
            line: base("linesStartAt1")?,
            column: base("columnsStartAt1")?,
        };
        Ok(self.capabilities())
    }

    fn capabilities(&self) -> Json {
        json!({
            "supportsConfigurationDoneRequest": true,
            "supportsFunctionBreakpoints": true,
            "supportsConditionalBreakpoints": true,
            "supportsHitConditionalBreakpoints": true,
            "supportsEvaluateForHovers": true,
            "supportsSteppingGranularity": true,
            "supportsInstructionBreakpoints": true,
            "supportsDisassembleRequest": true,
            "supportsTerminateRequest": true,
            "supportsLogPoints": true,
            "exceptionBreakpointFilters": [
                {"filter": "trap", "label": "Traps", "description": "Stop where the program fails", "default": true}
            ]
        })
    }

    /// A line as the client counts.
    fn line_out(&self, line: i32) -> i64 {
        i64::from(line) - 1 + self.bases.line
    }

    fn launch(&mut self, args: &Json) -> Reply {
        if self.session.is_some() {
            return Err("a program is already launched".into());
        }
        let modules = strings_arg(args, "modules")?;
        if modules.is_empty() {
            return Err("`modules` must list at least one module".into());
        }
        let function = str_arg(args, "function")?
            .ok_or("`function` is required (the exported function to debug)")?
            .to_string();
        let inputs = strings_arg(args, "inputs")?;
        if let Some(unknown) = unknown_launch_attribute(args) {
            self.output(
                "important",
                &format!("irvm dap: unknown launch attribute `{unknown}` (ignored)\n"),
            );
        }
        let flag = |key: &str| match args.get(key) {
            None | Some(Json::Null) => Ok(false),
            Some(Json::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("`{key}` must be true or false")),
        };
        let no_debug = flag("noDebug")?;
        let stop_on_entry = flag("stopOnEntry")? && !no_debug;
        let source_dirs: Vec<PathBuf> = strings_arg(args, "sourceDirs")?
            .into_iter()
            .map(PathBuf::from)
            .collect();
        let limits = limits_from(args)?;
        // `parameters`: `--parameters` values (`[scope=]FILE`);
        // `parameterMode`: `file` or `preload`.
        crate::parameters::set(&crate::parameters::ParameterArgs {
            parameters: strings_arg(args, "parameters")?,
            parameter_mode: str_arg(args, "parameterMode")?
                .unwrap_or("file")
                .to_string(),
        });
        let mut dbg = crate::cmd_dbg::prepare(&modules, &function, &inputs, &limits)?;
        // Requests must reach the program anywhere.
        dbg.set_interruptible(true);
        // Logpoints' messages go out as the program reaches them.
        let seq = self.seq.clone();
        dbg.set_log_sink(Some(Box::new(move |text| {
            let mut m = Map::new();
            m.insert("type".into(), json!("event"));
            m.insert("event".into(), json!("output"));
            m.insert(
                "body".into(),
                json!({"category": "console", "output": format!("{text}\n")}),
            );
            write_message(&seq, m);
        })));
        *self.control.pause.lock().unwrap_or_else(|e| e.into_inner()) = Some(dbg.pause_handle());
        *self
            .control
            .cancel
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(dbg.cancel_handle());
        self.sources = Sources::new(crate::cmd_dbg::source_search_path(&source_dirs, &modules));
        self.session = Some(Session {
            dbg,
            function: function.trim_start_matches('@').to_string(),
            stop_on_entry,
            started: false,
            no_debug,
        });
        self.event("initialized", Json::Null);
        Ok(Json::Null)
    }

    /// A DAP breakpoint for a debugger breakpoint.
    fn breakpoint_json(&self, b: &irvm_debugger::Breakpoint, asked_line: Option<i64>) -> Json {
        let mut j = json!({"id": b.id, "verified": true});
        if let Some(line) = b.line {
            j["line"] = json!(self.line_out(line));
            if asked_line.is_some_and(|a| a != i64::from(line)) {
                j["message"] = json!(format!(
                    "moved to line {}, the next line with code",
                    self.line_out(line)
                ));
            }
        }
        if let (Some(s), Some(a)) = (self.session.as_ref(), b.addresses.first()) {
            if let Some(r) = s.dbg.address_reference(a) {
                j["instructionReference"] = json!(format!("{r:#x}"));
            }
        }
        j
    }

    fn clear(&mut self, ids: Vec<u32>) -> Result<(), String> {
        let s = self.session()?;
        for id in ids {
            // Gone already when a temporary one stopped: nothing to do.
            let _ = s.dbg.delete_breakpoint(Some(id));
        }
        Ok(())
    }

    fn set_breakpoints(&mut self, args: &Json) -> Reply {
        let source = args.get("source").ok_or("`source` is required")?;
        let wanted: Vec<Json> = match args.get("breakpoints") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(a)) => a.clone(),
            Some(_) => return Err("`breakpoints` must be an array".into()),
        };
        let reference = int_arg(source, "sourceReference")?.filter(|r| *r > 0);
        if let Some(function) = self.listed_function(source, reference)? {
            return self.set_listing_breakpoints(function, &wanted);
        }
        let path = str_arg(source, "path")?
            .or(str_arg(source, "name")?)
            .ok_or("`source.path` is required")?
            .to_string();
        let old = self.source_bps.remove(&path).unwrap_or_default();
        self.clear(old)?;
        let recorded = self.session()?.dbg.source_files();
        let files = self.sources.recorded_files(&path, &recorded);
        let mut ids = Vec::new();
        let mut out = Vec::new();
        for w in &wanted {
            let asked = int_arg(w, "line")?.ok_or("a source breakpoint needs a `line`")?;
            // The debugger counts from 1.
            let line = asked.saturating_add(1 - self.bases.line);
            let Ok(line32) = i32::try_from(line) else {
                out.push(json!({"verified": false, "line": asked, "message": format!("no line {asked}")}));
                continue;
            };
            let req = BreakpointRequest {
                spec: format!("{path}:{asked}"),
                condition: None,
                hit_condition: str_arg(w, "hitCondition")?.map(str::to_string),
                temporary: false,
            };
            let added = self.session()?.dbg.add_line_breakpoint(&files, line32, req);
            let added = added.map_err(|e| e.0).and_then(|b| self.refine(b, w));
            match added {
                Ok(b) => {
                    ids.push(b.id);
                    out.push(self.breakpoint_json(&b, Some(line)));
                }
                Err(e) => out.push(json!({"verified": false, "line": asked, "message": e})),
            }
        }
        self.source_bps.insert(path, ids);
        Ok(json!({"breakpoints": out}))
    }

    /// The function whose disassembly document a breakpoint's `source`
    /// names: by its name `MODULE.FUNCTION.vmasm` when that is a function
    /// without debug information and no file of that path is on disk
    /// (references are the session's own: a client restarting a session
    /// sends the previous one's), else by its `sourceReference`; `None`
    /// for a file.
    fn listed_function(
        &mut self,
        source: &Json,
        reference: Option<i64>,
    ) -> Result<Option<CodeAddress>, String> {
        let name = str_arg(source, "name")?;
        let path = str_arg(source, "path")?;
        let on_disk = path.is_some_and(|p| std::path::Path::new(p).is_file());
        let dbg = &self.session()?.dbg;
        let by_name = name
            .and_then(|n| n.strip_suffix(".vmasm"))
            .filter(|_| !on_disk)
            .and_then(|n| dbg.resolve_location(n).ok())
            .and_then(|found| match &found[..] {
                [a] if !dbg.has_positions(&a.module, a.function) => Some(CodeAddress {
                    offset: 0,
                    ..a.clone()
                }),
                _ => None,
            });
        if let Some(function) = by_name {
            self.sources.reference_for(&function);
            return Ok(Some(function));
        }
        match reference {
            Some(r) => self
                .sources
                .referenced(r)
                .map(Some)
                .ok_or_else(|| format!("no source with reference {r}")),
            None => Ok(None),
        }
    }

    /// Breakpoints in the disassembly of a function without debug
    /// information: a line stops at its instruction, a label or header
    /// line at the next instruction.
    fn set_listing_breakpoints(&mut self, function: CodeAddress, wanted: &[Json]) -> Reply {
        let key = format!("disassembly of {}.{}", function.module, function.function);
        let old = self.source_bps.remove(&key).unwrap_or_default();
        self.clear(old)?;
        let listing = sources::listing(&self.session()?.dbg, &function)?;
        let mut by_line: Vec<(i64, u32)> = listing.lines.iter().map(|(o, l)| (*l, *o)).collect();
        by_line.sort_unstable();
        let mut ids = Vec::new();
        let mut out = Vec::new();
        for w in wanted {
            let asked = int_arg(w, "line")?.ok_or("a source breakpoint needs a `line`")?;
            let line = asked.saturating_add(1 - self.bases.line);
            let Some(&(at, offset)) = by_line.iter().find(|(l, _)| *l >= line) else {
                out.push(json!({"verified": false, "line": asked, "message": "no instruction at or after this line"}));
                continue;
            };
            let address = CodeAddress {
                offset,
                ..function.clone()
            };
            let added = self.session()?.dbg.add_address_breakpoint(address, None);
            let added = added.map_err(|e| e.0).and_then(|b| self.refine(b, w));
            match added {
                Ok(b) => {
                    ids.push(b.id);
                    let mut j = self.breakpoint_json(&b, None);
                    j["line"] = json!(at - 1 + self.bases.line);
                    out.push(j);
                }
                Err(e) => out.push(json!({"verified": false, "line": asked, "message": e})),
            }
        }
        self.source_bps.insert(key, ids);
        Ok(json!({"breakpoints": out}))
    }

    fn set_function_breakpoints(&mut self, args: &Json) -> Reply {
        let wanted: Vec<Json> = match args.get("breakpoints") {
            Some(Json::Array(a)) => a.clone(),
            None | Some(Json::Null) => Vec::new(),
            Some(_) => return Err("`breakpoints` must be an array".into()),
        };
        let old = std::mem::take(&mut self.function_bps);
        self.clear(old)?;
        let mut out = Vec::new();
        for w in &wanted {
            let name = str_arg(w, "name")?.ok_or("a function breakpoint needs a `name`")?;
            let req = BreakpointRequest {
                spec: name.to_string(),
                condition: None,
                hit_condition: str_arg(w, "hitCondition")?.map(str::to_string),
                temporary: false,
            };
            let added = self.session()?.dbg.add_breakpoint(req);
            let added = added.map_err(|e| e.0).and_then(|b| self.refine(b, w));
            match added {
                Ok(b) => {
                    self.function_bps.push(b.id);
                    out.push(self.breakpoint_json(&b, None));
                }
                Err(e) => out.push(json!({"verified": false, "message": e})),
            }
        }
        Ok(json!({"breakpoints": out}))
    }

    /// Gives a new breakpoint the condition and log message of the
    /// client's breakpoint `w`, with source names (at the breakpoint's
    /// first instruction) in them; when they are bad, the breakpoint is
    /// deleted and the reason returned.
    fn refine(
        &mut self,
        b: irvm_debugger::Breakpoint,
        w: &Json,
    ) -> Result<irvm_debugger::Breakpoint, String> {
        let outcome = self.refine_or_fail(&b, w);
        if outcome.is_err() {
            let _ = self.session()?.dbg.delete_breakpoint(Some(b.id));
        }
        outcome.map(|()| b)
    }

    fn refine_or_fail(&mut self, b: &irvm_debugger::Breakpoint, w: &Json) -> Result<(), String> {
        let condition = str_arg(w, "condition")?.filter(|c| !c.trim().is_empty());
        let log = str_arg(w, "logMessage")?;
        if condition.is_none() && log.is_none() {
            return Ok(());
        }
        let names = match b.addresses.first() {
            Some(a) => {
                let position = self.session()?.dbg.position_of(a);
                self.names_at(a, position.as_ref())?
            }
            None => Rc::new(SourceNames::default()),
        };
        if let Some(c) = condition {
            let vm = names.substitute(c, false)?;
            let set = self.session()?.dbg.set_condition(b.id, Some(&vm));
            set.map_err(|e| in_terms_of(e.0, &vm, c))?;
        }
        if let Some(message) = log {
            let vm = names.substitute_in_braces(message)?;
            let set = self.session()?.dbg.set_log_message(b.id, Some(&vm));
            set.map_err(|e| e.0)?;
        }
        Ok(())
    }

    fn set_instruction_breakpoints(&mut self, args: &Json) -> Reply {
        let wanted: Vec<Json> = match args.get("breakpoints") {
            Some(Json::Array(a)) => a.clone(),
            None | Some(Json::Null) => Vec::new(),
            Some(_) => return Err("`breakpoints` must be an array".into()),
        };
        let old = std::mem::take(&mut self.instruction_bps);
        self.clear(old)?;
        let mut out = Vec::new();
        for w in &wanted {
            let reference = str_arg(w, "instructionReference")?
                .ok_or("an instruction breakpoint needs an `instructionReference`")?;
            let offset = int_arg(w, "offset")?.unwrap_or(0);
            let s = self.session()?;
            let address = parse_reference(reference)
                .and_then(|r| r.checked_add_signed(offset))
                .and_then(|r| s.dbg.address_from_reference(r));
            let added = match address {
                Some(a) => s.dbg.add_address_breakpoint(a, None).map_err(|e| e.0),
                None => Err(format!(
                    "`{reference}` (+{offset}) is not an instruction address"
                )),
            };
            let added = added.and_then(|b| self.refine(b, w));
            match added {
                Ok(b) => {
                    self.instruction_bps.push(b.id);
                    out.push(self.breakpoint_json(&b, None));
                }
                Err(e) => out.push(json!({"verified": false, "message": e})),
            }
        }
        Ok(json!({"breakpoints": out}))
    }

    fn set_exception_breakpoints(&mut self, args: &Json) -> Reply {
        let filters = strings_arg(args, "filters")?;
        if let Some(bad) = filters.iter().find(|f| f.as_str() != "trap") {
            return Err(format!(
                "unknown exception filter `{bad}` (the one filter is `trap`)"
            ));
        }
        self.trap_filter = !filters.is_empty();
        Ok(
            json!({"breakpoints": filters.iter().map(|_| json!({"verified": true})).collect::<Vec<_>>()}),
        )
    }

    /// Checks that the run request can go ahead.
    fn prepare_run(&mut self, command: &str) -> Result<(), String> {
        if self.ended {
            return Err("the program has ended".into());
        }
        let s = self.session()?;
        match command {
            "configurationDone" if s.started => Err("the program is already running".into()),
            "configurationDone" => Ok(()),
            _ if !s.started => Err("the program has not started (send `configurationDone`)".into()),
            _ => s.dbg.require_running_program().map_err(|e| e.0),
        }
    }

    /// Runs the program for a request, serving the requests that come
    /// meanwhile, until it stops, ends or the client goes.
    fn run(&mut self, command: &str, args: &Json) -> Next {
        self.control.set_running(true);
        let next = self.run_until_stopped(command, args);
        self.stop_running();
        next
    }

    /// The program stopped running: the reader thread answers no more
    /// `pause` (and one it answered is done with). Called before the
    /// stop's events go out.
    fn stop_running(&mut self) {
        self.control.set_running(false);
        self.control.pause_asked.store(false, Ordering::Relaxed);
    }

    fn run_until_stopped(&mut self, command: &str, args: &Json) -> Next {
        self.vars.clear();
        let instruction = args.get("granularity").and_then(Json::as_str) == Some("instruction");
        let Some(s) = self.session.as_mut() else {
            return Next::Serve;
        };
        if command == "configurationDone" {
            s.started = true;
            let function = s.function.clone();
            self.output("stdout", &format!("EXEC @{function}\n"));
        }
        let Some(s) = self.session.as_mut() else {
            return Next::Serve;
        };
        let mut stop = match command {
            "configurationDone" => s.dbg.start(s.stop_on_entry),
            "continue" => s.dbg.continue_(),
            "next" | "stepIn" if instruction => s.dbg.step_instruction(),
            "next" => s.dbg.step_over(),
            "stepIn" => s.dbg.step(),
            _ => s.dbg.finish(),
        };
        loop {
            match stop {
                // The reader thread answered a `pause`: stopped, what
                // came meanwhile is served with the program stopped.
                Ok(Stop::Interrupted) if self.control.pause_asked.load(Ordering::Relaxed) => {
                    self.stop_running();
                    self.event("stopped", stopped_body("pause"));
                    return Next::Serve;
                }
                Ok(Stop::Interrupted) => match self.serve_while_running() {
                    Next::Serve => {}
                    Next::Paused => {
                        self.event("stopped", stopped_body("pause"));
                        return Next::Serve;
                    }
                    Next::Ended => return Next::Serve,
                    Next::Exit(code) => return Next::Exit(code),
                },
                // Ended by the client (terminate, disconnect, gone): what
                // asked for it is served, nothing is reported.
                Ok(Stop::Exception(_) | Stop::Failed(_))
                    if self.control.cancelled.load(Ordering::Relaxed) =>
                {
                    match self.serve_while_running() {
                        Next::Exit(code) => return Next::Exit(code),
                        _ => return Next::Serve,
                    }
                }
                // Not asked to stop at traps: the program ends.
                Ok(Stop::Exception(_)) if !self.trap_filter || self.no_debug() => {}
                Ok(stop) => {
                    self.stop_running();
                    self.report(stop);
                    return Next::Serve;
                }
                Err(e) => {
                    self.stop_running();
                    self.output("stderr", &format!("irvm dap: {}\n", e.0));
                    return Next::Serve;
                }
            }
            let Some(s) = self.session.as_mut() else {
                return Next::Serve;
            };
            stop = if s.dbg.trap().is_some() {
                s.dbg.continue_()
            } else {
                s.dbg.resume()
            };
        }
    }

    /// Serves the messages that came while the program ran (it is
    /// stopped by an interrupt now). Stops at a `pause`: what follows it
    /// is served with the program stopped.
    fn serve_while_running(&mut self) -> Next {
        while let Ok(incoming) = self.rx.try_recv() {
            match self.handle(incoming, true) {
                Next::Serve => {}
                other => return other,
            }
        }
        Next::Serve
    }

    /// Reports a stop (not an interrupt) to the client.
    fn report(&mut self, stop: Stop) {
        match stop {
            Stop::Entry => self.event("stopped", stopped_body("entry")),
            Stop::Step | Stop::Returned(_) => self.event("stopped", stopped_body("step")),
            Stop::Paused | Stop::Interrupted => self.event("stopped", stopped_body("pause")),
            Stop::Breakpoint(hit) => {
                let reason = if self.function_bps.contains(&hit.id) {
                    "function breakpoint"
                } else if self.instruction_bps.contains(&hit.id) {
                    "instruction breakpoint"
                } else {
                    "breakpoint"
                };
                let mut body = stopped_body(reason);
                body["hitBreakpointIds"] = json!([hit.id]);
                if let Some(e) = hit.condition_error {
                    body["text"] = json!(format!(
                        "error in the condition of breakpoint {}: {e}",
                        hit.id
                    ));
                }
                self.event("stopped", body);
            }
            Stop::Exception(trap) => {
                let mut body = stopped_body("exception");
                let text = format!("{}: {}", trap.code, trap.message);
                body["text"] = json!(text);
                body["description"] = json!(format!("Trapped: {text}"));
                self.event("stopped", body);
            }
            Stop::Finished(values) => {
                // Results computed from an archive that changed meanwhile
                // are not shown (as `irvm run`).
                if let Err(e) = crate::parameters::check_intact() {
                    self.output("stderr", &format!("irvm dap: {e}\n"));
                    self.end_program(Some(1));
                    return;
                }
                let text = results_text(&values);
                self.output("stdout", &text);
                self.end_program(Some(0));
            }
            Stop::Failed(trap) => {
                let text = crate::cmd_run::describe_trap("run", &trap);
                self.output("stderr", &format!("{text}\n"));
                self.end_program(Some(1));
            }
        }
    }

    fn end_program(&mut self, exit_code: Option<i32>) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(code) = exit_code {
            self.event("exited", json!({"exitCode": code}));
        }
        self.event("terminated", Json::Null);
    }

    fn frame_arg(&mut self, args: &Json) -> Result<usize, String> {
        let id = int_arg(args, "frameId")?.unwrap_or(1);
        let n = id
            .checked_sub(1)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("no frame with id {id}"))?;
        let count = self.session()?.dbg.frames().len();
        if n >= count {
            return Err(format!("no frame with id {id}"));
        }
        Ok(n)
    }

    fn stack_trace(&mut self, args: &Json) -> Reply {
        let start = int_arg(args, "startFrame")?.unwrap_or(0).max(0) as usize;
        let levels = int_arg(args, "levels")?.unwrap_or(0).max(0) as usize;
        let (line_base, column_base) = (self.bases.line, self.bases.column);
        let Some(s) = self.session.as_ref() else {
            return Err("no program: send `launch` first".into());
        };
        let frames = s.dbg.frames();
        let total = frames.len();
        let end = if levels == 0 {
            total
        } else {
            start.saturating_add(levels).min(total)
        };
        let mut out = Vec::new();
        for n in start..end {
            let Some((address, pos)) = s.dbg.frame_location(n) else {
                continue;
            };
            let name = s.dbg.function_name(&address);
            let mut frame = json!({
                "id": n + 1,
                "name": format!("{}.{name}", address.module),
                "line": 0,
                "column": 0,
            });
            if let Some(r) = s.dbg.address_reference(&address) {
                frame["instructionPointerReference"] = json!(format!("{r:#x}"));
            }
            if let Some(p) = pos {
                frame["line"] = json!(i64::from(p.line) - 1 + line_base);
                frame["column"] = json!(i64::from(p.col) - 1 + column_base);
                frame["source"] = self.sources.source_json(&p.file);
            } else if !s.dbg.has_positions(&address.module, address.function) {
                // No debug information: the function's disassembly.
                if let Ok(listing) = sources::listing(&s.dbg, &address) {
                    if let Some(&line) = listing.lines.get(&address.offset) {
                        frame["line"] = json!(line - 1 + line_base);
                        frame["column"] = json!(column_base);
                        frame["source"] = self.sources.generated_json(&s.dbg, &address);
                    }
                }
            }
            out.push(frame);
        }
        Ok(json!({"stackFrames": out, "totalFrames": total}))
    }

    fn source(&mut self, args: &Json) -> Reply {
        let reference = match args.get("source").map(|s| int_arg(s, "sourceReference")) {
            Some(r) => r?,
            None => None,
        };
        let reference = match reference {
            Some(r) => r,
            None => int_arg(args, "sourceReference")?.ok_or("`sourceReference` is required")?,
        };
        let named = match args.get("source") {
            Some(source) => self.listed_function(source, Some(reference))?,
            None => None,
        };
        let address = match named {
            Some(a) => a,
            None => self
                .sources
                .referenced(reference)
                .ok_or_else(|| format!("no source with reference {reference}"))?,
        };
        let s = self.session()?;
        let listing = sources::listing(&s.dbg, &address)?;
        Ok(json!({"content": listing.text, "mimeType": "text/x-vmasm"}))
    }
    fn scopes(&mut self, args: &Json) -> Reply {
        let frame = self.frame_arg(args)?;
        let regs = self.session()?.dbg.registers(frame).map_err(|e| e.0)?;
        let mut scopes = Vec::new();
        let names = self.names_of(frame)?;
        if !names.by_name.is_empty() {
            self.vars.push(VarRef::Names { frame });
            scopes.push(json!({
                "name": "Source names",
                "presentationHint": "locals",
                "variablesReference": self.vars.len(),
                "namedVariables": names.by_name.len(),
                "expensive": false,
            }));
        }
        for bank in ["i32", "i64", "f32", "f64", "ref"] {
            let count = regs.iter().filter(|(_, v)| bank_of(v) == bank).count();
            if count == 0 {
                continue;
            }
            self.vars.push(VarRef::Bank { frame, bank });
            scopes.push(json!({
                "name": format!("{bank} registers"),
                "presentationHint": "registers",
                "variablesReference": self.vars.len(),
                "namedVariables": count,
                "expensive": false,
            }));
        }
        Ok(json!({"scopes": scopes}))
    }

    /// A DAP variable for a value (its children registered when it has some).
    fn variable(&mut self, name: String, v: &DebugValue) -> Json {
        let s = self.session.as_ref();
        let text = s
            .map(|s| s.dbg.format_value(v, Format::Natural))
            .unwrap_or_default();
        let reference = match v {
            DebugValue::Ref(r) if expandable(r) => {
                self.vars.push(VarRef::Children(r.clone()));
                self.vars.len()
            }
            _ => 0,
        };
        json!({"name": name, "value": text, "type": v.type_name(), "variablesReference": reference})
    }

    fn variables(&mut self, args: &Json) -> Reply {
        let id = int_arg(args, "variablesReference")?.ok_or("`variablesReference` is required")?;
        let index = id
            .checked_sub(1)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("no variables with reference {id}"))?;
        let items: Vec<(String, DebugValue)> = match self.vars.get(index) {
            Some(VarRef::Bank { frame, bank }) => {
                let (frame, bank) = (*frame, *bank);
                self.session()?
                    .dbg
                    .registers(frame)
                    .map_err(|e| e.0)?
                    .into_iter()
                    .filter(|(_, v)| bank_of(v) == bank)
                    .map(|(r, v)| (r.to_string(), v))
                    .collect()
            }
            Some(VarRef::Children(r)) => ref_children(r),
            Some(VarRef::Names { frame }) => return self.name_variables(*frame),
            None => return Err(format!("no variables with reference {id}")),
        };
        let out: Vec<Json> = items
            .into_iter()
            .map(|(n, v)| self.variable(n, &v))
            .collect();
        Ok(json!({"variables": out}))
    }

    fn evaluate(&mut self, args: &Json) -> Reply {
        let expr = str_arg(args, "expression")?
            .ok_or("`expression` is required")?
            .to_string();
        let frame = if args.get("frameId").is_some() {
            self.frame_arg(args)?
        } else {
            0
        };
        // Over the source text a name is the source's, even one spelled
        // like a register (`%i1`); elsewhere registers come first.
        let hover = args.get("context").and_then(Json::as_str) == Some("hover");
        let names = self.names_of(frame)?;
        // Editors leave the `%` out of the word under the mouse.
        let hovered = hover.then(|| names.hovered(expr.trim())).flatten();
        let vm_expr = names.substitute(hovered.as_deref().unwrap_or(&expr), hover)?;
        let v = self
            .session()?
            .dbg
            .evaluate(&vm_expr, frame)
            .map_err(|e| in_terms_of(e.0, &vm_expr, &expr))?;
        let var = self.variable(expr, &v);
        Ok(json!({
            "result": var["value"],
            "type": var["type"],
            "variablesReference": var["variablesReference"],
        }))
    }

    /// The source names of frame `frame`'s function.
    fn names_of(&mut self, frame: usize) -> Result<Rc<SourceNames>, String> {
        let s = self
            .session
            .as_ref()
            .ok_or("no program: send `launch` first")?;
        let Some((a, position)) = s.dbg.frame_location(frame) else {
            return Ok(Rc::new(SourceNames::default()));
        };
        self.names_at(&a, position.as_ref())
    }

    /// The source names at the instruction `a` (located at `position`).
    fn names_at(
        &mut self,
        a: &CodeAddress,
        position: Option<&SourcePosition>,
    ) -> Result<Rc<SourceNames>, String> {
        let s = self
            .session
            .as_ref()
            .ok_or("no program: send `launch` first")?;
        let key = (a.module.clone(), a.function);
        let function = match self.names.get(&key) {
            Some(n) => n.clone(),
            None => {
                let n = Rc::new(FunctionNames::of(
                    &s.dbg,
                    &self.sources,
                    &a.module,
                    a.function,
                ));
                self.names.insert(key, n.clone());
                n
            }
        };
        Ok(Rc::new(function.at(position)))
    }

    /// The "Source names" scope: each name with its register's value.
    fn name_variables(&mut self, frame: usize) -> Reply {
        let names = self.names_of(frame)?;
        let mut out = Vec::new();
        for name in names.by_name.keys() {
            let register = match names.register(name) {
                Some(Ok(r)) => r,
                Some(Err(why)) => {
                    out.push(json!({"name": name, "value": why, "variablesReference": 0}));
                    continue;
                }
                None => continue,
            };
            let v = self
                .session()?
                .dbg
                .evaluate(&register.to_string(), frame)
                .map_err(|e| e.0)?;
            let mut var = self.variable(name.clone(), &v);
            let shared = names.sharing(name, register);
            let place = if shared.is_empty() {
                format!("{register}")
            } else {
                format!("{register}, shared with {}", shared.join(", "))
            };
            var["type"] = json!(format!("{} in {place}", v.type_name()));
            var["evaluateName"] = json!(register.to_string());
            out.push(var);
        }
        Ok(json!({"variables": out}))
    }

    fn disassemble(&mut self, args: &Json) -> Reply {
        let reference = str_arg(args, "memoryReference")?.ok_or("`memoryReference` is required")?;
        let offset = int_arg(args, "offset")?.unwrap_or(0);
        let instruction_offset = int_arg(args, "instructionOffset")?.unwrap_or(0);
        let count = int_arg(args, "instructionCount")?.ok_or("`instructionCount` is required")?;
        let count =
            usize::try_from(count).map_err(|_| "`instructionCount` must not be negative")?;
        if count > MAX_INSTRUCTIONS {
            return Err(format!(
                "`instructionCount` {count} is over the limit of {MAX_INSTRUCTIONS}"
            ));
        }
        let reference = parse_reference(reference)
            .and_then(|r| r.checked_add_signed(offset))
            .ok_or_else(|| format!("`{reference}` (+{offset}) is not an instruction address"))?;
        let Some(s) = self.session.as_ref() else {
            return Err("no program: send `launch` first".into());
        };
        let request = DisassembleRequest {
            reference,
            instruction_offset,
            count,
        };
        let instructions =
            disassembly::disassemble(&s.dbg, &mut self.sources, &request, &self.bases)?;
        Ok(json!({"instructions": instructions}))
    }
}

/// An error about the expression `evaluated` said in terms of what the
/// user typed (`typed`, with source names where `evaluated` has registers).
fn in_terms_of(message: String, evaluated: &str, typed: &str) -> String {
    if evaluated == typed {
        return message;
    }
    let quoted = format!("`{evaluated}`");
    if message.contains(&quoted) {
        message.replace(&quoted, &format!("`{typed}`"))
    } else {
        format!("`{typed}` (as `{evaluated}`): {message}")
    }
}

/// The bank a register value belongs to.
fn bank_of(v: &DebugValue) -> &'static str {
    match v {
        DebugValue::I64(_) => "i64",
        DebugValue::F32(_) => "f32",
        DebugValue::F64(_) => "f64",
        DebugValue::Ref(_) => "ref",
        _ => "i32",
    }
}

/// A `stopped` event's body.
fn stopped_body(reason: &str) -> Json {
    json!({"reason": reason, "threadId": 1, "allThreadsStopped": true})
}

/// The results as `irvm run` prints them.
fn results_text(values: &[Value]) -> String {
    let mut out = String::new();
    for (i, v) in values.iter().enumerate() {
        match irvm_hal::BufferView::from_value(v) {
            Some(view) => {
                let text = irvm_hal::format_buffer_view(view, irvm_hal::DEFAULT_MAX_ELEMENTS)
                    .unwrap_or_else(|t| {
                        format!("{}; formatting result {i}: {}", t.code, t.message)
                    });
                out.push_str(&format!("result[{i}]: hal.buffer_view\n{text}\n"));
            }
            None => {
                let text = crate::result_format::format_value(v, irvm_hal::DEFAULT_MAX_ELEMENTS)
                    .unwrap_or_else(|e| e);
                out.push_str(&format!("result[{i}]: {text}\n"));
            }
        }
    }
    out
}
