//! `irvm dbg`: an interactive source-level debugger with gdb's command
//! words, over [`irvm::debugger::Debugger`]. In a terminal it edits lines
//! and keeps history (rustyline); otherwise, or with `--batch FILE`, it
//! reads one command per line, echoing each after the `(irvm) ` prompt, so
//! sessions can be scripted and tested.

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use irvm::debugger::{CodeAddress, Debugger, Stop};
use irvm::disasm::Disassembler;
use irvm::isa::Bank;
use irvm::Value;

use crate::cmd_run::{describe_trap, load_context, parse_input, LimitArgs};

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
    /// Read commands from FILE instead of the terminal.
    #[arg(long)]
    batch: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Runs `irvm dbg`.
pub fn main(args: DbgArgs) -> ExitCode {
    match session(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("irvm dbg: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Where commands come from.
enum Input {
    Editor(Box<rustyline::DefaultEditor>),
    Lines(Box<dyn BufRead>),
}

impl Input {
    /// The next command line, `None` at the end.
    fn next(&mut self) -> Option<String> {
        match self {
            Input::Editor(ed) => match ed.readline("(irvm) ") {
                Ok(line) => {
                    let _ = ed.add_history_entry(line.as_str());
                    Some(line)
                }
                Err(_) => None,
            },
            Input::Lines(r) => {
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => {
                        let line = line.trim_end_matches(['\n', '\r']).to_string();
                        outln!("(irvm) {line}");
                        Some(line)
                    }
                }
            }
        }
    }
}

/// The session's state besides the debugger.
struct Session {
    dbg: Debugger,
    source_dirs: Vec<PathBuf>,
    sources: HashMap<String, Option<Vec<String>>>,
    function: String,
}

/// Runs the command loop; `Ok(false)` when a command failed in batch mode.
fn session(args: &DbgArgs) -> Result<bool, String> {
    let ctx = load_context(&args.modules, &args.limits)?;
    let main_module = ctx
        .module_names()
        .last()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let name = args.function.trim_start_matches('@').to_string();
    let func = ctx
        .function(&format!("{main_module}.{name}"))
        .map_err(|e| e.to_string())?;
    let kinds = crate::cmd_run::input_kinds(&func);
    if args.inputs.len() != kinds.len() {
        return Err(format!(
            "INVALID_ARGUMENT; `{name}` expects {} arguments but {} --input were given",
            kinds.len(),
            args.inputs.len()
        ));
    }
    let values: Vec<Value> = args
        .inputs
        .iter()
        .zip(&kinds)
        .map(|(t, &k)| parse_input(t, k))
        .collect::<Result<_, _>>()?;
    let mut source_dirs = args.source_dirs.clone();
    for m in &args.modules {
        if let Some(dir) = Path::new(m).parent() {
            source_dirs.push(dir.to_path_buf());
        }
    }
    source_dirs.push(PathBuf::from("."));
    let mut s = Session {
        dbg: Debugger::new(ctx, func, values),
        source_dirs,
        sources: HashMap::new(),
        function: name,
    };
    let interactive = args.batch.is_none() && std::io::stdin().is_terminal();
    let mut input = match &args.batch {
        Some(path) => {
            let f = std::fs::File::open(path)
                .map_err(|e| format!("cannot read --batch file {}: {e}", path.display()))?;
            Input::Lines(Box::new(std::io::BufReader::new(f)))
        }
        None if interactive => match rustyline::DefaultEditor::new() {
            Ok(ed) => Input::Editor(Box::new(ed)),
            Err(_) => Input::Lines(Box::new(std::io::BufReader::new(std::io::stdin()))),
        },
        None => Input::Lines(Box::new(std::io::BufReader::new(std::io::stdin()))),
    };
    let mut all_ok = true;
    let mut last = String::new();
    while let Some(line) = input.next() {
        let mut line = line.trim().to_string();
        if line.is_empty() && interactive {
            line = last.clone();
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        last = line.clone();
        match s.command(&line) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Quit) => break,
            Err(message) => {
                outln!("error: {message}");
                all_ok = interactive;
            }
        }
    }
    Ok(all_ok)
}

/// Whether to keep reading commands.
enum Flow {
    Continue,
    Quit,
}

const HELP: &str = "\
commands (gdb's words):
  break FILE:LINE | FUNCTION | *OFFSET   set a breakpoint (b)
  delete [N]                             delete breakpoint N, or all
  info breakpoints | registers | frame   show breakpoints, registers (i r), the frame
  run                                    start the program (r)
  continue                               run to the next breakpoint (c)
  step | next                            next source line, into / over calls (s, n)
  stepi                                  one instruction (si)
  finish                                 run until the current function returns
  backtrace                              the call stack (bt, where)
  print %iN | %iN:M | %rN                a register (p)
  list                                   source lines around the current one (l)
  disassemble                            the current function, `=>` at the current instruction
  quit                                   leave (q)";

impl Session {
    fn command(&mut self, line: &str) -> Result<Flow, String> {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let e = |e: irvm::debugger::DebugCommandError| e.to_string();
        match word {
            "break" | "b" | "br" => {
                let b = self.dbg.set_breakpoint(rest).map_err(e)?;
                let n = b.addresses.len();
                let first = &b.addresses[0];
                outln!(
                    "Breakpoint {} at {} ({n} location{})",
                    b.id,
                    self.describe_address(first),
                    if n == 1 { "" } else { "s" }
                );
            }
            "delete" | "d" => {
                let id = if rest.is_empty() {
                    None
                } else {
                    Some(
                        rest.parse()
                            .map_err(|_| format!("`{rest}` is not a breakpoint number"))?,
                    )
                };
                self.dbg.delete_breakpoint(id).map_err(e)?;
            }
            "run" | "r" => {
                let stop = self.dbg.run().map_err(e)?;
                self.report(stop);
            }
            "continue" | "c" | "cont" => {
                let stop = self.dbg.continue_().map_err(e)?;
                self.report(stop);
            }
            "step" | "s" => {
                let stop = self.dbg.step().map_err(e)?;
                self.report(stop);
            }
            "next" | "n" => {
                let stop = self.dbg.step_over().map_err(e)?;
                self.report(stop);
            }
            "stepi" | "si" => {
                let stop = self.dbg.step_instruction().map_err(e)?;
                self.report(stop);
            }
            "finish" | "fin" => {
                let stop = self.dbg.finish().map_err(e)?;
                self.report(stop);
            }
            "backtrace" | "bt" | "where" => self.backtrace()?,
            "info" | "i" => match rest {
                "breakpoints" | "b" | "break" => self.info_breakpoints(),
                "registers" | "r" | "reg" => self.info_registers()?,
                "frame" | "f" => self.info_frame()?,
                _ => {
                    return Err(format!(
                        "unknown info command `{rest}` (breakpoints, registers, frame)"
                    ))
                }
            },
            "print" | "p" => self.print(rest)?,
            "list" | "l" => self.list()?,
            "disassemble" | "disas" => self.disassemble()?,
            "help" | "h" => outln!("{HELP}"),
            "quit" | "q" | "exit" => return Ok(Flow::Quit),
            _ => return Err(format!("unknown command `{word}` (try `help`)")),
        }
        Ok(Flow::Continue)
    }

    /// `fib (module.fib+0x00000033) at fib.mlir:9:10`.
    fn describe_address(&self, a: &CodeAddress) -> String {
        let name = self.dbg.function_name(a);
        let at = match self.dbg.position_of(a) {
            Some(p) => format!(" at {p}"),
            None => String::new(),
        };
        format!("{name} ({}.{name}+0x{:08X}){at}", a.module, a.offset)
    }

    fn report(&mut self, stop: Stop) {
        match stop {
            Stop::Breakpoint(id) => {
                outln!();
                self.show_current(&format!("Breakpoint {id}, "));
            }
            Stop::Step => self.show_current(""),
            Stop::Finished(values) => {
                outln!("[{} returned]", self.function);
                for (i, v) in values.iter().enumerate() {
                    outln!("result[{i}]: {v}");
                }
            }
            Stop::Trapped(trap) => {
                outln!("[{} failed]", self.function);
                outln!("{}", describe_trap("dbg", &trap));
            }
        }
    }

    /// The stop line, then the source line (or the instruction).
    fn show_current(&mut self, prefix: &str) {
        let Some((a, pos)) = self.dbg.current() else {
            return;
        };
        outln!("{prefix}{}", self.describe_address(&a));
        let source = pos.as_ref().and_then(|p| {
            self.source_line(&p.file, p.line)
                .map(|t| format!("{}\t{t}", p.line))
        });
        match source {
            Some(text) => outln!("{text}"),
            None => {
                if let Some(text) = self.instruction_text(&a) {
                    outln!("=> {text}");
                }
            }
        }
    }

    fn instruction_text(&self, a: &CodeAddress) -> Option<String> {
        let (_, m) = self
            .dbg
            .context()
            .bytecode_modules()
            .into_iter()
            .find(|(n, _)| *n == a.module)?;
        Disassembler::new(m)
            .instruction_text(a.function as usize, a.offset, None)
            .ok()
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

    fn require_frames(&self) -> Result<Vec<irvm::FrameInfo>, String> {
        let frames = self.dbg.frames();
        if frames.is_empty() {
            return Err("the program is not being run (use `run`)".into());
        }
        Ok(frames)
    }

    fn backtrace(&self) -> Result<(), String> {
        for (k, f) in self.require_frames()?.iter().enumerate() {
            outln!("#{k}  {}", f.frame);
        }
        Ok(())
    }

    fn info_frame(&self) -> Result<(), String> {
        let frames = self.require_frames()?;
        let f = &frames[0];
        outln!("frame #0: {}", f.frame);
        outln!(
            "{} i32 register slots, {} ref registers",
            f.i32s.len(),
            f.refs.len()
        );
        Ok(())
    }

    fn info_breakpoints(&self) {
        let bps = self.dbg.breakpoints();
        if bps.is_empty() {
            outln!("No breakpoints.");
            return;
        }
        outln!("Num  What");
        for b in bps {
            let places: Vec<String> = b
                .addresses
                .iter()
                .map(|a| self.describe_address(a))
                .collect();
            outln!("{:<4} {}  [{}]", b.id, b.spec, places.join("; "));
        }
    }

    /// Registers of the current frame, typed by how the function uses them.
    fn info_registers(&self) -> Result<(), String> {
        let frames = self.require_frames()?;
        let f = &frames[0];
        let banks = self
            .dbg
            .register_banks(&f.frame.module, f.frame.ordinal.unwrap_or(0));
        let mut r = 0usize;
        while r < f.i32s.len() {
            let bank = banks.get(&(r as u16)).copied().unwrap_or(Bank::I32);
            let (name, text, width) = register_value(&f.i32s, r, bank);
            outln!("{name:<8} {:<4} {text}", bank.name());
            r += width;
        }
        for (k, v) in f.refs.iter().enumerate() {
            outln!("{:<8} ref  {v}", format!("%r{k}"));
        }
        Ok(())
    }

    fn print(&self, what: &str) -> Result<(), String> {
        let frames = self.require_frames()?;
        let f = &frames[0];
        let bad = || format!("cannot print `{what}`: expected %iN, %iN:M or %rN");
        if let Some(n) = what.strip_prefix("%r") {
            let k: usize = n.parse().map_err(|_| bad())?;
            let v = f.refs.get(k).ok_or_else(|| {
                format!(
                    "%r{k} is out of range (the frame has {} ref registers)",
                    f.refs.len()
                )
            })?;
            outln!("%r{k} = {v}");
            return Ok(());
        }
        let body = what.strip_prefix("%i").ok_or_else(bad)?;
        let (k, pair) = match body.split_once(':') {
            Some((a, b)) => {
                let a: usize = a.parse().map_err(|_| bad())?;
                let b: usize = b.parse().map_err(|_| bad())?;
                if Some(b) != a.checked_add(1) {
                    return Err(format!("`{what}` is not a register pair (%iN:N+1)"));
                }
                (a, true)
            }
            None => (body.parse().map_err(|_| bad())?, false),
        };
        if k.saturating_add(usize::from(pair)) >= f.i32s.len() {
            return Err(format!(
                "{what} is out of range (the frame has {} i32 registers)",
                f.i32s.len()
            ));
        }
        let banks = self
            .dbg
            .register_banks(&f.frame.module, f.frame.ordinal.unwrap_or(0));
        let bank = match (pair, banks.get(&(k as u16))) {
            (true, Some(Bank::F64)) => Bank::F64,
            (true, _) => Bank::I64,
            (false, Some(Bank::F32)) => Bank::F32,
            (false, _) => Bank::I32,
        };
        let (name, text, _) = register_value(&f.i32s, k, bank);
        outln!("{name} = {text}");
        Ok(())
    }

    fn list(&mut self) -> Result<(), String> {
        let (_, pos) = self
            .dbg
            .current()
            .ok_or("the program is not being run (use `run`)")?;
        let pos = pos.ok_or("no source position here (the module has no debug information)")?;
        let first = pos.line.saturating_sub(5).max(1);
        let file = pos.file.clone();
        let lines = self
            .source(&file)
            .ok_or_else(|| format!("source file `{file}` not found (use --source-dir)"))?
            .clone();
        for n in first..first.saturating_add(10) {
            if let Some(text) = lines.get(n as usize - 1) {
                let mark = if n == pos.line { "=>" } else { "  " };
                outln!("{mark}{n}\t{text}");
            }
        }
        Ok(())
    }

    fn disassemble(&self) -> Result<(), String> {
        let (a, _) = self
            .dbg
            .current()
            .ok_or("the program is not being run (use `run`)")?;
        let ctx = self.dbg.context();
        let (_, m) = ctx
            .bytecode_modules()
            .into_iter()
            .find(|(n, _)| *n == a.module)
            .ok_or("module not found")?;
        let lines = Disassembler::new(m)
            .function_lines(a.function as usize, None)
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
fn read_source(path: &Path) -> Option<String> {
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

/// A register's name, its value as text and how many slots it spans.
fn register_value(slots: &[u32], r: usize, bank: Bank) -> (String, String, usize) {
    let lo = slots.get(r).copied().unwrap_or(0);
    let hi = slots.get(r + 1).copied();
    match (bank, hi) {
        (Bank::I64, Some(hi)) => {
            let v = (lo as u64 | (hi as u64) << 32) as i64;
            (format!("%i{r}:{}", r + 1), format!("{v}"), 2)
        }
        (Bank::F64, Some(hi)) => {
            let v = f64::from_bits(lo as u64 | (hi as u64) << 32);
            (format!("%i{r}:{}", r + 1), irvm::format_g(v), 2)
        }
        (Bank::F32, _) => (
            format!("%i{r}"),
            irvm::format_g(f32::from_bits(lo) as f64),
            1,
        ),
        _ => (format!("%i{r}"), format!("{}", lo as i32), 1),
    }
}
