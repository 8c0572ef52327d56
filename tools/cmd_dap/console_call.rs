//! A function called from the debug console (`evaluate` of `f(x)` in the
//! `repl` context) runs while the program is stopped, and the session is
//! busy in it until it returns. Meanwhile the reader thread answers as it
//! does while the program runs: `threads` and the code requests
//! ([`CODE_REQUESTS`]) from the debug information; the requests that need
//! the session ([`NEEDS_STOPPED`]: frames, variables, memory) fail with
//! `notStopped`, and those that would run the program with an error.
//! `pause` abandons the call (answered at once; the `evaluate` fails,
//! saying the call was abandoned; the program stays where it stopped), and
//! so does `restart` (served by the session once the call is gone);
//! `terminate` and `disconnect` end the call through the VM's interrupt.
//! Any other request waits for the call to end, and what comes after it
//! too (answers keep the requests' order).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value as Json;

use super::{response, write_message, Control, CODE_REQUESTS, NEEDS_STOPPED, NOT_STOPPED};

/// The requests that run the program.
const RUN_REQUESTS: &[&str] = &[
    "configurationDone",
    "continue",
    "next",
    "stepIn",
    "stepOut",
    "launch",
];

/// Their answer while a debug-console call runs.
const CALL_RUNS: &str = "a function called from the debug console is running (`pause` abandons it)";

impl Control {
    /// Marks a debug-console call as begun; a `pause` or `restart`
    /// already handed to the session (it came after the `evaluate`)
    /// abandons it.
    pub(super) fn begin_call(&self) {
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        self.calling.store(true, Ordering::SeqCst);
        if self.enders_queued.load(Ordering::SeqCst) > 0 {
            self.abandon_call();
        }
    }

    /// Marks the debug-console call as ended (before its `evaluate` is
    /// answered): the reader thread answers as while the program is
    /// stopped again.
    pub(super) fn end_call(&self) {
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        self.calling.store(false, Ordering::SeqCst);
    }

    /// `message` is handed to the session: a `pause` or `restart` is
    /// counted, and abandons a debug-console call that runs.
    pub(super) fn handing_over(&self, message: &Json) {
        let request = message.get("type").and_then(Json::as_str) == Some("request");
        let command = message.get("command").and_then(Json::as_str);
        if !(request && matches!(command, Some("pause" | "restart"))) {
            return;
        }
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        self.enders_queued.fetch_add(1, Ordering::SeqCst);
        if self.calling.load(Ordering::SeqCst) {
            self.abandon_call();
        }
    }

    /// The session serves a `pause` or `restart` handed to it.
    pub(super) fn ender_served(&self) {
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let left = self.enders_queued.load(Ordering::SeqCst).saturating_sub(1);
        self.enders_queued.store(left, Ordering::SeqCst);
    }

    fn abandon_call(&self) {
        if let Some(p) = self
            .pause
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            p.abandon_call();
        }
    }

    /// Answers `command` if a debug-console call runs (see the module):
    /// `Some(true)` answered, `Some(false)` to hand to the session, `None`
    /// when no call runs or the request is answered as while the program
    /// runs (`threads`, the code requests).
    pub(super) fn answer_during_call(
        &self,
        seq: &AtomicU64,
        request_seq: i64,
        command: &str,
    ) -> Option<bool> {
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if !self.calling.load(Ordering::SeqCst) {
            return None;
        }
        let queued = self.queued.load(Ordering::SeqCst) > 0;
        let answer = |reply: Result<Json, String>| {
            write_message(seq, response(request_seq, command, reply));
            Some(true)
        };
        match command {
            // (Handed over, each abandons the call: `handing_over`.)
            "pause" if !queued => {
                self.abandon_call();
                answer(Ok(Json::Null))
            }
            _ if queued => Some(false),
            c if NEEDS_STOPPED.contains(&c) => answer(Err(NOT_STOPPED.into())),
            c if RUN_REQUESTS.contains(&c) => answer(Err(CALL_RUNS.into())),
            c if c == "threads" || CODE_REQUESTS.contains(&c) => None,
            _ => Some(false),
        }
    }
}
