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

mod code;
mod console_call;
mod disassembly;
mod goto;
mod overview;
mod restart;
mod sources;
mod watch;

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};

use clap::{Args, FromArgMatches};
use irvm::{Ref, Value};
use irvm_debugger::{
    expandable, ref_children, DebugValue, Debugger, Format, PauseHandle, Stop, WatchEvent,
};
use serde_json::{json, Map, Value as Json};

use self::code::{sets_breakpoints, CodeRequests, CODE_REQUESTS};
use self::disassembly::Bases;
use self::sources::Sources;
use crate::cmd_run::LimitArgs;
use crate::source_names::{in_terms_of, SourceNames};

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
        memory: Vec::new(),
        goto_targets: Vec::new(),
        trap_filter: false,
        ended: false,
        initialized: false,
        bases: Bases { line: 1, column: 1 },
        code: None,
        in_hand: false,
        history: Default::default(),
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
    /// The launched program's debug information and breakpoints: the
    /// reader thread answers [`CODE_REQUESTS`] from it while the program
    /// runs.
    code: Mutex<Option<Arc<Mutex<CodeRequests>>>>,
    /// Messages handed to the session and not yet served (a request that
    /// runs the program is served once it runs): while there are any, the
    /// reader thread answers nothing itself, so that every answer follows
    /// those of the requests sent before it.
    queued: AtomicUsize,
    /// Given up by the reader thread when the session is ending (a
    /// `disconnect` or `terminate` came, or the input ended): a `launch`
    /// reading its inputs stops waiting for them.
    give_up: crate::deadline::GiveUp,
    /// A function called from the debug console runs (the program is
    /// stopped; the session is busy in the call): the reader thread
    /// answers meanwhile (`console_call.rs`). Changed with `running`
    /// locked.
    calling: AtomicBool,
    /// `pause` and `restart` requests handed to the session and not yet
    /// served (one queued behind a debug-console call abandons it when it
    /// begins). Changed with `running` locked.
    enders_queued: AtomicUsize,
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

    /// The program stopped for a reason the session may report: marks it
    /// as not running (see [`Control::running`]) when `report` says so,
    /// deciding under the lock the reader thread answers with, so that no
    /// request it answered meanwhile is missed. Whether it was marked.
    fn stop_running_if(&self, report: impl FnOnce() -> bool) -> bool {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if !report() {
            return false;
        }
        *running = false;
        self.pause_asked.store(false, Ordering::Relaxed);
        true
    }

    /// Answers the requests that need no state of the program, from the
    /// reader thread, so that they are answered at once even while the
    /// session is inside a long host call (a dispatch): `threads` always;
    /// `pause` of a running program (its `stopped` event follows at the
    /// program's next instruction); and [`CODE_REQUESTS`] while it runs
    /// (new breakpoints are verified here and the program is interrupted
    /// to take them up at its next instruction). Whether it answered.
    fn answer(&self, seq: &AtomicU64, message: &Json) -> bool {
        if message.get("type").and_then(Json::as_str) != Some("request") {
            return false;
        }
        let request_seq = message.get("seq").and_then(Json::as_i64).unwrap_or(0);
        let command = message.get("command").and_then(Json::as_str).unwrap_or("");
        if let Some(answered) = self.answer_during_call(seq, request_seq, command) {
            return answered;
        }
        if self.queued.load(Ordering::SeqCst) > 0 {
            return false;
        }
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
            Some(command) if CODE_REQUESTS.contains(&command) => {
                return self.answer_code_request(seq, request_seq, command, message);
            }
            _ => return false,
        };
        let command = message.get("command").and_then(Json::as_str).unwrap_or("");
        write_message(seq, response(request_seq, command, Ok(body)));
        true
    }

    /// Answers one of [`CODE_REQUESTS`] while the program runs (else the
    /// session does). Whether it answered.
    fn answer_code_request(
        &self,
        seq: &AtomicU64,
        request_seq: i64,
        command: &str,
        message: &Json,
    ) -> bool {
        let args = message.get("arguments").cloned().unwrap_or(Json::Null);
        if !(args.is_null() || args.is_object()) {
            return false;
        }
        // Held while answering: the session reports no stop meanwhile, so
        // the response never follows `stopped` or `exited`.
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if !*running && !self.calling.load(Ordering::SeqCst) {
            return false;
        }
        let Some(code) = self.code.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return false;
        };
        let reply = code
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .answer(command, &args);
        write_message(seq, response(request_seq, command, reply));
        if sets_breakpoints(command) {
            // The program takes the new breakpoints up when it next goes
            // on from an interrupt: at its next instruction.
            self.interrupt();
        }
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
        control.queued.fetch_add(1, Ordering::SeqCst);
        if let Incoming::Message(m) = &message {
            control.handing_over(m);
        }
        if tx.send(message).is_err() {
            return;
        }
        control.interrupt();
        if ends_program {
            control.give_up.give_up(if end {
                "the client's input ended"
            } else {
                "the client ended the session"
            });
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
    stop_on_entry: bool,
    started: bool,
    /// `noDebug`: the program runs without stopping.
    no_debug: bool,
    /// The launch's arguments (the last `restart`'s), which a `restart`
    /// compares its own with.
    launch: Json,
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

/// A request's answer, or its failure: the message the client shows.
type Reply<T = Json> = Result<T, String>;

/// What serving a message leads to.
enum Next {
    /// Go on (serving, or running the program).
    Serve,
    /// The program was running and is now stopped by `pause` (answered).
    Paused,
    /// The program was running and ended (`terminate`).
    Ended,
    /// The program was running and was abandoned for a `restart`
    /// (answered): it starts again.
    Restart,
    /// The adapter exits with this status.
    Exit(ExitCode),
}

/// Message of requests that need a stopped program, while it runs (the
/// spec's `notStopped`).
const NOT_STOPPED: &str = "notStopped";

/// The requests that need the stopped program's state, answered with
/// [`NOT_STOPPED`] while it runs.
const NEEDS_STOPPED: &[&str] = &[
    "stackTrace",
    "scopes",
    "variables",
    "evaluate",
    "setVariable",
    "setExpression",
    "dataBreakpointInfo",
    "readMemory",
    "writeMemory",
    "exceptionInfo",
    "completions",
    "goto",
    "gotoTargets",
];

struct Server {
    rx: Receiver<Incoming>,
    /// The next message's sequence number (logpoints write too).
    seq: Arc<AtomicU64>,
    control: Arc<Control>,
    session: Option<Session>,
    vars: Vec<VarRef>,
    /// What each `memoryReference` (`m1`, `m2`, ...) reads: refs with
    /// bytes (buffers, tensors), valid until the next run.
    memory: Vec<Ref>,
    /// The places each `gotoTargets` answer's targets name (ids from 1),
    /// valid until the next run.
    goto_targets: Vec<irvm_debugger::CodeAddress>,
    trap_filter: bool,
    /// The program ended (exited and terminated were sent).
    ended: bool,
    /// `initialize` came.
    initialized: bool,
    /// The client's line and column bases (`linesStartAt1`,
    /// `columnsStartAt1`).
    bases: Bases,
    /// The launched program's debug information and breakpoints (shared
    /// with the reader thread through [`Control::code`]).
    code: Option<Arc<Mutex<CodeRequests>>>,
    /// A message handed over by the reader thread is being served (and
    /// counts in [`Control::queued`] until it is done with).
    in_hand: bool,
    /// gdb's value history, as `irvm dbg` keeps it: the debug console's
    /// call results (`$1 = 10`), read back by `$N`, `$`, `$$N` (kept
    /// across restarts, as gdb keeps it across runs).
    history: crate::value_history::ValueHistory,
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
/// The number is taken while stdout is held, so that numbers rise by one
/// in the order the messages go out, whichever thread writes.
fn write_message(seq: &AtomicU64, mut message: Map<String, Json>) {
    let mut out = std::io::stdout().lock();
    message.insert("seq".into(), json!(seq.fetch_add(1, Ordering::Relaxed)));
    let body = Json::Object(message).to_string();
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

    /// Serves one message the reader thread handed over; `running`: the
    /// program is running (stopped only by an interrupt).
    fn handle(&mut self, incoming: Incoming, running: bool) -> Next {
        self.in_hand = true;
        let next = self.serve_message(incoming, running);
        self.done_with_message();
        next
    }

    /// The message in hand is served (see [`Control::queued`]).
    fn done_with_message(&mut self) {
        if std::mem::take(&mut self.in_hand) {
            self.control.queued.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn serve_message(&mut self, incoming: Incoming, running: bool) -> Next {
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
        if matches!(command.as_str(), "pause" | "restart") {
            self.control.ender_served();
        }
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
            "restart" => match self.prepare_restart(&args) {
                Ok(()) => {
                    self.respond(seq, &command, Ok(Json::Null));
                    if running {
                        Next::Restart
                    } else {
                        self.run(&command, &args)
                    }
                }
                Err(e) => {
                    self.respond(seq, &command, Err(e));
                    Next::Serve
                }
            },
            "pause" if running => {
                self.respond(seq, &command, Ok(Json::Null));
                self.stop_running();
                Next::Paused
            }
            c if running && NEEDS_STOPPED.contains(&c) => {
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
            "goto" => {
                // The response, then the stop where the frame now stands.
                let reply = self.goto(&args);
                let moved = reply.is_ok();
                self.respond(seq, &command, reply);
                if moved {
                    self.event("stopped", stopped_body("goto"));
                }
                Next::Serve
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

    fn session(&mut self) -> Result<&mut Session, String> {
        self.session
            .as_mut()
            .ok_or_else(|| "no program: send `launch` first".to_string())
    }

    /// The launched program's debug information and breakpoints, locked.
    fn code(&self) -> Result<MutexGuard<'_, CodeRequests>, String> {
        let code = self
            .code
            .as_ref()
            .ok_or("no program: send `launch` first")?;
        Ok(code.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The requests that do not run the program.
    fn request(&mut self, command: &str, args: &Json) -> Reply {
        match command {
            "initialize" => self.initialize(args),
            "launch" => self.launch(args),
            "setExceptionBreakpoints" if self.no_debug() => code::no_breakpoints(args),
            "setExceptionBreakpoints" => self.set_exception_breakpoints(args),
            c if CODE_REQUESTS.contains(&c) => self.code()?.answer(c, args),
            "threads" => Ok(json!({"threads": [{"id": 1, "name": "main"}]})),
            "stackTrace" => self.stack_trace(args),
            "scopes" => self.scopes(args),
            "variables" => self.variables(args),
            "evaluate" => self.evaluate(args),
            "completions" => self.completions(args),
            "setVariable" => self.set_variable(args),
            "setExpression" => self.set_expression(args),
            "readMemory" => self.read_memory(args),
            "writeMemory" => self.write_memory(args),
            "exceptionInfo" => self.exception_info(args),
            "gotoTargets" => self.goto_targets(args),
            "dataBreakpointInfo" => self.data_breakpoint_info(args),
            "setDataBreakpoints" => self.set_data_breakpoints(args),
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
            "supportsGotoTargetsRequest": true,
            "supportsConditionalBreakpoints": true,
            "supportsHitConditionalBreakpoints": true,
            "supportsEvaluateForHovers": true,
            "supportsSteppingGranularity": true,
            "supportsInstructionBreakpoints": true,
            "supportsDisassembleRequest": true,
            "supportsTerminateRequest": true,
            "supportsLogPoints": true,
            "supportsSetVariable": true,
            "supportsSetExpression": true,
            "supportsRestartRequest": true,
            "supportsReadMemoryRequest": true,
            "supportsWriteMemoryRequest": true,
            "supportsExceptionInfoRequest": true,
            "supportsDataBreakpoints": true,
            "supportsCompletionsRequest": true,
            "supportsBreakpointLocationsRequest": true,
            "supportsLoadedSourcesRequest": true,
            "supportsModulesRequest": true,
            "exceptionBreakpointFilters": [
                {"filter": "trap", "label": "Traps", "description": "Stop where the program fails", "default": true}
            ]
        })
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
        // Inputs are read on a thread of their own: an input file may be a
        // FIFO nobody writes, and a client's `disconnect` or `terminate`
        // (or its going) gives up on the read, so that it is answered.
        let give_up = Some(&self.control.give_up);
        let mut dbg = crate::cmd_dbg::prepare(&modules, &function, &inputs, &limits, give_up)?;
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
        // `EXEC @function` goes out as the entry function begins, after
        // the initializers, where `irvm run` prints it.
        let (seq, exec) = (
            self.seq.clone(),
            function.trim_start_matches('@').to_string(),
        );
        dbg.set_entry_hook(Some(Box::new(move || {
            let mut m = Map::new();
            m.insert("type".into(), json!("event"));
            m.insert("event".into(), json!("output"));
            m.insert(
                "body".into(),
                json!({"category": "stdout", "output": format!("EXEC @{exec}\n")}),
            );
            write_message(&seq, m);
        })));
        *self.control.pause.lock().unwrap_or_else(|e| e.into_inner()) = Some(dbg.pause_handle());
        *self
            .control
            .cancel
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(dbg.cancel_handle());
        let code = Arc::new(Mutex::new(CodeRequests::new(
            dbg.debug_info().clone(),
            dbg.breakpoint_table(),
            Sources::new(crate::cmd_dbg::source_search_path(&source_dirs, &modules)),
            self.bases,
            no_debug,
            modules.clone(),
        )));
        *self.control.code.lock().unwrap_or_else(|e| e.into_inner()) = Some(code.clone());
        self.code = Some(code);
        self.session = Some(Session {
            dbg,
            stop_on_entry,
            started: false,
            no_debug,
            launch: args.clone(),
        });
        self.event("initialized", Json::Null);
        // Every module is loaded now: each announced as `modules` lists it.
        let modules = self.code()?.module_json();
        for module in modules {
            self.event("module", json!({"reason": "new", "module": module}));
        }
        Ok(Json::Null)
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
            // An initializer's outermost frame has no caller to step out to.
            "stepOut" => s.dbg.finish_refusal().map_err(|e| e.0),
            _ => s.dbg.require_running_program().map_err(|e| e.0),
        }
    }

    /// Runs the program for a request, serving the requests that come
    /// meanwhile, until it stops, ends or the client goes.
    fn run(&mut self, command: &str, args: &Json) -> Next {
        self.control.set_running(true);
        // Answered and running: the reader thread may answer what follows.
        self.done_with_message();
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
        self.memory.clear();
        self.goto_targets.clear();
        let instruction = args.get("granularity").and_then(Json::as_str) == Some("instruction");
        let Some(s) = self.session.as_mut() else {
            return Next::Serve;
        };
        if command == "configurationDone" {
            s.started = true;
        }
        let mut stop = match command {
            "configurationDone" | "restart" => s.dbg.start(s.stop_on_entry),
            "continue" => s.dbg.continue_(),
            "next" if instruction => s.dbg.next_instruction(),
            "stepIn" if instruction => s.dbg.step_instruction(),
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
                    self.paused_event();
                    return Next::Serve;
                }
                Ok(Stop::Interrupted) => match self.serve_while_running() {
                    Next::Serve => {}
                    Next::Paused => {
                        self.paused_event();
                        return Next::Serve;
                    }
                    Next::Ended => return Next::Serve,
                    Next::Exit(code) => return Next::Exit(code),
                    Next::Restart => {
                        // As at the start of `run_until_stopped` (the
                        // entry hook prints `EXEC` again).
                        self.vars.clear();
                        self.memory.clear();
                        self.goto_targets.clear();
                        let Some(s) = self.session.as_mut() else {
                            return Next::Serve;
                        };
                        stop = s.dbg.start(s.stop_on_entry);
                        continue;
                    }
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
                // A breakpoint the client removed (the reader thread
                // answered its removal) after the program reached it: the
                // program goes on.
                Ok(Stop::Breakpoint(hit)) if !self.stop_at_breakpoint(hit.id) => {
                    let Some(s) = self.session.as_mut() else {
                        return Next::Serve;
                    };
                    stop = s.dbg.resume();
                    continue;
                }
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

    /// Whether the program, stopped at breakpoint `id`, reports the stop:
    /// the breakpoint is still set. Then it is marked as not running, in
    /// one step with the check (see [`Control::stop_running_if`]).
    fn stop_at_breakpoint(&mut self, id: u32) -> bool {
        let code = self
            .control
            .code
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(code) = code else {
            return true;
        };
        self.control.stop_running_if(|| {
            code.lock()
                .unwrap_or_else(|e| e.into_inner())
                .has_breakpoint(id)
        })
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

    /// `stopped` for a pause; inside a host call that yields, the
    /// description says so (the top frame stands at the call, which has
    /// begun).
    fn paused_event(&mut self) {
        let mut body = stopped_body("pause");
        if self
            .session
            .as_ref()
            .is_some_and(|s| s.dbg.in_yielding_call())
        {
            body["description"] = json!("Paused inside a host call that yields");
        }
        self.event("stopped", body);
    }

    /// Reports a stop (not an interrupt) to the client.
    fn report(&mut self, stop: Stop) {
        match stop {
            Stop::Entry => self.event("stopped", stopped_body("entry")),
            Stop::Step | Stop::Returned(_) => self.event("stopped", stopped_body("step")),
            Stop::Paused | Stop::Interrupted => self.paused_event(),
            Stop::Breakpoint(hit) => {
                let (function, instruction) = match self.code() {
                    Ok(c) => (
                        c.is_function_breakpoint(hit.id),
                        c.is_instruction_breakpoint(hit.id),
                    ),
                    Err(_) => (false, false),
                };
                let reason = if function {
                    "function breakpoint"
                } else if instruction {
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
            Stop::Watchpoints { events, breakpoint } => {
                // One stop for every watchpoint that made it: those whose
                // frame returned are removed first.
                let mut ids = Vec::new();
                let mut changes = Vec::new();
                let mut texts = Vec::new();
                for event in &events {
                    match event {
                        WatchEvent::Changed(hit) => {
                            let old = value_text(self, &hit.old);
                            let new = value_text(self, &hit.new);
                            ids.push(hit.id);
                            changes.push(format!("{} changed", hit.register));
                            texts.push(format!("{}: {old} -> {new}", hit.register));
                        }
                        WatchEvent::Read(read) => {
                            let value = value_text(self, &read.value);
                            ids.push(read.id);
                            changes.push(format!("{} read", read.register));
                            texts.push(format!("{}: read {value}", read.register));
                        }
                        WatchEvent::LeftScope(id) => {
                            self.event(
                                "breakpoint",
                                json!({"reason": "removed", "breakpoint": {"id": id, "verified": false}}),
                            );
                            ids.push(*id);
                            texts.push(format!(
                                "data breakpoint {id} deleted: the frame of its register returned"
                            ));
                        }
                    }
                }
                // A breakpoint at the same instruction stopped it too.
                ids.extend(breakpoint.map(|hit| hit.id));
                let mut body = stopped_body("data breakpoint");
                body["hitBreakpointIds"] = json!(ids);
                body["description"] = json!(if changes.is_empty() {
                    "Watched frame returned".to_string()
                } else {
                    changes.join(", ")
                });
                body["text"] = json!(texts.join("; "));
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
                // As `irvm run` reports a failed initializer.
                let module = self
                    .session
                    .as_ref()
                    .and_then(|s| s.dbg.initializer_module().map(str::to_string));
                let text = match module {
                    Some(module) => {
                        format!("irvm run: module '{module}' failed to initialize: {trap}")
                    }
                    None => crate::cmd_run::describe_trap("run", &trap),
                };
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
        let Some(code) = self.code.as_ref() else {
            return Err("no program: send `launch` first".into());
        };
        let mut code = code.lock().unwrap_or_else(|e| e.into_inner());
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
                frame["source"] = code.sources.source_json(&p.file);
            } else if !s.dbg.has_positions(address.module_index, address.function) {
                // No debug information: the function's disassembly.
                if let Ok(listing) = sources::listing(s.dbg.debug_info(), &address) {
                    if let Some(&line) = listing.lines.get(&address.offset) {
                        frame["line"] = json!(line - 1 + line_base);
                        frame["column"] = json!(column_base);
                        frame["source"] = code.sources.generated_json(s.dbg.debug_info(), &address);
                    }
                }
            }
            out.push(frame);
        }
        Ok(json!({"stackFrames": out, "totalFrames": total}))
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
        let mut var = json!({"name": name, "value": text, "type": v.type_name(), "variablesReference": reference});
        if let DebugValue::Ref(r) = v {
            if s.is_some_and(|s| s.dbg.read_memory(r, 0, 0).is_ok()) {
                self.memory.push(r.clone());
                var["memoryReference"] = json!(format!("m{}", self.memory.len()));
            }
        }
        var
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
        let context = args.get("context").and_then(Json::as_str);
        let hover = context == Some("hover");
        // gdb's value history (`$1`, `$`, `$$2`), in any context, with
        // or without a program.
        if let Some(found) = self.history.lookup(&expr) {
            let v = found?;
            let var = self.variable(expr, &v);
            return Ok(json!({
                "result": var["value"],
                "type": var["type"],
                "variablesReference": var["variablesReference"],
            }));
        }
        let names = self.names_of(frame)?;
        // The debug console calls functions (`twice(%i0)`), as gdb's
        // `print f(x)`; hovers and watches never run code.
        if let (Some("repl"), Some((function, texts))) = (context, irvm_debugger::parse_call(&expr))
        {
            let given = texts
                .iter()
                .map(|t| names.substitute(t, false))
                .collect::<Result<Vec<String>, String>>()?;
            self.session()?;
            // The reader thread answers what comes while the call runs
            // (`console_call.rs`): a `pause` abandons it.
            let control = self.control.clone();
            control.begin_call();
            self.done_with_message();
            let called = self.call_in_frame(function, &given, frame);
            control.end_call();
            let values = called?;
            let shown: Vec<DebugValue> = values.iter().map(DebugValue::from_value).collect();
            // Each result joins the value history, shown as gdb's console
            // shows it (`$1 = 10`).
            let numbered: Vec<String> = shown
                .iter()
                .map(|v| {
                    let text = value_text(self, v);
                    format!("${} = {text}", self.history.record(v.clone()))
                })
                .collect();
            return Ok(match &shown[..] {
                [one] => {
                    let var = self.variable(expr, one);
                    json!({
                        "result": numbered.join(", "),
                        "type": var["type"],
                        "variablesReference": var["variablesReference"],
                    })
                }
                _ => json!({"result": numbered.join(", "), "variablesReference": 0}),
            });
        }
        // Editors leave the `%` out of the word under the mouse.
        let hovered = hover.then(|| names.hovered(expr.trim())).flatten();
        let vm_expr = names.substitute(hovered.as_deref().unwrap_or(&expr), hover)?;
        // (`$N` inside an expression, `$1 + 1`, reads the history too.)
        let history = &self.history;
        let session = self
            .session
            .as_ref()
            .ok_or("no program: send `launch` first")?;
        let v = session
            .dbg
            .evaluate_with(&vm_expr, frame, &|word| history.lookup(word))
            .map_err(|e| {
                let message = in_terms_of(e.0, &vm_expr, &expr);
                // An error about source names names what was typed (not
                // the registers they stand for) even where it quotes no
                // expression.
                if vm_expr == expr || message.contains(&format!("`{expr}`")) {
                    message
                } else {
                    format!("`{expr}`: {message}")
                }
            })?;
        let var = self.variable(expr, &v);
        Ok(json!({
            "result": var["value"],
            "type": var["type"],
            "variablesReference": var["variablesReference"],
        }))
    }

    /// `function(given)`, its arguments evaluated in frame `frame`.
    fn call_in_frame(
        &mut self,
        function: &str,
        given: &[String],
        frame: usize,
    ) -> Reply<Vec<Value>> {
        let dbg = &mut self.session()?.dbg;
        // (Arguments in the request's frame; `stepOut` keeps finishing
        // the frame it finished.)
        let selected = dbg.selected_frame();
        dbg.select_frame(frame).map_err(|e| e.0)?;
        let called = dbg.call_function(function, given);
        let _ = dbg.select_frame(selected);
        called.map_err(|e| e.0)
    }

    /// `completions` (the debug console's): the source names and registers
    /// of the frame that start with the word before the cursor (`ne` or
    /// `%ne` gives `%next`), replacing that word. The cursor is at `column`
    /// of line `line` of the text (the first line when `line` is absent, as
    /// the spec says; VS Code sends both for a console input of several
    /// lines), and `start` counts in that line.
    fn completions(&mut self, args: &Json) -> Reply {
        let whole = str_arg(args, "text")?.ok_or("`text` is required")?;
        let column = int_arg(args, "column")?.ok_or("`column` is required")?;
        let text = match int_arg(args, "line")? {
            None => whole.split('\n').next().unwrap_or(""),
            Some(line) => line
                .checked_sub(self.bases.line)
                .and_then(|l| usize::try_from(l).ok())
                .and_then(|l| whole.split('\n').nth(l))
                .ok_or_else(|| format!("`line` {line} is outside the text"))?,
        };
        let base = self.bases.column;
        let units: Vec<u16> = text.encode_utf16().collect();
        let cursor = column
            .checked_sub(base)
            .and_then(|c| usize::try_from(c).ok())
            .filter(|c| *c <= units.len())
            .ok_or_else(|| format!("`column` {column} is outside the text"))?;
        let head = String::from_utf16_lossy(&units[..cursor]);
        let in_word =
            |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-' | ':' | '%');
        let start = head
            .char_indices()
            .rev()
            .find(|(_, c)| !in_word(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &head[start..];
        let frame = if args.get("frameId").is_some() {
            self.frame_arg(args)?
        } else {
            0
        };
        let mut candidates: Vec<(String, &str)> = Vec::new();
        let running = self
            .session
            .as_ref()
            .is_some_and(|s| !s.dbg.frames().is_empty());
        if running {
            let names = self.names_of(frame)?;
            candidates.extend(names.by_name.keys().map(|n| (n.clone(), "variable")));
            if let Some(s) = self.session.as_ref() {
                if let Ok(registers) = s.dbg.registers(frame) {
                    candidates.extend(registers.iter().map(|(r, _)| (r.to_string(), "property")));
                }
            }
        }
        let bare = !word.starts_with('%');
        let start_units = head[..start].encode_utf16().count() as i64;
        let length = word.encode_utf16().count() as i64;
        let targets: Vec<Json> = candidates
            .into_iter()
            .filter(|(c, _)| {
                c.starts_with(word)
                    || (bare && c.strip_prefix('%').is_some_and(|r| r.starts_with(word)))
            })
            .map(|(label, kind)| {
                json!({"label": label, "text": label, "type": kind,
                       "start": start_units + base, "length": length})
            })
            .collect();
        Ok(json!({ "targets": targets }))
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
        Ok(Rc::new(self.code()?.names_at(&a, position.as_ref())))
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

/// A value as the session's debugger prints it.
fn value_text(server: &Server, v: &DebugValue) -> String {
    server
        .session
        .as_ref()
        .map(|s| s.dbg.format_value(v, Format::Natural))
        .unwrap_or_default()
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
