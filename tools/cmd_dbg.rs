//! `irvm dbg`: an interactive source-level debugger with gdb's command
//! words, over [`irvm_debugger::Debugger`]. In a terminal it edits lines,
//! keeps history and completes commands, files and functions (rustyline);
//! otherwise, or with `--batch FILE`, it reads one command per line,
//! echoing each after the `(irvm) ` prompt, so sessions can be scripted and
//! tested.

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use crate::source_names::{in_terms_of, FunctionNames, SourceNames};
use irvm::Value;
use irvm_debugger::{
    BreakpointHit, BreakpointRequest, CodeAddress, DebugCommandError, Debugger, Format,
    PauseHandle, RefBytes, RefFormatter, RefMemory, Stop, WatchEvent, WatchKind,
};

use crate::cmd_run::{describe_trap, load_context_deferring_inits, parse_inputs_within, LimitArgs};

mod scripts;

pub use self::scripts::gdb_spellings;
use self::scripts::{LineSource, Prompted, Script, UserCommand};

/// Arguments of `irvm dbg`.
#[derive(clap::Args)]
pub struct DbgArgs {
    /// A module to load (as for `irvm run`); repeat to load several.
    #[arg(long = "module", required = true)]
    modules: Vec<String>,
    /// The exported function to debug.
    #[arg(long)]
    function: String,
    /// An argument value; repeat once per argument.
    #[arg(long = "input", allow_hyphen_values = true)]
    inputs: Vec<String>,
    /// Where to look for source files named in debug information (besides
    /// the module's directory and the current directory).
    #[arg(long = "source-dir")]
    source_dirs: Vec<PathBuf>,
    /// Read commands from FILE instead of the terminal; without FILE (gdb's
    /// `-batch`), leave after the `-ex` and `-x` commands.
    #[arg(long, num_args = 0..=1)]
    batch: Option<Option<PathBuf>>,
    /// A command run after loading, before the prompt or the batch file
    /// (gdb's `-ex`); repeatable, run in order with `-x`.
    #[arg(
        long = "eval-command",
        visible_alias = "ex",
        allow_hyphen_values = true
    )]
    eval_commands: Vec<String>,
    /// A file of commands run after loading as `source FILE` runs it (gdb's
    /// `-x`); repeatable, run in order with `-ex`.
    #[arg(short = 'x', long = "command")]
    command_files: Vec<PathBuf>,
    /// The `-ex` and `-x` commands in their command line order
    /// ([`DbgArgs::order_startup`]).
    #[arg(skip)]
    startup: Vec<String>,
    /// Let Ctrl-C (SIGINT) pause the running program even without
    /// breakpoints (the default in a terminal; it keeps the interpreter's
    /// checked loop, so a program without breakpoints runs slower).
    #[arg(long)]
    interruptible: bool,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    parameters: crate::parameters::ParameterArgs,
}

/// Prints gdb's warnings about an expression's evaluation, each on its
/// line before the value (`warning: left shift count >= width of type`).
fn show_warnings(warnings: &[String]) {
    for w in warnings {
        outln!("warning: {w}");
    }
}

/// Runs `irvm dbg`.
pub fn main(args: DbgArgs) -> ExitCode {
    crate::parameters::set(&args.parameters);
    // Dispatches show in the transcript, as the host-level events they are.
    crate::tensor_io::print_dispatches(crate::tensor_io::DispatchLines::Stdout);
    match session(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("irvm dbg: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Loads the modules, finds the function and parses its inputs (given up
/// on at the deadline, or when `give_up` is): a debugger ready to run
/// (shared with `irvm dap`). The modules' `__init`s run under the
/// debugger, first thing when the program runs: a long one can be paused
/// (Ctrl-C, DAP's `pause`) and ended like any function.
pub fn prepare(
    modules: &[String],
    function: &str,
    inputs: &[String],
    limits: &LimitArgs,
    give_up: Option<&crate::deadline::GiveUp>,
) -> Result<Debugger, String> {
    let (ctx, inits) = load_context_deferring_inits(modules, limits)?;
    let main_module = ctx
        .module_names()
        .last()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let name = crate::flags::function_name(function);
    let func = ctx
        .function(&format!("{main_module}.{name}"))
        .map_err(|e| e.to_string())?;
    let values = entry_values(&ctx, &main_module, name, &func, inputs, give_up)?;
    let mut dbg = Debugger::new(ctx, func, values);
    dbg.set_initializers(inits);
    dbg.set_ref_formatter(Some(hal_formatter()));
    dbg.set_ref_bytes(Some(hal_bytes()));
    dbg.set_ref_contents(Some(hal_contents()));
    Ok(dbg)
}

/// The entry function's arguments from `inputs` (as `--input` values) for
/// a debugger [`prepare`] made (DAP's `restart` with new `inputs`).
pub fn entry_inputs(dbg: &Debugger, inputs: &[String]) -> Result<Vec<Value>, String> {
    let ctx = dbg.context();
    let main_module = ctx
        .module_names()
        .last()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let func = dbg.entry();
    // (`Func::name` is `module.function`.)
    let qualified = func.name();
    let name = qualified
        .strip_prefix(main_module.as_str())
        .and_then(|n| n.strip_prefix('.'))
        .unwrap_or(qualified);
    entry_values(ctx, &main_module, name, func, inputs, None)
}

/// `inputs` parsed as function `name`'s arguments (of `main_module`), with
/// the fences of an async-external function, as `irvm run` passes them.
fn entry_values(
    ctx: &irvm::Context,
    main_module: &str,
    name: &str,
    func: &irvm::Func,
    inputs: &[String],
    give_up: Option<&crate::deadline::GiveUp>,
) -> Result<Vec<Value>, String> {
    let mut kinds = crate::cmd_run::input_kinds(func);
    // An async-external function's last two parameters are its fences:
    // it gets a null wait fence and a fresh signal fence, as `irvm run`
    // passes them.
    let fenced = crate::cmd_run::uses_coarse_fences(ctx, main_module, name);
    if fenced {
        kinds.truncate(kinds.len().saturating_sub(2));
    }
    if inputs.len() != kinds.len() {
        return Err(format!(
            "INVALID_ARGUMENT; `{name}` expects {} arguments but {} --input were given",
            kinds.len(),
            inputs.len()
        ));
    }
    let mut values = parse_inputs_within(ctx.resources().deadline(), give_up, inputs, &kinds)?;
    if fenced {
        values.push(Value::Ref(irvm::Ref::Null));
        values.push(Value::Ref(irvm_hal::Fence::new(false).into_ref()));
    }
    Ok(values)
}

/// Most elements of a buffer view a one-line rendering shows.
const VIEW_PREVIEW_ELEMENTS: usize = 16;

/// Renders `!hal.buffer_view` objects: shape, element type and the first
/// elements (`!hal.buffer_view 4xf32=1 2 3 4`).
pub fn hal_formatter() -> RefFormatter {
    Arc::new(|r: &irvm::Ref| {
        let value = Value::Ref(r.clone());
        let view = irvm_hal::BufferView::from_value(&value)?;
        let text = irvm_hal::format_buffer_view(view, VIEW_PREVIEW_ELEMENTS)
            .unwrap_or_else(|t| format!("<{}: {}>", t.code, t.message));
        Some(format!("!hal.buffer_view {text}"))
    })
}

/// Reads the bytes of `!hal.buffer_view`s and `!hal.buffer`s (`x`, DAP's
/// `readMemory`): the buffer's own range of its storage.
pub fn hal_bytes() -> RefBytes {
    Arc::new(|r: &irvm::Ref, offset: u64, count: usize| {
        let value = Value::Ref(r.clone());
        let buffer = match irvm_hal::BufferView::from_value(&value) {
            Some(view) => &*view.buffer,
            None => r.downcast::<irvm_hal::HalBuffer>()?,
        };
        let start = offset.min(buffer.length);
        let len = (count as u64).min(buffer.length - start);
        let bytes = match buffer.vm_view(start, len as i64).ok()? {
            irvm::Ref::Buffer(b) => b.with_bytes(|b| b.to_vec()),
            _ => return None,
        };
        Some(RefMemory {
            length: buffer.length,
            bytes,
        })
    })
}

/// The contents of `!hal.buffer_view`s and `!hal.buffer`s as a
/// `!vm.buffer` view (DAP's `writeMemory`): the buffer's own range of its
/// storage, as [`hal_bytes`] reads it (read-only where the storage is).
pub fn hal_contents() -> irvm_debugger::RefContents {
    Arc::new(|r: &irvm::Ref| {
        let value = Value::Ref(r.clone());
        let buffer = match irvm_hal::BufferView::from_value(&value) {
            Some(view) => &*view.buffer,
            None => r.downcast::<irvm_hal::HalBuffer>()?,
        };
        buffer.vm_view(0, -1).ok()
    })
}

/// The source directories a session searches: `--source-dir`s, each
/// module's directory, the current directory.
pub fn source_search_path(source_dirs: &[PathBuf], modules: &[String]) -> Vec<PathBuf> {
    let mut dirs = source_dirs.to_vec();
    for m in modules {
        if let Some(dir) = Path::new(m).parent() {
            dirs.push(dir.to_path_buf());
        }
    }
    dirs.push(PathBuf::from("."));
    dirs
}

/// The commands, for `help` and completion.
const COMMANDS: &[&str] = &[
    "advance",
    "awatch",
    "backtrace",
    "break",
    "call",
    "commands",
    "complete",
    "condition",
    "continue",
    "define",
    "delete",
    "disable",
    "disassemble",
    "display",
    "document",
    "down",
    "echo",
    "enable",
    "finish",
    "frame",
    "help",
    "kill",
    "ignore",
    "info",
    "jump",
    "list",
    "next",
    "nexti",
    "output",
    "print",
    "printf",
    "ptype",
    "quit",
    "return",
    "run",
    "rwatch",
    "set",
    "source",
    "start",
    "step",
    "stepi",
    "tbreak",
    "undisplay",
    "until",
    "up",
    "watch",
    "whatis",
    "where",
    "x",
];

/// The short names the commands also answer to (gdb's aliases).
const ALIASES: &[&str] = &[
    "b", "br", "bt", "c", "cont", "d", "disas", "exit", "f", "fin", "h", "i", "j", "k", "l", "n",
    "ni", "p", "q", "r", "s", "si", "tb", "u", "command",
];

/// Whether `name` is a command, an alias or the start of exactly one
/// command (gdb takes unique prefixes).
fn is_command(name: &str) -> bool {
    ALIASES.contains(&name)
        || COMMANDS.contains(&name)
        || COMMANDS.iter().filter(|c| c.starts_with(name)).count() == 1
}

/// Commands whose argument is a location (completed with files and
/// functions).
const LOCATION_COMMANDS: &[&str] = &[
    "break", "b", "br", "tbreak", "list", "l", "advance", "until", "u", "jump", "j",
];

/// The completions of the word before `pos` in `line`: where it starts and
/// the candidates.
pub fn complete(
    line: &str,
    pos: usize,
    files: &[String],
    functions: &[String],
) -> (usize, Vec<String>) {
    let pos = pos.min(line.len());
    let head = line.get(..pos).unwrap_or(line);
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let word = &head[start..];
    let first = head[..start].split_whitespace().next();
    let mut out: Vec<String> = match first {
        None => COMMANDS
            .iter()
            .filter(|c| c.starts_with(word))
            .map(|c| c.to_string())
            .collect(),
        Some("info" | "i") => [
            "args",
            "breakpoints",
            "display",
            "frame",
            "line",
            "locals",
            "registers",
            "source",
            "watchpoints",
        ]
        .iter()
        .filter(|c| c.starts_with(word))
        .map(|c| c.to_string())
        .collect(),
        Some(cmd) if LOCATION_COMMANDS.contains(&cmd) => {
            let mut v: Vec<String> = functions
                .iter()
                .filter(|f| f.starts_with(word))
                .cloned()
                .collect();
            for f in files {
                let base = Path::new(f)
                    .file_name()
                    .and_then(|b| b.to_str())
                    .unwrap_or(f);
                for name in [f.as_str(), base] {
                    if name.starts_with(word) {
                        v.push(format!("{name}:"));
                    }
                }
            }
            v
        }
        Some(_) => Vec::new(),
    };
    out.sort();
    out.dedup();
    (start, out)
}

/// Line completion in a terminal.
struct Completion {
    files: Vec<String>,
    functions: Vec<String>,
}

impl rustyline::completion::Completer for Completion {
    type Candidate = String;
    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(complete(line, pos, &self.files, &self.functions))
    }
}
impl rustyline::hint::Hinter for Completion {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Completion {}
impl rustyline::validate::Validator for Completion {}
impl rustyline::Helper for Completion {}

type LineEditor = rustyline::Editor<Completion, rustyline::history::DefaultHistory>;

/// Where commands come from.
enum Input {
    Editor(Box<LineEditor>),
    Lines(Box<dyn BufRead>),
}

impl Input {
    /// The next command line, `None` at the end. `pause` is told when it
    /// is read ([`PauseHandle::command_read`]): a Ctrl-C from then on
    /// pauses the run the command starts, one before it is stale.
    fn next(&mut self, pause: &PauseHandle) -> Option<String> {
        match self {
            Input::Editor(ed) => loop {
                match ed.readline("(irvm) ") {
                    Ok(line) => {
                        pause.command_read();
                        let _ = ed.add_history_entry(line.as_str());
                        return Some(line);
                    }
                    // Ctrl-C at the prompt clears the line, as in gdb.
                    Err(rustyline::error::ReadlineError::Interrupted) => continue,
                    Err(_) => return None,
                }
            },
            Input::Lines(r) => {
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => {
                        pause.command_read();
                        let line = line.trim_end_matches(['\n', '\r']).to_string();
                        outln!("(irvm) {line}");
                        Some(line)
                    }
                }
            }
        }
    }
}

/// The handle SIGINT pauses through (set once, read by the handler).
static SIGINT_PAUSE: OnceLock<PauseHandle> = OnceLock::new();

extern "C" fn on_sigint(_: libc::c_int) {
    if let Some(h) = SIGINT_PAUSE.get() {
        h.pause();
    }
}

/// Makes SIGINT (Ctrl-C) pause the program instead of ending the process.
fn install_sigint(handle: PauseHandle) {
    if SIGINT_PAUSE.set(handle).is_err() {
        return;
    }
    // SAFETY: the handler only loads a OnceLock (an atomic read) and
    // stores to an atomic flag, both async-signal-safe.
    unsafe { crate::sigint_handler::install(on_sigint) };
}

/// The session's state besides the debugger.
struct Session {
    dbg: Debugger,
    source_dirs: Vec<PathBuf>,
    /// Where `source` and `-x` look for a command file not found as named:
    /// the `--source-dir` directories (gdb's source path, `directory`).
    script_dirs: Vec<PathBuf>,
    sources: HashMap<String, Option<Vec<String>>>,
    function: String,
    /// Where `list` goes on: file and next line to show.
    list_next: Option<(String, i32)>,
    /// The first line the last `list` showed (gdb's `last_line_listed`,
    /// which a bare `info line` describes); forgotten at a stop or frame
    /// change, as `list_next` is.
    last_listed: Option<(String, i32)>,
    /// gdb's value history (`$1`, `$2`, ...).
    history: crate::value_history::ValueHistory,
    /// Each function's source names (`%next`), read once.
    names: HashMap<(usize, u32), std::sync::Arc<FunctionNames>>,
    /// What the user typed for each watchpoint (a source name), by number.
    watch_labels: HashMap<u32, String>,
    /// What the user typed for each display with source names in it, by
    /// number: evaluated with the names where the program stops.
    display_texts: HashMap<u32, String>,
    /// Displays turned off by `disable display` (kept, not shown).
    disabled_displays: std::collections::BTreeSet<u32>,
    /// Each breakpoint's command list (`commands N` ... `end`), run when
    /// it stops the program.
    breakpoint_commands: HashMap<u32, Vec<String>>,
    /// The command list of the last stop, still to run.
    pending_commands: Option<Vec<String>>,
    /// Command lists are being run: a stop that a command inside one
    /// (a user command's `continue`) reports leaves its list pending for
    /// the loop running them, instead of running it inside, one level
    /// deeper at each stop.
    running_breakpoint_commands: bool,
    /// A stop was reported since this was cleared (a command of a list
    /// ran the program: the rest of the list is dropped, as in gdb).
    reported: bool,
    /// The number of the last breakpoint set (`commands` without one).
    last_breakpoint: Option<u32>,
    /// The breakpoint the last stop was at (`continue N` ignores it N - 1
    /// more times).
    stopped_at_breakpoint: Option<u32>,
    /// Whether a person types the commands at a terminal: questions are
    /// asked (`return`), and a failed command does not make the exit code 1.
    interactive: bool,
    /// A command failed in a scripted session (exit code 1).
    failed: bool,
    /// The commands `define` made, by name.
    user_commands: HashMap<String, UserCommand>,
    /// How many user commands and command files run inside each other
    /// now (at most [`MAX_NESTING`]).
    nesting: usize,
    /// `source -v` is running: each command of a file (and of the user
    /// commands it runs) is shown before it runs.
    source_verbose: bool,
    /// How many `+` mark a command shown by `source -v`: 1 in a file, one
    /// more per user command inside.
    trace_depth: usize,
}

/// Runs the command loop; `Ok(false)` when a command failed in batch mode.
fn session(args: &DbgArgs) -> Result<bool, String> {
    if args.batch.is_none() && args.modules.iter().any(|m| m == "-") {
        return Err(
            "INVALID_ARGUMENT; --module=- reads the module from stdin, where the \
                    debugger reads its commands: give the commands with --batch FILE, or \
                    the module as a file"
                .into(),
        );
    }
    let mut dbg = prepare(
        &args.modules,
        &args.function,
        &args.inputs,
        &args.limits,
        None,
    )?;
    let interactive = args.batch.is_none() && std::io::stdin().is_terminal();
    if interactive || args.interruptible {
        dbg.set_interruptible(true);
        install_sigint(dbg.pause_handle());
    }
    let mut s = Session {
        source_dirs: source_search_path(&args.source_dirs, &args.modules),
        script_dirs: args.source_dirs.clone(),
        sources: HashMap::new(),
        function: crate::flags::function_name(&args.function).to_string(),
        list_next: None,
        last_listed: None,
        history: crate::value_history::ValueHistory::default(),
        names: HashMap::new(),
        watch_labels: HashMap::new(),
        display_texts: HashMap::new(),
        disabled_displays: Default::default(),
        breakpoint_commands: HashMap::new(),
        pending_commands: None,
        running_breakpoint_commands: false,
        reported: false,
        last_breakpoint: None,
        stopped_at_breakpoint: None,
        interactive: false,
        failed: false,
        user_commands: HashMap::new(),
        nesting: 0,
        source_verbose: false,
        trace_depth: 0,
        dbg,
    };
    let mut input = match &args.batch {
        Some(Some(path)) => {
            let f = std::fs::File::open(path)
                .map_err(|e| format!("cannot read --batch file {}: {e}", path.display()))?;
            Some(Input::Lines(Box::new(std::io::BufReader::new(f))))
        }
        // gdb's `-batch`: the `-ex` and `-x` commands only.
        Some(None) => None,
        None if interactive => match LineEditor::new() {
            Ok(mut ed) => {
                ed.set_helper(Some(Completion {
                    files: s.dbg.source_files().into_iter().collect(),
                    functions: s.dbg.function_names().into_iter().collect(),
                }));
                Some(Input::Editor(Box::new(ed)))
            }
            Err(_) => Some(Input::Lines(Box::new(std::io::BufReader::new(
                std::io::stdin(),
            )))),
        },
        None => Some(Input::Lines(Box::new(std::io::BufReader::new(
            std::io::stdin(),
        )))),
    };
    s.interactive = interactive;
    // `-ex` and `-x` (`source FILE`), each on its own: one that fails does
    // not stop the next, as in gdb.
    let pause = s.dbg.pause_handle();
    for command in &args.startup {
        // Read as a typed command is: a Ctrl-C from now on pauses the run
        // it starts.
        pause.command_read();
        // A command that reads lines of its own (`define`, `document`,
        // `commands`) reads them from the session's input, as gdb's `-ex`
        // does (with `--batch` and no file: none).
        let outcome = match input.as_mut() {
            Some(input) => {
                let mut lines = Prompted {
                    input,
                    pause: &pause,
                    interactive,
                };
                s.execute(command, &mut lines)
            }
            None => s.execute(command, &mut Script(std::iter::empty())),
        };
        match outcome {
            Ok(Flow::Quit) => return Ok(!s.failed),
            Ok(_) => {}
            Err(message) => s.report_error(&message),
        }
    }
    let Some(mut input) = input.take() else {
        return Ok(!s.failed);
    };
    let mut prompted = Prompted {
        input: &mut input,
        pause: &pause,
        interactive,
    };
    let mut last = String::new();
    while let Some(line) = prompted.next_line() {
        let mut line = line.trim().to_string();
        if line.is_empty() && interactive {
            line = last.clone();
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        last = line.clone();
        match s.execute(&line, &mut prompted) {
            Ok(Flow::Quit) => break,
            Ok(_) => {}
            Err(message) => s.report_error(&message),
        }
    }
    Ok(!s.failed)
}

/// `echo`'s text with gdb's escapes replaced, as gdb 13's `parse_escape`
/// reads them: `\n`, `\t`, `\r`, `\a`, `\b`, `\f`, `\v`, `\e`, and
/// up to three octal digits (`\101` is `A`; the value is cut to a byte, a
/// byte from 0x80 up is the character of that code point, and `\0`
/// prints nothing, as gdb's `%c` of a NUL); any other escaped character
/// is itself (`\x41` is `x41`, as in gdb), and a `\` that ends the text
/// ends it.
fn unescape_echo(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('e') => out.push('\u{1b}'),
            Some(first @ '0'..='7') => {
                let mut value = first as u32 - '0' as u32;
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&d @ '0'..='7') => {
                            value = value * 8 + (d as u32 - '0' as u32);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                let byte = (value & 0xFF) as u8;
                if byte != 0 {
                    out.push(char::from(byte));
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// How gdb names a watchpoint of `kind` when it is set and when it stops
/// the program.
fn watch_title(kind: WatchKind) -> &'static str {
    match kind {
        WatchKind::Write => "Watchpoint",
        WatchKind::Read => "Hardware read watchpoint",
        WatchKind::Access => "Hardware access (read/write) watchpoint",
    }
}

/// A display's format as gdb writes it before the expression (`/x `).
fn format_prefix(format: Format) -> &'static str {
    match format {
        Format::Natural => "",
        Format::Hex => "/x ",
        Format::Decimal => "/d ",
        Format::Unsigned => "/u ",
        Format::Octal => "/o ",
        Format::Char => "/c ",
        Format::Binary => "/t ",
        Format::Float => "/f ",
    }
}

/// `1 2 3` for gdb's messages.
fn list_numbers(ids: &[u32]) -> String {
    ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

/// The lines of a command list or a user command being read, up to its
/// `end`: a nested `commands`, `define` or `document` (gdb nests them)
/// keeps its own lines and `end` in the list.
#[derive(Default)]
struct CommandList {
    lines: Vec<String>,
    /// How many nested `commands` are open.
    depth: usize,
}

impl CommandList {
    /// Takes the next line (trimmed); false at the list's own `end`.
    fn read(&mut self, line: &str) -> bool {
        if line == "end" {
            if self.depth == 0 {
                return false;
            }
            self.depth -= 1;
        } else if matches!(
            line.split_whitespace().next(),
            Some("commands" | "command" | "define" | "document")
        ) {
            self.depth += 1;
        }
        if !line.is_empty() {
            self.lines.push(line.to_string());
        }
        true
    }
}

/// Whether to keep reading commands.
enum Flow {
    Continue,
    Quit,
    /// `commands`: the lines up to `end` are the command list of these
    /// breakpoints.
    ReadCommands(Vec<u32>),
    /// `define NAME`: the lines up to `end` are the user command's body.
    Define(String),
    /// `document NAME`: the lines up to `end` are its help text.
    Document(String),
}

const HELP: &str = "\
commands (gdb's words):
  break LOCATION [if COND]               set a breakpoint (b); LOCATION is FILE:LINE, LINE,
                                         FUNCTION or *OFFSET; COND compares registers and
                                         numbers (%i3 == 5, %i0:1 > 10)
  tbreak LOCATION [if COND]              a breakpoint deleted when it stops
  call FUNCTION(ARGS)                    call a function of the program while it is stopped
                                         (print FUNCTION(ARGS) too): its results as $N = VALUE;
                                         breakpoints do not stop inside it
  watch REGISTER [if COND]               stop when a register of the selected frame changes
                                         (a watchpoint, deleted when the frame returns)
  rwatch | awatch REGISTER [if COND]     stop after an instruction of the frame reads it (or,
                                         awatch, reads or changes it)
  condition N [COND]                     set (or remove) breakpoint N's condition
  commands [N...] ... end                commands run when breakpoint N stops the program
                                         (the last one set without N; `silent` first: the
                                         stop is not shown; an empty list removes it)
  ignore N COUNT                         do not stop at breakpoint N the next COUNT times
  enable|disable|delete [N... | A-B]     breakpoints and watchpoints N, or all (d = delete)
  info breakpoints|watchpoints|registers [NAME...]|frame|args|locals|display|source|line [LOC]
                                         (locals: the .mlir's %names and their values)
  run | start                            run the program (r); start stops at its first instruction
  continue                               run to the next breakpoint (c)
  step | next                            next source line, into / over calls (s, n)
  stepi | nexti                          one instruction (si); nexti over calls (ni)
  until | advance LOCATION               past the current line (u) / to LOCATION, or the frame's return
  finish                                 run until the selected frame returns
  jump LOCATION                          go on at LOCATION of the current function (j): LINE,
                                         FILE:LINE, FUNCTION or *OFFSET; a breakpoint there stops
  return [EXPR, ...]                     pop the selected frame now, returning one EXPR per
                                         result (none: zeros and null refs); popping the outermost
                                         frame ends the call (an __init's: the next call stops)
  backtrace [full] [N | -N]              the call stack (bt, where): the innermost N frames,
                                         or outermost N; full: each frame's locals
  up [N] | down [N] | frame [N]          select a frame (f)
  print[/x|/d|/u|/o|/t|/c|/f] EXPR       registers (%iN, %iN:M, %rN), numbers (1u, 0xFF, 1.5f)
                                         and history ($N, $, $$N) with C's operators and casts
                                         ((unsigned int)X; p; numbers alone need no program),
                                         as $N = VALUE; print REGISTER = VALUE sets it, then
                                         prints it
  output[/FMT] EXPR                      EXPR's value alone: no `$N =`, no newline
  printf \"FORMAT\", EXPR...               C's printf: %d %i %u %x %X %o %c %s %f %e %g %%
  ptype | whatis EXPR                    EXPR's type: i32, i64, ui32, f32, f64, !vm.list<i32>, ...
  set var REGISTER = VALUE               set a register of the selected frame (a number, or
                                         another register; i32/i64 take integers)
  display[/FMT] EXPR | undisplay [N...]  show EXPR at every stop (source names: where it stops)
  enable|disable|delete display [N...]   turn displays on or off, or delete them
  x/NFU %rN[+OFFSET]                     examine N units of a buffer's (or tensor's) bytes:
                                         F is x d u t f, U is b h w g (1, 2, 4, 8 bytes)
  list [A,B | FUNCTION | LINE | FILE:LINE]  source lines (l); again to go on
  disassemble                            the function, `=>` at the current instruction
  complete TEXT                          the completions of TEXT
  echo TEXT                              print TEXT (C escapes: \\n, \\t, ...; no newline of its own)
  source [-s] [-v] FILE                  run FILE's commands (as -x FILE); the first error ends it;
                                         -v shows each command first (+CMD)
  define NAME ... end                    a user command NAME running those lines, $arg0... and
                                         $argc its arguments (redefines NAME)
  document NAME ... end                  the text `help NAME` shows for user command NAME
  kill                                   abandon the running program
  quit                                   leave (q)";

/// A display as shown: number, expression as typed, format, value.
type DisplayRow = (u32, String, Format, Result<String, String>);

/// gdb's words (`set_ignore_count`) for breakpoint `id` ignored `count`
/// more times, as `ignore` and `continue N` print them.
fn ignore_count_words(id: u32, count: u32) -> String {
    match count {
        0 => format!("Will stop next time breakpoint {id} is reached."),
        1 => format!("Will ignore next crossing of breakpoint {id}."),
        _ => format!("Will ignore next {count} crossings of breakpoint {id}."),
    }
}

/// The count of `step`, `next`, `stepi` and `nexti` (gdb's `step N`): 1
/// without one; none (nothing done) for 0 or less, as in gdb.
fn step_count(rest: &str) -> Result<u64, String> {
    if rest.is_empty() {
        return Ok(1);
    }
    let parsed = match rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => rest.parse::<i64>().ok(),
    };
    match parsed {
        Some(n) => Ok(u64::try_from(n).unwrap_or(0)),
        None if rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
            Err(format!("No symbol \"{rest}\" in current context."))
        }
        None => Err(format!("the count is a number of steps, not `{rest}`")),
    }
}

/// Breakpoint (or display: `what`) numbers in `rest`, each `N` or a range
/// `A-B` as gdb takes them (`None`: all). A word that is neither is named
/// whole (`-1`, `2-`).
fn numbers(rest: &str, what: &str) -> Result<Option<Vec<u32>>, String> {
    if rest.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for word in rest.split_whitespace() {
        let number = |n: &str| {
            n.parse::<u32>().map_err(|_| {
                if n == word {
                    format!("`{word}` is not a {what} number")
                } else {
                    format!("`{word}` is not a {what} number or range (N or A-B)")
                }
            })
        };
        match word.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if b < a {
                    return Err(format!("inverted {what} range {word}"));
                }
                if b - a >= MAX_RANGE {
                    return Err(format!("{what} range {word} is over {MAX_RANGE} numbers"));
                }
                out.extend(a..=b);
            }
            None => out.push(number(word)?),
        }
    }
    Ok(Some(out))
}

/// Does `f` for each number (a range's missing numbers do not stop the
/// others, as in gdb); the failures, one per line.
fn each_number(ids: Vec<u32>, mut f: impl FnMut(u32) -> Result<(), String>) -> Result<(), String> {
    let failures: Vec<String> = ids.into_iter().filter_map(|id| f(id).err()).collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\nerror: "))
    }
}

/// Most numbers one range (`delete 1-5`) names.
const MAX_RANGE: u32 = 1 << 16;

/// Splits `REGISTER = VALUE` at an `=` that is no part of a comparison
/// (`==`, `!=`, `<=`, `>=`).
fn split_assignment(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let at = (0..bytes.len()).find(|&k| {
        bytes[k] == b'='
            && !matches!(
                bytes.get(k.wrapping_sub(1)),
                Some(b'=' | b'!' | b'<' | b'>')
            )
            && bytes.get(k + 1) != Some(&b'=')
    })?;
    let (register, value) = (text[..at].trim(), text[at + 1..].trim());
    (!register.is_empty() && !value.is_empty()).then_some((register, value))
}

/// Splits `LOCATION if COND`.
fn split_condition(rest: &str) -> (String, Option<String>) {
    let padded = format!(" {rest}");
    match padded.find(" if ") {
        Some(at) => (
            padded[..at].trim().to_string(),
            Some(padded[at + 4..].trim().to_string()),
        ),
        None if padded.trim_end().ends_with(" if") => (
            padded.trim_end().trim_end_matches(" if").trim().to_string(),
            Some(String::new()),
        ),
        None => (rest.trim().to_string(), None),
    }
}

/// `print/x` → (`print`, format).
fn split_format(word: &str) -> Result<(&str, Format), String> {
    match word.split_once('/') {
        Some((w, f)) => Ok((w, Format::from_letter(f).map_err(|e| e.to_string())?)),
        None => Ok((word, Format::Natural)),
    }
}

impl Session {
    /// The value of `text` (registers, source names, numbers) in the
    /// selected frame, for `output`, `ptype`, `whatis` and `printf`.
    /// A value of the history (`$N`, `$`, `$$N`) or a call's one result
    /// (`FUNCTION(ARGS)`, `calls`: for `output` and `printf`, as `print`
    /// calls) too.
    fn evaluate_typed(
        &mut self,
        text: &str,
        calls: bool,
    ) -> Result<irvm_debugger::DebugValue, String> {
        if text.is_empty() {
            return Err("Argument required (expression to compute).".into());
        }
        if let Some(found) = self.history.lookup(text) {
            return found;
        }
        if let Some((function, args)) = irvm_debugger::parse_call(text) {
            if !calls {
                return Err(format!(
                    "`{text}` is a call: only print, call, output and printf call functions"
                ));
            }
            let args = args
                .iter()
                .map(|a| self.in_registers(a))
                .collect::<Result<Vec<String>, String>>()?;
            let values = self
                .dbg
                .call_function(function, &args)
                .map_err(|e| e.to_string())?;
            return match &values[..] {
                [one] => Ok(irvm_debugger::DebugValue::from_value(one)),
                _ => Err(format!(
                    "`{function}` returned {} values; one is needed here",
                    values.len()
                )),
            };
        }
        let vm = self.in_registers(text)?;
        let frame = self.dbg.selected_frame();
        let history = &self.history;
        let mut warnings = Vec::new();
        let value = self
            .dbg
            .evaluate_noting(&vm, frame, &|word| history.lookup(word), &mut warnings)
            .map_err(|e| in_terms_of(e.0, &vm, text));
        show_warnings(&warnings);
        value
    }

    /// The source names at `a` (positioned at `position`).
    fn names_at(
        &mut self,
        a: &CodeAddress,
        position: Option<&irvm::loader::SourcePosition>,
    ) -> SourceNames {
        let key = (a.module_index, a.function);
        let dirs = &self.source_dirs;
        let function = self
            .names
            .entry(key)
            .or_insert_with(|| {
                let read = |file: &str| {
                    dirs.iter()
                        .map(|d| d.join(file))
                        .chain([PathBuf::from(file)])
                        .find_map(|p| read_source(&p))
                };
                std::sync::Arc::new(FunctionNames::of(self.dbg.debug_info(), read, a))
            })
            .clone();
        function.at(position)
    }

    /// The source names where the selected frame stands.
    fn names_here(&mut self) -> SourceNames {
        match self.dbg.selected_location() {
            Some((a, position)) => self.names_at(&a, position.as_ref()),
            None => SourceNames::default(),
        }
    }

    /// `text` with the selected frame's source names (`%next`) replaced by
    /// their registers; registers spelled as such stay registers.
    fn in_registers(&mut self, text: &str) -> Result<String, String> {
        self.names_here().substitute(text, false)
    }

    /// A breakpoint condition in terms of registers: source names as they
    /// are where breakpoint `id` stops (its first address).
    fn condition_in_registers(&mut self, id: u32, condition: &str) -> Result<String, String> {
        let first = self
            .dbg
            .breakpoints()
            .into_iter()
            .find(|b| b.id == id)
            .and_then(|b| b.addresses.first().cloned());
        let Some(a) = first else {
            return Ok(condition.to_string());
        };
        let position = self.dbg.position_of(&a);
        self.names_at(&a, position.as_ref())
            .substitute(condition, false)
    }

    /// How a watchpoint is shown: what was typed, with the register when
    /// that was a source name (`%next (%i5)`).
    fn watch_label(&self, typed: &str, register: irvm_debugger::RegisterRef) -> String {
        let typed = typed.trim();
        if typed == register.to_string() {
            typed.to_string()
        } else {
            format!("{typed} ({register})")
        }
    }

    /// `undisplay [N...]`, `delete display [N...]`.
    fn delete_displays(&mut self, ids: &str) -> Result<(), String> {
        let e = |e: DebugCommandError| e.to_string();
        match numbers(ids, "display")? {
            None => {
                self.dbg.remove_display(None).map_err(e)?;
                self.display_texts.clear();
                self.disabled_displays.clear();
            }
            Some(ids) => {
                for id in ids {
                    self.dbg.remove_display(Some(id)).map_err(e)?;
                    self.display_texts.remove(&id);
                    self.disabled_displays.remove(&id);
                }
            }
        }
        Ok(())
    }

    /// `enable display [N...]`, `disable display [N...]`.
    fn enable_displays(&mut self, ids: &str, on: bool) -> Result<(), String> {
        let known: Vec<u32> = self.dbg.displays().iter().map(|d| d.0).collect();
        let ids = match numbers(ids, "display")? {
            None => known.clone(),
            Some(ids) => ids,
        };
        for id in ids {
            if !known.contains(&id) {
                return Err(format!("no display number {id}"));
            }
            if on {
                self.disabled_displays.remove(&id);
            } else {
                self.disabled_displays.insert(id);
            }
        }
        Ok(())
    }

    /// `info locals`: each source name of the selected frame's function
    /// with its register's value.
    fn info_locals(&mut self) -> Result<(), String> {
        self.require_frames()?;
        let lines = self.locals(self.dbg.selected_frame())?;
        if lines.is_empty() {
            outln!("No locals.");
        }
        for line in lines {
            outln!("{line}");
        }
        Ok(())
    }

    /// Each source name of frame `frame`'s function where it stands, with
    /// its register's value (`info locals`, `backtrace full`).
    fn locals(&mut self, frame: usize) -> Result<Vec<String>, String> {
        let names = match self.dbg.frame_location(frame) {
            Some((a, position)) => self.names_at(&a, position.as_ref()),
            None => SourceNames::default(),
        };
        let mut lines = Vec::new();
        for name in names.by_name.keys() {
            match names.register(name) {
                Some(Ok(register)) => {
                    let v = self
                        .dbg
                        .evaluate(&register.to_string(), frame)
                        .map_err(|e| e.to_string())?;
                    let shared = names.sharing(name, register);
                    let place = if shared.is_empty() {
                        format!("{register}")
                    } else {
                        format!("{register}, shared with {}", shared.join(", "))
                    };
                    lines.push(format!(
                        "{name} = {}  ({place})",
                        self.dbg.format_value(&v, Format::Natural)
                    ));
                }
                Some(Err(why)) => lines.push(format!("{name} = <{why}>")),
                None => {}
            }
        }
        Ok(lines)
    }

    fn command(&mut self, line: &str) -> Result<Flow, String> {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let e = |e: DebugCommandError| e.to_string();
        // A user command wins over a built-in of its name, as gdb's
        // redefinition does.
        if self.user_commands.contains_key(word) {
            return self.run_user_command(word, rest);
        }
        // `x/NFU` has letters of its own (units, `u`), not print's formats.
        if let Some(suffix) = word
            .strip_prefix('x')
            .filter(|s| s.is_empty() || s.starts_with('/'))
        {
            self.require_frames()?;
            for line in self.dbg.examine(suffix, rest).map_err(e)? {
                outln!("{line}");
            }
            return Ok(Flow::Continue);
        }
        let (word, format) = split_format(word)?;
        match word {
            "break" | "b" | "br" | "tbreak" | "tb" => {
                let (spec, condition) = split_condition(rest);
                if condition.as_deref() == Some("") {
                    return Err("`if` needs a condition".into());
                }
                let b = self
                    .dbg
                    .add_breakpoint(BreakpointRequest {
                        spec,
                        condition: None,
                        hit_condition: None,
                        temporary: word.starts_with('t'),
                    })
                    .map_err(e)?;
                if let Some(c) = &condition {
                    // Source names mean what they mean where it stops.
                    let set = self.condition_in_registers(b.id, c).and_then(|vm| {
                        self.dbg
                            .set_condition(b.id, Some(&vm))
                            .map_err(|e| in_terms_of(e.0, &vm, c))
                    });
                    if let Err(why) = set {
                        let _ = self.dbg.delete_breakpoint(Some(b.id));
                        return Err(why);
                    }
                }
                self.last_breakpoint = Some(b.id);
                let n = b.addresses.len();
                let Some(first) = b.addresses.first() else {
                    return Err("the breakpoint resolved to no address".into());
                };
                outln!(
                    "{} {} at {} ({n} location{})",
                    if b.temporary {
                        "Temporary breakpoint"
                    } else {
                        "Breakpoint"
                    },
                    b.id,
                    self.describe_address(first),
                    if n == 1 { "" } else { "s" }
                );
            }
            "watch" | "rwatch" | "awatch" => {
                let kind = match word {
                    "rwatch" => WatchKind::Read,
                    "awatch" => WatchKind::Access,
                    _ => WatchKind::Write,
                };
                let (register, condition) = split_condition(rest);
                if register.is_empty() {
                    return Err(format!("{word} needs a register: %iN, %iN:M or %rN"));
                }
                if condition.as_deref() == Some("") {
                    return Err("`if` needs a condition".into());
                }
                let typed = register.clone();
                let register = self.in_registers(&register)?;
                let condition = condition.map(|c| self.in_registers(&c)).transpose()?;
                let w = self
                    .dbg
                    .add_watchpoint_of_kind(&register, condition.as_deref(), kind)
                    .map_err(|e| in_terms_of(e.0, &register, &typed))?;
                let label = self.watch_label(&typed, w.register);
                self.watch_labels.insert(w.id, label.clone());
                self.last_breakpoint = Some(w.id);
                outln!("{} {}: {label}", watch_title(kind), w.id);
            }
            "set" => {
                let assignment = rest
                    .strip_prefix("variable")
                    .or_else(|| rest.strip_prefix("var"))
                    .filter(|a| a.starts_with(char::is_whitespace))
                    .ok_or("usage: set var REGISTER = VALUE")?;
                let (typed, value) =
                    split_assignment(assignment).ok_or("usage: set var REGISTER = VALUE")?;
                let (register, value) = (self.in_registers(typed)?, self.in_registers(value)?);
                self.dbg
                    .set_register(&register, &value)
                    .map_err(|e| in_terms_of(e.0, &register, typed))?;
            }
            "condition" => {
                let (n, cond) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let id: u32 = n
                    .parse()
                    .map_err(|_| format!("`{n}` is not a breakpoint number"))?;
                let cond = cond.trim();
                let vm = self.condition_in_registers(id, cond)?;
                self.dbg
                    .set_condition(id, (!vm.is_empty()).then_some(vm.as_str()))
                    .map_err(|e| in_terms_of(e.0, &vm, cond))?;
                if cond.is_empty() {
                    outln!("Breakpoint {id} now unconditional.");
                }
            }
            "commands" | "command" => {
                let ids = match numbers(rest, "breakpoint")? {
                    Some(ids) => ids,
                    None => vec![self
                        .last_breakpoint
                        .ok_or("No breakpoints specified.")?],
                };
                let known: Vec<u32> = self
                    .dbg
                    .breakpoints()
                    .iter()
                    .map(|b| b.id)
                    .chain(self.dbg.watchpoints().iter().map(|w| w.id))
                    .collect();
                if let Some(id) = ids.iter().find(|id| !known.contains(id)) {
                    return Err(format!("No breakpoint number {id}."));
                }
                return Ok(Flow::ReadCommands(ids));
            }
            "ignore" => {
                let mut parts = rest.split_whitespace();
                let (Some(n), Some(count), None) = (parts.next(), parts.next(), parts.next())
                else {
                    return Err("usage: ignore N COUNT".into());
                };
                let id: u32 = n
                    .parse()
                    .map_err(|_| format!("`{n}` is not a breakpoint number"))?;
                let count: u32 = count
                    .parse()
                    .map_err(|_| format!("`{count}` is not a count"))?;
                self.dbg.set_ignore_count(id, count).map_err(e)?;
                outln!("{}", ignore_count_words(id, count));
            }
            "enable" | "disable" if rest.split_whitespace().next() == Some("display") => {
                let ids = rest["display".len()..].trim();
                self.enable_displays(ids, word == "enable")?;
            }
            "delete" | "d" if rest.split_whitespace().next() == Some("display") => {
                self.delete_displays(rest["display".len()..].trim())?;
            }
            "enable" | "disable" => {
                let on = word == "enable";
                match numbers(rest, "breakpoint")? {
                    None => self.dbg.enable_breakpoint(None, on).map_err(e)?,
                    Some(ids) => each_number(ids, |id| {
                        self.dbg.enable_breakpoint(Some(id), on).map_err(e)
                    })?,
                }
            }
            "delete" | "d" => match numbers(rest, "breakpoint")? {
                None => self.dbg.delete_breakpoint(None).map_err(e)?,
                Some(ids) => each_number(ids, |id| self.dbg.delete_breakpoint(Some(id)).map_err(e))?,
            },
            "run" | "r" => {
                let stop = self.dbg.run().map_err(e)?;
                self.report(stop);
            }
            "start" => {
                let stop = self.dbg.start(true).map_err(e)?;
                self.report(stop);
            }
            "continue" | "c" | "cont" => {
                if !rest.is_empty() && self.dbg.is_running() {
                    // gdb's `continue N`: the breakpoint stopped at is
                    // ignored N - 1 more times.
                    let n = step_count(rest)?;
                    let ignore = u32::try_from(n.saturating_sub(1)).unwrap_or(u32::MAX);
                    // A breakpoint deleted since the stop is no longer
                    // stopped at (gdb's bpstat_num gives -1 for it): the
                    // count is ignored and the program continues.
                    match self
                        .stopped_at_breakpoint
                        .filter(|&id| self.dbg.set_ignore_count(id, ignore).is_ok())
                    {
                        Some(id) => {
                            outln!("{}  Continuing.", ignore_count_words(id, ignore))
                        }
                        None => outln!("Not stopped at any breakpoint; argument ignored."),
                    }
                }
                let stop = self.dbg.continue_().map_err(e)?;
                self.report(stop);
            }
            "step" | "s" | "next" | "n" | "stepi" | "si" | "nexti" | "ni" => {
                // gdb's `step N`: N steps, shown once at the end; a stop
                // for another reason (a breakpoint, the program's end, a
                // trap, Ctrl-C) ends them there.
                let count = step_count(rest)?;
                if !self.dbg.is_running() {
                    // gdb asks for a program before reading the count: a
                    // count of 0 (or less) is refused too.
                    return Err("the program is not being run (use `run`)".into());
                }
                let mut last = None;
                for _ in 0..count {
                    let stop = match word {
                        "step" | "s" => self.dbg.step(),
                        "next" | "n" => self.dbg.step_over(),
                        "stepi" | "si" => self.dbg.step_instruction(),
                        _ => self.dbg.next_instruction(),
                    }
                    .map_err(e)?;
                    let more = matches!(stop, Stop::Step);
                    last = Some(stop);
                    if !more {
                        break;
                    }
                }
                if let Some(stop) = last {
                    self.report(stop);
                }
            }
            "until" | "u" => {
                let stop = if rest.is_empty() {
                    self.dbg.until()
                } else {
                    self.dbg.advance(rest)
                }
                .map_err(e)?;
                self.report(stop);
            }
            "advance" => {
                if rest.is_empty() {
                    return Err(
                        "advance needs a location: FILE:LINE, LINE, FUNCTION or *OFFSET".into(),
                    );
                }
                let stop = self.dbg.advance(rest).map_err(e)?;
                self.report(stop);
            }
            "finish" | "fin" => {
                let n = self.dbg.selected_frame();
                self.require_frames()?;
                self.dbg.finish_refusal().map_err(e)?;
                if let Some((a, _)) = self.dbg.frame_location(n) {
                    outln!("Run till exit from #{n}  {}", self.describe_address(&a));
                }
                let stop = self.dbg.finish().map_err(e)?;
                self.report(stop);
            }
            "backtrace" | "bt" | "where" => self.backtrace(rest)?,
            "jump" | "j" => {
                let target = self.dbg.jump_target(rest).map_err(e)?;
                let name = self.dbg.function_name(&target);
                outln!(
                    "Continuing at {}.{name}+0x{:08X}.",
                    target.module,
                    target.offset
                );
                let stop = self.dbg.jump(&target).map_err(e)?;
                self.report(stop);
            }
            "return" => self.return_now(rest)?,
            "up" | "down" => {
                // gdb's `up_silently_base`: a count moves as far as the
                // stack goes (`up 99` selects the outermost frame, `up -1`
                // is `down 1`); only without one is a move past the end an
                // error.
                let count: i64 = if rest.is_empty() {
                    1
                } else {
                    match self.dbg.evaluate(rest, self.dbg.selected_frame()) {
                        Ok(irvm_debugger::DebugValue::I32(n)) => n.into(),
                        Ok(irvm_debugger::DebugValue::I64(n)) => n,
                        _ => return Err(format!("`{rest}` is not a number of frames")),
                    }
                };
                let frames = self.require_frames()?.len();
                let now = self.dbg.selected_frame();
                let towards_outer = if word == "up" { count } else { -count };
                if rest.is_empty() {
                    if word == "up" && now + 1 >= frames {
                        return Err("Initial frame selected; you cannot go up.".into());
                    }
                    if word == "down" && now == 0 {
                        return Err("Bottom (innermost) frame selected; you cannot go down.".into());
                    }
                }
                let outermost = (frames - 1) as i64;
                let target = (now as i64).saturating_add(towards_outer).clamp(0, outermost) as usize;
                self.dbg.select_frame(target).map_err(e)?;
                self.show_frame(target);
            }
            "frame" | "f" => {
                let n = if rest.is_empty() {
                    self.dbg.selected_frame()
                } else {
                    rest.parse()
                        .map_err(|_| format!("`{rest}` is not a frame number"))?
                };
                self.dbg.select_frame(n).map_err(e)?;
                self.show_frame(n);
            }
            "info" | "i" => match rest {
                "breakpoints" | "b" | "break" => self.info_breakpoints(false),
                "watchpoints" | "wat" => self.info_breakpoints(true),
                _ if matches!(
                    rest.split_whitespace().next(),
                    Some("registers" | "r" | "reg" | "all-registers")
                ) =>
                {
                    let names = rest.split_once(char::is_whitespace).map_or("", |(_, n)| n);
                    self.info_registers(names)?
                }
                "source" => self.info_source()?,
                "frame" | "f" => self.info_frame()?,
                "args" => self.info_args()?,
                "display" => self.info_display(),
                "locals" => self.info_locals()?,
                _ if rest == "line" || rest.starts_with("line ") => {
                    self.info_line(rest["line".len()..].trim())?
                }
                _ => {
                    return Err(format!(
                    "unknown info command `{rest}` (breakpoints, watchpoints, registers, frame, args, locals, display, source, line)"
                ))
                }
            },
            "call" => {
                let (function, args) = irvm_debugger::parse_call(rest)
                    .ok_or("usage: call FUNCTION(ARG, ...)")?;
                self.call(function, &args, format)?;
            }
            "print" | "p" if irvm_debugger::parse_call(rest).is_some() => {
                if let Some((function, args)) = irvm_debugger::parse_call(rest) {
                    self.call(function, &args, format)?;
                }
            }
            "print" | "p" => {
                // The value history needs no program.
                if let Some(found) = self.history.lookup(rest) {
                    self.print_numbered(found?, format);
                    return Ok(Flow::Continue);
                }
                if let Some((typed, value)) = split_assignment(rest) {
                    self.require_frames()?;
                    let (register, value) = (self.in_registers(typed)?, self.in_registers(value)?);
                    let v = self
                        .dbg
                        .set_register(&register, &value)
                        .map_err(|e| in_terms_of(e.0, &register, typed))?;
                    self.print_numbered(v, format);
                    return Ok(Flow::Continue);
                }
                // Numbers need no program (`print 1 + 2`); registers and
                // source names (`%` and a letter) do.
                let needs_frame = rest
                    .split('%')
                    .skip(1)
                    .any(|after| after.starts_with(|c: char| c.is_ascii_alphabetic()));
                if needs_frame {
                    self.require_frames()?;
                }
                let vm = self.in_registers(rest)?;
                let history = &self.history;
                let mut warnings = Vec::new();
                let v = self
                    .dbg
                    .evaluate_noting(
                        &vm,
                        self.dbg.selected_frame(),
                        &|word| history.lookup(word),
                        &mut warnings,
                    )
                    .map_err(|e| format!("cannot print `{rest}`: {}", in_terms_of(e.0, &vm, rest)));
                show_warnings(&warnings);
                self.print_numbered(v?, format);
            }
            "output" => {
                // gdb's `output`: the value alone, no `$N = ` and no
                // newline.
                let v = self.evaluate_typed(rest, true)?;
                out!("{}", self.dbg.format_value(&v, format));
            }
            "ptype" | "whatis" => {
                if format != Format::Natural {
                    return Err(format!("{word} takes no format (/x, ...)"));
                }
                if rest.is_empty() {
                    return Err(format!("{word} needs an expression (a register, source name or number)"));
                }
                let v = self.evaluate_typed(rest, false)?;
                outln!("type = {}", v.type_name());
            }
            "printf" => {
                let (format, texts) = irvm_debugger::split_printf(rest).map_err(e)?;
                let mut values = Vec::new();
                for text in &texts {
                    values.push(self.evaluate_typed(text, true)?);
                }
                let dbg = &self.dbg;
                let bytes = irvm_debugger::format_printf(&format, &values, |v| {
                    dbg.format_value(v, Format::Natural)
                })
                .map_err(e)?;
                crate::stdout::write_bytes(&bytes);
            }
            "display" => {
                if rest.is_empty() {
                    self.show_displays();
                } else {
                    // Source names are those where the program stands now
                    // (and at each later stop, see `display_rows`).
                    let vm = self.in_registers(rest)?;
                    let id = self
                        .dbg
                        .add_display(&vm, format)
                        .map_err(|e| in_terms_of(e.0, &vm, rest))?;
                    if vm != rest {
                        self.display_texts.insert(id, rest.to_string());
                    }
                    if self.dbg.is_running() {
                        let shown = self.display_rows();
                        if let Some(d) = shown.iter().find(|d| d.0 == id) {
                            Self::show_display(d);
                        }
                    }
                }
            }
            "undisplay" => self.delete_displays(rest)?,
            "list" | "l" => self.list(rest)?,
            "disassemble" | "disas" => self.disassemble()?,
            "complete" => {
                let files: Vec<String> = self.dbg.source_files().into_iter().collect();
                let functions: Vec<String> = self.dbg.function_names().into_iter().collect();
                let (start, words) = complete(rest, rest.len(), &files, &functions);
                for w in words {
                    outln!("{}{w}", &rest[..start]);
                }
            }
            "kill" | "k" => {
                self.dbg.require_running_program().map_err(e)?;
                self.dbg.kill();
                outln!("[Inferior 1 killed]");
            }
            "echo" => {
                // gdb's `echo`: the text of the line as written, C escapes
                // (`\n`, `\t`, ...) and no newline of its own.
                // gdb skips the blanks after the command word (`echo \ \ x`
                // keeps leading spaces).
                let line_text = line.trim_start();
                let text = line_text
                    .strip_prefix("echo")
                    .map(|t| t.trim_start_matches([' ', '\t']))
                    .unwrap_or("");
                out!("{}", unescape_echo(text));
            }
            "define" => return self.define(rest),
            "document" => return self.document(rest),
            "source" => return self.source_commands(rest),
            "help" | "h" => {
                if rest.is_empty() || self.help_user_command(rest).is_none() {
                    let name = rest.split_whitespace().next().unwrap_or("");
                    if !name.is_empty() && !is_command(name) {
                        return Err(format!("Undefined command: \"{name}\".  Try \"help\"."));
                    }
                    outln!("{HELP}");
                }
            }
            "quit" | "q" | "exit" => return Ok(Flow::Quit),
            _ => return Err(format!("unknown command `{word}` (try `help`)")),
        }
        Ok(Flow::Continue)
    }

    /// gdb's `query`: `QUESTION (y or n)`, answered at the terminal, or
    /// answered yes (and said so) when the commands do not come from one.
    pub(crate) fn query(&self, question: &str) -> bool {
        if self.interactive {
            out!("{question} (y or n) ");
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            matches!(answer.trim(), "y" | "Y" | "yes")
        } else {
            outln!("{question} (y or n) [answered Y; input not from terminal]");
            true
        }
    }

    /// A value `print` shows, as gdb prints every one: kept in the value
    /// history and shown under its number (`$3 = 42`).
    fn print_numbered(&mut self, value: irvm_debugger::DebugValue, format: Format) {
        let text = self.dbg.format_value(&value, format);
        let number = self.history.record(value);
        outln!("${number} = {text}");
    }

    /// `call FUNCTION(ARGS)`: each argument with the selected frame's
    /// source names, then each result as gdb prints a value (`$1 = 42`).
    fn call(&mut self, function: &str, args: &[&str], format: Format) -> Result<(), String> {
        let args = args
            .iter()
            .map(|a| self.in_registers(a))
            .collect::<Result<Vec<String>, String>>()?;
        let values = self
            .dbg
            .call_function(function, &args)
            .map_err(|e| e.to_string())?;
        for v in &values {
            self.print_numbered(irvm_debugger::DebugValue::from_value(v), format);
        }
        Ok(())
    }

    /// `return [EXPR, ...]`: the values first (as gdb evaluates them
    /// before it asks), then gdb's question, answered yes when the
    /// commands do not come from a terminal, then the frame it stops in.
    fn return_now(&mut self, rest: &str) -> Result<(), String> {
        self.require_frames()?;
        let e = |e: DebugCommandError| e.to_string();
        let typed: Vec<&str> = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split(',').map(str::trim).collect()
        };
        let exprs = typed
            .iter()
            .map(|t| self.in_registers(t))
            .collect::<Result<Vec<String>, String>>()?;
        let values = self.dbg.return_values(&exprs).map_err(e)?;
        let what = self
            .dbg
            .selected_function_name()
            .unwrap_or_else(|| "selected stack frame".into());
        if !self.query(&format!("Make {what} return now?")) {
            return Err("Not confirmed".into());
        }
        let stop = self.dbg.return_now(values).map_err(e)?;
        match stop {
            Stop::Step => self.show_frame(0),
            Stop::Watchpoints { events, .. } => {
                for event in events {
                    if let WatchEvent::LeftScope(id) = event {
                        outln!(
                            "\nWatchpoint {id} deleted because the program has left the block in\n\
                             which its expression is valid."
                        );
                    }
                }
                self.show_frame(0);
            }
            other => self.report(other),
        }
        Ok(())
    }

    /// `fib (module.fib+0x00000033) at fib.mlir:9:10`.
    /// Frame `n` as `bt`, `frame`, `up` and `down` show it after `#N  `:
    /// gdb's frame line, its function first (`fib (module.fib+0x00000033)
    /// at fib.mlir:12:13`, as `finish`'s `Run till exit from` and the stops
    /// show it), then a `called from` line per enclosing inlined call the
    /// debug information records (it names their places, not their
    /// functions).
    fn frame_text(&self, n: usize, f: &irvm::FrameInfo) -> String {
        let mut text = match self.dbg.frame_location(n) {
            Some((a, _)) => self.describe_address(&a),
            None => {
                let name = &f.frame.function;
                let mut t = format!("{name} ({}.{name})", f.frame.module);
                if let Some(first) = f.frame.source.first() {
                    t.push_str(&format!(" at {first}"));
                }
                t
            }
        };
        for caller in f.frame.source.iter().skip(1) {
            text.push_str(&format!("\n        called from {caller}"));
        }
        text
    }

    fn describe_address(&self, a: &CodeAddress) -> String {
        let name = self.dbg.function_name(a);
        let at = match self.dbg.position_of(a) {
            Some(p) => format!(" at {p}"),
            None => String::new(),
        };
        format!("{name} ({}.{name}+0x{:08X}){at}", a.module, a.offset)
    }

    /// Runs the command lists of the breakpoints that stopped the program
    /// (`commands`), as gdb does: a command that runs the program ends its
    /// list, and the list of the breakpoint it stops at runs next.
    /// A `commands` in a list sets the list of its breakpoints to the
    /// lines up to its own `end`, as gdb nests them.
    fn run_breakpoint_commands(&mut self) -> Result<Flow, String> {
        if self.running_breakpoint_commands {
            // The loop below, further out, runs the pending list next.
            return Ok(Flow::Continue);
        }
        self.running_breakpoint_commands = true;
        let result = self.run_pending_commands();
        self.running_breakpoint_commands = false;
        result
    }

    fn run_pending_commands(&mut self) -> Result<Flow, String> {
        while let Some(list) = self.pending_commands.take() {
            let silent = list.first().is_some_and(|c| c == "silent");
            let mut lines = list.iter().skip(usize::from(silent));
            while let Some(line) = lines.next() {
                self.reported = false;
                let flow = self.command(line)?;
                let mut rest = Script(lines.by_ref().cloned());
                if let Flow::Quit = self.take_body(flow, &mut rest) {
                    return Ok(Flow::Quit);
                }
                if self.reported {
                    break;
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// Sets the command list of each of `ids` (an empty list removes it).
    fn set_command_list(&mut self, ids: &[u32], lines: Vec<String>) {
        for &id in ids {
            if lines.is_empty() {
                self.breakpoint_commands.remove(&id);
            } else {
                self.breakpoint_commands.insert(id, lines.clone());
            }
        }
    }

    /// The command list of the first of `ids` that has one: taken to run
    /// after the stop is reported; whether it starts with `silent` (the
    /// stop is then not shown).
    fn take_commands(&mut self, ids: &[u32]) -> bool {
        let list = ids
            .iter()
            .find_map(|id| self.breakpoint_commands.get(id))
            .cloned();
        let silent = list
            .as_ref()
            .and_then(|l| l.first())
            .is_some_and(|c| c == "silent");
        self.pending_commands = list;
        silent
    }

    fn report(&mut self, stop: Stop) {
        self.list_next = None;
        self.last_listed = None;
        self.reported = true;
        self.pending_commands = None;
        self.stopped_at_breakpoint = match &stop {
            Stop::Breakpoint(hit) => Some(hit.id),
            Stop::Watchpoints { breakpoint, .. } => breakpoint.as_ref().map(|b| b.id),
            _ => None,
        };
        let stopped_by: Vec<u32> = match &stop {
            Stop::Breakpoint(hit) => vec![hit.id],
            Stop::Watchpoints { events, breakpoint } => events
                .iter()
                .filter_map(|e| match e {
                    WatchEvent::Changed(hit) => Some(hit.id),
                    WatchEvent::Read(read) => Some(read.id),
                    WatchEvent::LeftScope(_) => None,
                })
                .chain(breakpoint.as_ref().map(|b| b.id))
                .collect(),
            _ => Vec::new(),
        };
        if self.take_commands(&stopped_by) {
            return;
        }
        match stop {
            Stop::Breakpoint(BreakpointHit {
                id,
                temporary,
                condition_error,
            }) => {
                outln!();
                if let Some(message) = condition_error {
                    outln!("Error in testing condition for breakpoint {id}:\n{message}");
                }
                let kind = if temporary {
                    "Temporary breakpoint"
                } else {
                    "Breakpoint"
                };
                self.show_current(&format!("{kind} {id}, "));
            }
            Stop::Watchpoints { events, breakpoint } => {
                // Each watchpoint that stopped the program, as gdb lists
                // them, then where it is once (with the breakpoint there,
                // which stopped it too).
                self.show_watch_events(&events);
                match breakpoint {
                    Some(hit) => {
                        outln!();
                        if let Some(message) = &hit.condition_error {
                            outln!(
                                "Error in testing condition for breakpoint {}:\n{message}",
                                hit.id
                            );
                        }
                        let kind = if hit.temporary {
                            "Temporary breakpoint"
                        } else {
                            "Breakpoint"
                        };
                        self.show_current(&format!("{kind} {}, ", hit.id));
                    }
                    None => self.show_current(""),
                }
            }
            Stop::Entry | Stop::Step => self.show_current(""),
            Stop::Paused | Stop::Interrupted => {
                outln!();
                outln!("Program received signal SIGINT, Interrupt.");
                self.show_current("");
                if self.dbg.in_yielding_call() {
                    outln!("(inside the host call there, which yields: going on resumes it)");
                }
            }
            Stop::Returned(values) => {
                self.show_current("");
                for v in &values {
                    let value = irvm_debugger::DebugValue::from_value(v);
                    let text = self.dbg.format_value(&value, Format::Natural);
                    let number = self.history.record(value);
                    outln!("Value returned is ${number} = {text}");
                }
            }
            Stop::Exception(trap) => {
                outln!();
                outln!("Program stopped: {}: {}", trap.code, trap.message);
                self.show_current("");
            }
            Stop::Finished(values) => {
                // Results computed from an archive that changed meanwhile
                // are not shown (as `irvm run`).
                if let Err(e) = crate::parameters::check_intact() {
                    outln!("[{} failed]", self.function);
                    outln!("irvm dbg: {e}");
                    return;
                }
                // What the last instruction read of watched registers
                // (the entry frame's `vm.return`), before the end.
                let events = self.dbg.take_final_watch_events();
                self.show_watch_events(&events);
                outln!("[{} returned]", self.function);
                for (i, v) in values.iter().enumerate() {
                    let text =
                        crate::result_format::format_value(v, irvm_hal::DEFAULT_MAX_ELEMENTS)
                            .unwrap_or_else(|e| e);
                    outln!("result[{i}]: {text}");
                }
                return;
            }
            Stop::Failed(trap) => {
                // As `irvm run` reports a failed initializer.
                match self.dbg.initializer_module() {
                    Some(module) => {
                        outln!("[module '{module}' failed to initialize]");
                        outln!("irvm dbg: module '{module}' failed to initialize: {trap}");
                    }
                    None => {
                        outln!("[{} failed]", self.function);
                        outln!("{}", describe_trap("dbg", &trap));
                    }
                }
                return;
            }
        }
        self.show_displays();
    }

    /// Each watchpoint event as gdb words it: the watchpoint's kind,
    /// number and what it watches between blank lines, then the value
    /// read, or the old and new values, or its end.
    fn show_watch_events(&self, events: &[WatchEvent]) {
        let kinds: HashMap<u32, WatchKind> = self
            .dbg
            .watchpoints()
            .iter()
            .map(|w| (w.id, w.kind))
            .collect();
        let title = |id: u32| watch_title(kinds.get(&id).copied().unwrap_or_default());
        let labels = &self.watch_labels;
        let heading = |id: u32, register: &dyn std::fmt::Display| {
            let label = labels
                .get(&id)
                .cloned()
                .unwrap_or_else(|| register.to_string());
            outln!();
            outln!("{} {}: {label}", title(id), id);
            outln!();
        };
        for event in events {
            match event {
                WatchEvent::Read(read) => {
                    // (a watchpoint that ended with the program is no
                    // longer listed: its kind comes with the read)
                    let label = labels
                        .get(&read.id)
                        .cloned()
                        .unwrap_or_else(|| read.register.to_string());
                    outln!();
                    outln!("{} {}: {label}", watch_title(read.kind), read.id);
                    outln!();
                    outln!(
                        "Value = {}",
                        self.dbg.format_value(&read.value, Format::Natural)
                    );
                }
                WatchEvent::Changed(hit) => {
                    heading(hit.id, &hit.register);
                    outln!(
                        "Old value = {}",
                        self.dbg.format_value(&hit.old, Format::Natural)
                    );
                    outln!(
                        "New value = {}",
                        self.dbg.format_value(&hit.new, Format::Natural)
                    );
                }
                WatchEvent::LeftScope(id) => {
                    outln!();
                    outln!(
                        "Watchpoint {id} deleted because the program has left the block in\n\
                         which its expression is valid."
                    );
                }
            }
        }
    }

    fn show_display(d: &DisplayRow) {
        let (id, text, format, value) = d;
        let fmt = format_prefix(*format);
        match value {
            Ok(v) => outln!("{id}: {fmt}{text} = {v}"),
            Err(e) => outln!("{id}: {fmt}{text} = <error: {e}>"),
        }
    }

    /// The displays as they stand in the selected frame: those typed with
    /// source names are evaluated with the names where the frame stands,
    /// and left out where those names mean nothing (as gdb leaves out a
    /// display whose variables are out of scope).
    fn display_rows(&mut self) -> Vec<DisplayRow> {
        let mut rows = Vec::new();
        for (id, text, format, value) in self.dbg.displays() {
            let Some(typed) = self.display_texts.get(&id).cloned() else {
                rows.push((id, text, format, value.map_err(|e| e.to_string())));
                continue;
            };
            let Ok(vm) = self.in_registers(&typed) else {
                continue;
            };
            let value = self
                .dbg
                .evaluate(&vm, self.dbg.selected_frame())
                .map(|v| self.dbg.format_value(&v, format))
                .map_err(|e| in_terms_of(e.0, &vm, &typed));
            rows.push((id, typed, format, value));
        }
        rows
    }

    fn show_displays(&mut self) {
        if !self.dbg.is_running() {
            return;
        }
        for d in self.display_rows() {
            if !self.disabled_displays.contains(&d.0) {
                Self::show_display(&d);
            }
        }
    }

    fn info_display(&self) {
        let shown = self.dbg.displays();
        if shown.is_empty() {
            outln!("There are no auto-display expressions now.");
            return;
        }
        outln!("Auto-display expressions now in effect:");
        outln!("Num Enb Expression");
        for (id, text, format, _) in shown {
            let text = self.display_texts.get(&id).unwrap_or(&text);
            let on = if self.disabled_displays.contains(&id) {
                "n"
            } else {
                "y"
            };
            // gdb lists a display's format with it (`1:   y  /x i`).
            outln!("{id}:   {on}  {}{text}", format_prefix(format));
        }
    }

    /// The stop line, then the source line (or the instruction).
    fn show_current(&mut self, prefix: &str) {
        let Some((a, pos)) = self.dbg.current() else {
            return;
        };
        outln!("{prefix}{}", self.describe_address(&a));
        self.show_source_or_instruction(&a, pos.as_ref());
    }

    fn show_source_or_instruction(
        &mut self,
        a: &CodeAddress,
        pos: Option<&irvm::loader::SourcePosition>,
    ) {
        let source = pos.and_then(|p| {
            self.source_line(&p.file, p.line)
                .map(|t| format!("{}\t{t}", p.line))
        });
        match source {
            Some(text) => outln!("{text}"),
            None => {
                if let Some(text) = self.dbg.instruction_text(a) {
                    outln!("=> {text}");
                }
            }
        }
    }

    /// `#N  frame` and its source line (`frame`, `up`, `down`).
    fn show_frame(&mut self, n: usize) {
        self.list_next = None;
        self.last_listed = None;
        let frames = self.dbg.frames();
        let Some(f) = frames.get(n) else {
            return;
        };
        outln!("#{n}  {}", self.frame_text(n, f));
        if let Some((a, pos)) = self.dbg.frame_location(n) {
            self.show_source_or_instruction(&a, pos.as_ref());
        }
    }

    /// Line `line` (1-based) of source `file`, when the file can be found.
    fn source_line(&mut self, file: &str, line: i32) -> Option<String> {
        let lines = self.source(file)?;
        lines
            .get(usize::try_from(line).ok()?.checked_sub(1)?)
            .cloned()
    }

    fn source(&mut self, file: &str) -> Option<&Vec<String>> {
        if !self.sources.contains_key(file) {
            let found = self
                .source_dirs
                .iter()
                .map(|d| d.join(file))
                .chain([PathBuf::from(file)])
                .find_map(|p| read_source(&p))
                .map(|t| t.lines().map(str::to_string).collect());
            self.sources.insert(file.to_string(), found);
        }
        self.sources.get(file)?.as_ref()
    }

    /// `info source`: the selected frame's source file, where it was
    /// found and how many lines it has, in gdb's words.
    fn info_source(&mut self) -> Result<(), String> {
        let file = self
            .dbg
            .selected_location()
            .and_then(|(_, p)| p)
            .map(|p| p.file)
            .or_else(|| self.list_next.as_ref().map(|(f, _)| f.clone()));
        let Some(file) = file else {
            outln!("No current source file.");
            return Ok(());
        };
        outln!("Current source file is {file}");
        let found = self
            .source_dirs
            .iter()
            .map(|d| d.join(&file))
            .chain([PathBuf::from(&file)])
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()));
        match found {
            Some(path) => {
                let shown = std::fs::canonicalize(&path).unwrap_or(path);
                outln!("Located in {}", shown.display());
                if let Some(lines) = self.source(&file) {
                    outln!("Contains {} lines.", lines.len());
                }
            }
            None => outln!("Not found (use --source-dir)."),
        }
        Ok(())
    }

    fn require_frames(&self) -> Result<Vec<irvm::FrameInfo>, String> {
        let frames = self.dbg.frames();
        if frames.is_empty() {
            return Err("the program is not being run (use `run`)".into());
        }
        Ok(frames)
    }

    /// `backtrace [full] [N | -N]`: the frames (the innermost `N`, or the
    /// outermost with `-N`), with `full` each frame's locals after it,
    /// indented as gdb indents them.
    fn backtrace(&mut self, rest: &str) -> Result<(), String> {
        let mut full = false;
        let mut limit: Option<i64> = None;
        for word in rest.split_whitespace() {
            match word {
                "full" | "-full" => full = true,
                _ => match word.parse::<i64>() {
                    Ok(n) if limit.is_none() => limit = Some(n),
                    // gdb's words for a number past its integers.
                    Err(_)
                        if limit.is_none() && {
                            let digits = word.strip_prefix('-').unwrap_or(word);
                            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
                        } =>
                    {
                        return Err("Numeric constant too large.".into())
                    }
                    _ => {
                        return Err(format!(
                            "unknown backtrace argument `{word}` (full, N or -N)"
                        ))
                    }
                },
            }
        }
        let frames = self.require_frames()?;
        let count = frames.len();
        let shown: Vec<usize> = match limit {
            None => (0..count).collect(),
            Some(n) if n >= 0 => (0..count.min(n as usize)).collect(),
            Some(n) => (count.saturating_sub(n.unsigned_abs() as usize)..count).collect(),
        };
        for &k in &shown {
            outln!("#{k}  {}", self.frame_text(k, &frames[k]));
            if full {
                let locals = self.locals(k)?;
                if locals.is_empty() {
                    outln!("No locals.");
                }
                for line in locals {
                    outln!("        {line}");
                }
            }
        }
        if matches!(limit, Some(n) if n >= 0) && shown.len() < count {
            outln!("(More stack frames follow...)");
        }
        Ok(())
    }

    fn info_frame(&self) -> Result<(), String> {
        let frames = self.require_frames()?;
        let n = self.dbg.selected_frame();
        let Some(f) = frames.get(n) else {
            return Err(format!("no frame {n}"));
        };
        let place = match self.dbg.frame_location(n) {
            Some((a, _)) => self.describe_address(&a),
            None => f.frame.to_string(),
        };
        outln!("Stack level {n}, frame at {place}:");
        if let Some(caller) = frames.get(n + 1) {
            outln!(
                " called by frame at {}",
                self.frame_text(n + 1, caller).lines().next().unwrap_or("")
            );
        }
        if n > 0 {
            if let Some(callee) = frames.get(n - 1) {
                outln!(
                    " caller of frame at {}",
                    self.frame_text(n - 1, callee).lines().next().unwrap_or("")
                );
            }
        }
        let args = self.dbg.arguments(n).map_err(|e| e.to_string())?;
        let list: Vec<String> = args
            .iter()
            .map(|(r, v)| format!("{r}={}", self.dbg.format_value(v, Format::Natural)))
            .collect();
        outln!(" Arglist: {}", list.join(", "));
        outln!(
            " {} i32 register slots, {} ref registers",
            f.i32s.len(),
            f.refs.len()
        );
        Ok(())
    }

    /// `info line [LOCATION]`: where the code of `LOCATION`'s line starts
    /// and ends, in gdb's words; without one, of the first line the last
    /// `list` showed, else of the selected frame's line.
    fn info_line(&self, location: &str) -> Result<(), String> {
        let (addresses, line) = if location.is_empty() {
            // gdb describes the first line the last `list` showed, else
            // the selected frame's; with neither, no line.
            if let Some((file, line)) = self.last_listed.clone() {
                return self.info_line(&format!("{file}:{line}"));
            }
            let Some((a, _)) = self.dbg.selected_location() else {
                outln!("No line number information available.");
                return Ok(());
            };
            (vec![a], None)
        } else {
            if let Some((line, file)) = self.dbg.line_out_of_range(location) {
                return Err(format!(
                    "Line number {line} is out of range for \"{file}\"."
                ));
            }
            self.dbg
                .resolve_location_line(location)
                .map_err(|e| e.to_string())?
        };
        // The line asked for, when it has no code (gdb then names the
        // next line's code: `Line 3 of "u.c" is at address ... but
        // contains no code.`).
        let asked = match self.dbg.line_spec(location) {
            Some(Ok((_, asked, _))) => Some(asked),
            _ => None,
        }
        .filter(|&asked| line.is_some_and(|l| l != asked));
        for a in addresses {
            let name = self.dbg.function_name(&a);
            let at = |offset: u32| format!("{}.{name}+0x{offset:08X} <{name}+{offset}>", a.module);
            let positions = self.dbg.instruction_positions(a.module_index, a.function);
            if let Some(asked) = asked {
                let file = positions
                    .get(&a.offset)
                    .map(|p| p.file.clone())
                    .unwrap_or_default();
                outln!(
                    "Line {asked} of \"{file}\" is at address {} but contains no code.",
                    at(a.offset)
                );
                continue;
            }
            let Some(here) = positions.get(&a.offset) else {
                outln!(
                    "No line number information available for address {}",
                    at(a.offset)
                );
                continue;
            };
            let (offsets, length) = self.dbg.instruction_offsets(a.module_index, a.function);
            let same_line = |offset: &u32| {
                positions
                    .get(offset)
                    .is_some_and(|p| p.file == here.file && p.line == here.line)
            };
            let k = offsets.partition_point(|&o| o < a.offset);
            let start = offsets[..k]
                .iter()
                .rev()
                .take_while(|o| same_line(o))
                .last()
                .copied()
                .unwrap_or(a.offset);
            let end = offsets[k..]
                .iter()
                .find(|o| !same_line(o))
                .copied()
                .unwrap_or(length);
            outln!(
                "Line {} of \"{}\" starts at address {} and ends at {}.",
                here.line,
                here.file,
                at(start),
                at(end)
            );
        }
        Ok(())
    }

    fn info_args(&self) -> Result<(), String> {
        self.require_frames()?;
        let args = self
            .dbg
            .arguments(self.dbg.selected_frame())
            .map_err(|e| e.to_string())?;
        if args.is_empty() {
            outln!("No arguments.");
        }
        for (r, v) in args {
            outln!("{r} = {}", self.dbg.format_value(&v, Format::Natural));
        }
        Ok(())
    }

    /// `info breakpoints`, or with `only_watchpoints` `info watchpoints`.
    fn info_breakpoints(&self, only_watchpoints: bool) {
        let mut bps = self.dbg.breakpoints();
        if only_watchpoints {
            bps.clear();
        }
        let watchpoints = self.dbg.watchpoints();
        if bps.is_empty() && watchpoints.is_empty() {
            outln!(
                "{}",
                if only_watchpoints {
                    "No watchpoints."
                } else {
                    "No breakpoints or watchpoints."
                }
            );
            return;
        }
        let hits = |n: u32| match n {
            0 => None,
            1 => Some("\tbreakpoint already hit 1 time".to_string()),
            n => Some(format!("\tbreakpoint already hit {n} times")),
        };
        // (number, lines), listed by number as gdb lists them.
        let mut rows: Vec<(u32, Vec<String>)> = Vec::new();
        for b in bps {
            let places: Vec<String> = b
                .addresses
                .iter()
                .map(|a| self.describe_address(a))
                .collect();
            let mut lines = vec![format!(
                "{:<7} {:<14} {:<4} {:<3} {}",
                b.id,
                "breakpoint",
                if b.temporary { "del" } else { "keep" },
                if b.enabled { "y" } else { "n" },
                places.join("; ")
            )];
            if let Some(c) = &b.condition {
                lines.push(format!("\tstop only if {}", c.text()));
            }
            if let Some(h) = &b.hit_condition {
                lines.push(format!("\tstop only on hits {h:?}"));
            }
            lines.extend(hits(b.hits));
            if b.ignore_count > 0 {
                lines.push(format!(
                    "\tWill ignore next {} crossings of breakpoint.",
                    b.ignore_count
                ));
            }
            for command in self.breakpoint_commands.get(&b.id).into_iter().flatten() {
                lines.push(format!("        {command}"));
            }
            rows.push((b.id, lines));
        }
        let depth = self.dbg.frames().len();
        for w in watchpoints {
            let mut lines = vec![format!(
                "{:<7} {:<14} {:<4} {:<3} {} in {} (frame #{})",
                w.id,
                match w.kind {
                    WatchKind::Write => "watchpoint",
                    WatchKind::Read => "read watchpoint",
                    WatchKind::Access => "acc watchpoint",
                },
                "keep",
                if w.enabled { "y" } else { "n" },
                self.watch_labels
                    .get(&w.id)
                    .cloned()
                    .unwrap_or_else(|| w.register.to_string()),
                w.function_name,
                depth.saturating_sub(w.depth)
            )];
            if let Some(c) = &w.condition {
                lines.push(format!("\tstop only if {}", c.text()));
            }
            lines.extend(hits(w.hits));
            for command in self.breakpoint_commands.get(&w.id).into_iter().flatten() {
                lines.push(format!("        {command}"));
            }
            rows.push((w.id, lines));
        }
        rows.sort_by_key(|(id, _)| *id);
        outln!("Num     Type           Disp Enb What");
        for (_, lines) in rows {
            for line in lines {
                outln!("{line}");
            }
        }
    }

    /// Registers of the selected frame, typed by how the function uses
    /// them: all, or those `names` names, each shown as it is reached (as
    /// `print` names them: `%i3`, `%i2:3`, `%r0`, a source name, or a
    /// register's name without its `%`, as gdb takes `rip` beside `$rip`;
    /// gdb's `Invalid register` for another word).
    fn info_registers(&mut self, names: &str) -> Result<(), String> {
        self.require_frames()?;
        let frame = self.dbg.selected_frame();
        if names.is_empty() {
            let regs = self.dbg.registers(frame).map_err(|e| e.to_string())?;
            for (r, v) in regs {
                self.show_register(r, &v);
            }
            return Ok(());
        }
        for name in names.split_whitespace() {
            let invalid = || format!("Invalid register `{name}'");
            let spelled = if name.starts_with('%') {
                name.to_string()
            } else {
                format!("%{name}")
            };
            let register = match irvm_debugger::RegisterRef::parse(&spelled) {
                Ok(r) => r,
                Err(_) => match self.names_here().register(&spelled) {
                    Some(Ok(r)) => r,
                    _ => return Err(invalid()),
                },
            };
            let value = self
                .dbg
                .evaluate(&register.to_string(), frame)
                .map_err(|_| invalid())?;
            self.show_register(register, &value);
        }
        Ok(())
    }

    /// One line of `info registers`: the register, its type, its value.
    fn show_register(&self, r: irvm_debugger::RegisterRef, v: &irvm_debugger::DebugValue) {
        let ty = match v {
            irvm_debugger::DebugValue::Ref(_) => "ref".to_string(),
            other => other.type_name(),
        };
        outln!(
            "{:<8} {ty:<4} {}",
            r.to_string(),
            self.dbg.format_value(v, Format::Natural)
        );
    }

    /// `list` with gdb's arguments: none (around the stop, or on from the
    /// last listing), `A,B`, `LINE`, `FILE:LINE`, `FUNCTION`.
    fn list(&mut self, rest: &str) -> Result<(), String> {
        let not_found = |file: &str| format!("source file `{file}` not found (use --source-dir)");
        let default_file = || {
            self.dbg.default_source_file().ok_or_else(|| {
                "no source file known (the module has no debug information)".to_string()
            })
        };
        let current = self
            .dbg
            .selected_location()
            .and_then(|(_, p)| p)
            .map(|p| (p.file, p.line));
        let (file, first, last) = if rest.is_empty() {
            match (&self.list_next, &current) {
                (Some((f, next)), _) => (f.clone(), *next, next.saturating_add(9)),
                (None, Some((f, line))) => {
                    let first = line.saturating_sub(5).max(1);
                    (f.clone(), first, first.saturating_add(9))
                }
                (None, None) => {
                    if !self.dbg.is_running() {
                        let file = default_file()?;
                        (file, 1, 10)
                    } else {
                        return Err(
                            "no source position here (the module has no debug information)".into(),
                        );
                    }
                }
            }
        } else if let Some((a, b)) = rest.split_once(',') {
            let file = match &current {
                Some((f, _)) => f.clone(),
                None => default_file()?,
            };
            let a: i32 = a
                .trim()
                .parse()
                .map_err(|_| format!("`{}` is not a line number", a.trim()))?;
            let b: i32 = b
                .trim()
                .parse()
                .map_err(|_| format!("`{}` is not a line number", b.trim()))?;
            if b < a {
                return Err(format!("bad range {a},{b}"));
            }
            (file, a.max(1), b)
        } else {
            // (`LINE` and `FILE:LINE` as the other commands read them:
            // past 32 bits wrapped, as gdb's.)
            let numbered = match self.dbg.line_spec(rest) {
                Some(Ok((f, line, _))) if !rest.starts_with(['+', '-']) => Some((f, line)),
                _ => None,
            };
            let (file, center) = if let Some((f, line)) = numbered {
                let file = match &current {
                    Some((here, _)) if !rest.contains(':') => here.clone(),
                    _ => f,
                };
                (file, line)
            } else if let Ok(line) = rest.parse::<i32>() {
                let file = match &current {
                    Some((f, _)) => f.clone(),
                    None => default_file()?,
                };
                (file, line)
            } else if let Some((f, l)) = rest.rsplit_once(':') {
                let line: i32 = l
                    .trim()
                    .parse()
                    .map_err(|_| format!("`{l}` is not a line number"))?;
                (f.to_string(), line)
            } else {
                let p = self
                    .dbg
                    .function_position(rest)
                    .map_err(|e| e.to_string())?;
                (p.file, p.line)
            };
            let first = center.saturating_sub(5).max(1);
            (file, first, first.saturating_add(9))
        };
        let lines = self.source(&file).ok_or_else(|| not_found(&file))?.clone();
        let total = lines.len() as i32;
        if first > total {
            return Err(format!(
                "Line number {first} out of range; {file} has {total} lines."
            ));
        }
        let mark = current
            .as_ref()
            .filter(|(f, _)| *f == file)
            .map(|(_, l)| *l);
        for n in first..=last.min(total) {
            if let Some(text) = lines.get(n as usize - 1) {
                let m = if Some(n) == mark { "=>" } else { "  " };
                outln!("{m}{n}\t{text}");
            }
        }
        self.last_listed = Some((file.clone(), first));
        self.list_next = Some((file, last.min(total).saturating_add(1)));
        Ok(())
    }

    fn disassemble(&self) -> Result<(), String> {
        let (a, _) = self
            .dbg
            .selected_location()
            .ok_or("the program is not being run (use `run`)")?;
        let lines = self
            .dbg
            .disassemble(a.module_index, a.function)
            .map_err(|e| e.to_string())?;
        outln!("Dump of {}:", self.dbg.function_name(&a));
        for (offset, text) in lines {
            let mark = if offset == a.offset { "=>" } else { "  " };
            outln!("{mark} {offset:08X}  {text}");
        }
        Ok(())
    }
}

/// Largest source file `list` and stops show lines of.
const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The text of a source file a module's debug locations name, if it is a
/// regular file of at most [`MAX_SOURCE_BYTES`] (a location may name
/// `/dev/zero`, a FIFO or a huge file: those are not read).
pub fn read_source(path: &Path) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_SOURCE_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}
