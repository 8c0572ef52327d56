//! Driving `irvm dbg` as gdb users drive gdb: `-ex` and `-x` on the
//! command line (gdb's single-dash spellings too), command files
//! (`source FILE`: the first error ends the file, as gdb ends one), and
//! user commands (`define NAME` ... `end`, `$arg0`... and `$argc`,
//! `document`), over the lines of a [`LineSource`].

use std::path::{Path, PathBuf};

use super::{list_numbers, CommandList, DbgArgs, Flow, Input, Session, COMMANDS};
use irvm_debugger::PauseHandle;

/// gdb's single-dash spellings of its long options, as `irvm dbg` takes
/// them (`-ex CMD`, `-eval-command CMD`, `-command FILE`, `-batch`):
/// `args` (program name first, then the subcommand) with those of the
/// `dbg` subcommand written with two dashes, each `-ex`'s command joined
/// to it (`--eval-command=CMD`, so a command starting with `-` stays a
/// value). Other subcommands' arguments are returned unchanged.
pub fn gdb_spellings(args: Vec<String>) -> Vec<String> {
    let sub_at = args
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-'))
        .map(|p| p + 1)
        .filter(|&at| args[at] == "dbg");
    let Some(sub_at) = sub_at else {
        return args;
    };
    let mut out = Vec::with_capacity(args.len());
    let mut words = args.into_iter().enumerate();
    while let Some((k, arg)) = words.next() {
        if k <= sub_at {
            out.push(arg);
            continue;
        }
        if arg == "--" {
            out.push(arg);
            out.extend(words.map(|(_, a)| a));
            break;
        }
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let long = match name {
            "-ex" | "-eval-command" => "eval-command",
            "-command" => "command",
            "-batch" => "batch",
            _ => {
                out.push(arg);
                continue;
            }
        };
        match value {
            Some(v) => out.push(format!("--{long}={v}")),
            // `-ex CMD`: the next word is the command, whatever it is.
            None if long != "batch" => match words.next() {
                Some((_, v)) => out.push(format!("--{long}={v}")),
                None => out.push(format!("--{long}")), // clap reports it
            },
            None => out.push(format!("--{long}")),
        }
    }
    out
}

impl DbgArgs {
    /// Puts the `-ex` commands and the `-x` files (as `source FILE`) in
    /// the order of the command line (`matches`: the subcommand's),
    /// which clap keeps apart.
    pub fn order_startup(&mut self, matches: Option<&clap::ArgMatches>) {
        let indices = |id: &str| -> Vec<usize> {
            matches
                .and_then(|m| m.indices_of(id))
                .map(|i| i.collect())
                .unwrap_or_default()
        };
        let mut ordered: Vec<(usize, String)> = Vec::new();
        let commands = indices("eval_commands");
        for (k, c) in self.eval_commands.iter().enumerate() {
            ordered.push((commands.get(k).copied().unwrap_or(k), c.clone()));
        }
        let files = indices("command_files");
        for (k, f) in self.command_files.iter().enumerate() {
            let at = files.get(k).copied().unwrap_or(usize::MAX / 2 + k);
            ordered.push((at, format!("source {}", f.display())));
        }
        ordered.sort_by_key(|(at, _)| *at);
        self.startup = ordered.into_iter().map(|(_, c)| c).collect();
    }
}

/// Where the lines of a command file, a `-ex`, a user command's body or
/// the session's input come from, for the commands that read lines after
/// them up to `end` (`commands`, `define`, `document`).
pub(super) trait LineSource {
    /// The next line, `None` at the end.
    fn next_line(&mut self) -> Option<String>;
    /// Whether a person types the lines (told what to type for a body).
    fn is_terminal(&self) -> bool {
        false
    }
}

/// Lines given whole: a command file, a user command's body, a
/// breakpoint's command list (not echoed, as gdb does not echo them).
pub(super) struct Script<I>(pub(super) I);

impl<I: Iterator<Item = String>> LineSource for Script<I> {
    fn next_line(&mut self) -> Option<String> {
        self.0.next()
    }
}

/// The session's own input (the terminal, stdin or `--batch FILE`).
pub(super) struct Prompted<'a> {
    pub(super) input: &'a mut Input,
    pub(super) pause: &'a PauseHandle,
    pub(super) interactive: bool,
}

impl LineSource for Prompted<'_> {
    fn next_line(&mut self) -> Option<String> {
        self.input.next(self.pause)
    }
    fn is_terminal(&self) -> bool {
        self.interactive
    }
}

/// A user command's body with its arguments put in (`$arg0`, `$argc`),
/// line by line as it runs: a line naming a missing argument ends it
/// with that error, as gdb reports it when the line is reached.
struct UserBody<'a> {
    lines: std::slice::Iter<'a, String>,
    args: Vec<String>,
    error: Option<String>,
}

impl LineSource for UserBody<'_> {
    fn next_line(&mut self) -> Option<String> {
        let line = self.lines.next()?;
        match substitute_user_args(line, &self.args) {
            Ok(line) => Some(line),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

/// Most user commands and command files running inside each other
/// (`source` of a file that sources itself, a user command that calls
/// itself): gdb's `max-user-call-depth` is 1024, this keeps well inside
/// the main thread's stack.
const MAX_NESTING: usize = 64;

/// The error of a command file or user command one deeper than
/// [`MAX_NESTING`].
fn depth_exceeded() -> String {
    format!(
        "Max user call depth exceeded -- command aborted ({MAX_NESTING} user commands and \
         command files inside each other)."
    )
}

/// `line` with `$argc` and `$argN` replaced by the user command's
/// arguments, as gdb replaces them.
fn substitute_user_args(line: &str, args: &[String]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("$arg") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 4..];
        if let Some(tail) = after.strip_prefix('c') {
            out.push_str(&args.len().to_string());
            rest = tail;
            continue;
        }
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            out.push_str("$arg");
            rest = after;
            continue;
        }
        let n: usize = after[..digits]
            .parse()
            .map_err(|_| format!("argument number `{}` is too large", &after[..digits]))?;
        let value = args
            .get(n)
            .ok_or_else(|| format!("Missing argument {n} in user function."))?;
        out.push_str(value);
        rest = &after[digits..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A user command's arguments as gdb splits them: at blanks outside
/// quotes (`"a b"`, `'a b'`, kept with their quotes) and parentheses.
fn split_user_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            current.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' => {
                current.push(c);
                escaped = true;
            }
            '"' | '\'' if quote == Some(c) => {
                quote = None;
                current.push(c);
            }
            '"' | '\'' if quote.is_none() => {
                quote = Some(c);
                current.push(c);
            }
            '(' if quote.is_none() => {
                depth += 1;
                current.push(c);
            }
            ')' if quote.is_none() => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if c.is_whitespace() && quote.is_none() && depth == 0 => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// A command defined with `define NAME` ... `end`.
#[derive(Clone, Default)]
pub(super) struct UserCommand {
    /// Its lines, `$argN` and `$argc` still in them.
    body: Vec<String>,
    /// Its `document` text, shown by `help NAME`.
    doc: Vec<String>,
}

/// Whether `name` can name a user command: letters, digits, `-` and `_`,
/// as gdb's command names.
fn valid_command_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Session {
    /// Shows a failed command's message; in a scripted session the exit
    /// code becomes 1.
    pub(super) fn report_error(&mut self, message: &str) {
        outln!("error: {message}");
        if !self.interactive {
            self.failed = true;
        }
    }

    /// Runs one command line read from `src` (which gives the lines a
    /// `commands`, `define` or `document` takes), then the command lists
    /// of the breakpoints it stopped at.
    pub(super) fn execute(&mut self, line: &str, src: &mut dyn LineSource) -> Result<Flow, String> {
        let flow = self.command(line)?;
        match self.take_body(flow, src) {
            Flow::Continue => self.run_breakpoint_commands(),
            other => Ok(other),
        }
    }

    /// Reads from `src` the lines up to `end` that `flow` asks for and
    /// keeps them where they belong; other flows are returned as they are.
    pub(super) fn take_body(&mut self, flow: Flow, src: &mut dyn LineSource) -> Flow {
        let (prompt, nests) = match &flow {
            Flow::ReadCommands(ids) => (
                format!(
                    "Type commands for breakpoint(s) {}, one per line.",
                    list_numbers(ids)
                ),
                true,
            ),
            Flow::Define(name) => (format!("Type commands for definition of \"{name}\"."), true),
            // Documentation is text: its lines open nothing.
            Flow::Document(name) => (format!("Type documentation for \"{name}\"."), false),
            Flow::Continue | Flow::Quit => return flow,
        };
        if src.is_terminal() {
            outln!("{prompt}");
            outln!("End with a line saying just \"end\".");
        }
        let mut list = CommandList::default();
        while let Some(line) = src.next_line() {
            let line = line.trim();
            if !nests && line == "end" {
                break;
            }
            if !nests {
                list.lines.push(line.to_string());
            } else if !list.read(line) {
                break;
            }
        }
        match flow {
            Flow::ReadCommands(ids) => self.set_command_list(&ids, list.lines),
            Flow::Define(name) => {
                let doc = self
                    .user_commands
                    .remove(&name)
                    .map(|c| c.doc)
                    .unwrap_or_default();
                self.user_commands.insert(
                    name,
                    UserCommand {
                        body: list.lines,
                        doc,
                    },
                );
            }
            Flow::Document(name) => {
                if let Some(c) = self.user_commands.get_mut(&name) {
                    c.doc = list.lines;
                }
            }
            Flow::Continue | Flow::Quit => {}
        }
        Flow::Continue
    }

    /// Runs the lines of `src` (a command file, a user command's body):
    /// the first that fails ends them with its error, as gdb ends a
    /// command file at an error; `quit` ends the session.
    fn run_lines(&mut self, src: &mut dyn LineSource) -> Result<Flow, String> {
        if self.nesting >= MAX_NESTING {
            return Err(depth_exceeded());
        }
        self.nesting += 1;
        self.trace_depth += 1;
        let result = self.run_lines_nested(src);
        self.trace_depth -= 1;
        self.nesting -= 1;
        result
    }

    fn run_lines_nested(&mut self, src: &mut dyn LineSource) -> Result<Flow, String> {
        while let Some(line) = src.next_line() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if self.source_verbose {
                // gdb's command trace: a `+` per level (a user command's
                // body one deeper than the line that ran it).
                outln!("{}{line}", "+".repeat(self.trace_depth));
            }
            if let Flow::Quit = self.execute(line, src)? {
                return Ok(Flow::Quit);
            }
        }
        Ok(Flow::Continue)
    }

    /// `source [-s] [-v] FILE` (and `-x FILE`): runs the file's commands, up
    /// to the first that fails, whose error names the file and line. The
    /// file is looked for as gdb looks for a command file: as named, then
    /// (for a name without a `/`, or any with `-s`) in each `--source-dir`
    /// directory, gdb's source path ([`find_command_file`]). With `-v`
    /// each command is shown before it runs, after a `+` (gdb's verbose
    /// mode, which lasts while the file runs, into the files it sources).
    /// The options are read as gdb reads them: `-s` and `-v`, each
    /// followed by a blank, in any order; any other word starting with `-`
    /// begins the file's name.
    pub(super) fn source_commands(&mut self, rest: &str) -> Result<Flow, String> {
        let (mut search, mut verbose, mut path) = (false, false, rest.trim_start());
        loop {
            let mut chars = path.chars();
            match (chars.next(), chars.next(), chars.next()) {
                (Some('-'), Some('s'), Some(c)) if c.is_whitespace() => search = true,
                (Some('-'), Some('v'), Some(c)) if c.is_whitespace() => verbose = true,
                _ => break,
            }
            path = path[3..].trim_start();
        }
        let path = path.trim_end();
        let outer = (self.source_verbose, self.trace_depth);
        self.source_verbose |= verbose;
        // A file's commands are one `+` deep, however deep it is sourced.
        self.trace_depth = 0;
        let result = self.source_file(path, search);
        (self.source_verbose, self.trace_depth) = outer;
        result
    }

    /// Runs command file `path` (searched for as `source -s` when `search`).
    fn source_file(&mut self, path: &str, search: bool) -> Result<Flow, String> {
        if path.is_empty() {
            return Err("source command requires file name of file to source.".into());
        }
        if self.nesting >= MAX_NESTING {
            return Err(depth_exceeded());
        }
        let found = find_command_file(path, search, &self.script_dirs);
        let text = read_command_file(&found, path)?;
        let mut numbered = text.lines().map(str::to_string).enumerate();
        let at = std::rc::Rc::new(std::cell::Cell::new(0usize));
        let seen = at.clone();
        let mut lines = Script(std::iter::from_fn(move || {
            let (n, line) = numbered.next()?;
            seen.set(n + 1);
            Some(line)
        }));
        self.run_lines(&mut lines)
            .map_err(|e| format!("{path}:{}: Error in sourced command file:\n{e}", at.get()))
    }

    /// Runs user command `name` with the arguments in `rest`.
    pub(super) fn run_user_command(&mut self, name: &str, rest: &str) -> Result<Flow, String> {
        let Some(command) = self.user_commands.get(name).cloned() else {
            return Err(format!("unknown command `{name}` (try `help`)"));
        };
        let mut body = UserBody {
            lines: command.body.iter(),
            args: split_user_args(rest),
            error: None,
        };
        let flow = self.run_lines(&mut body)?;
        match body.error {
            Some(e) => Err(e),
            None => Ok(flow),
        }
    }

    /// `define NAME`: its body follows, up to `end`.
    pub(super) fn define(&mut self, rest: &str) -> Result<Flow, String> {
        if rest.is_empty() {
            return Err("Argument required (name of command to define).".into());
        }
        if !valid_command_name(rest) {
            return Err(format!(
                "`{rest}` is not a command name (letters, digits, `-` and `_`)"
            ));
        }
        if matches!(rest, "define" | "document" | "end" | "source") {
            return Err(format!("`{rest}` cannot be redefined"));
        }
        // gdb asks before a user command replaces another, and before one
        // shadows a built-in command (not an abbreviation: `define p`
        // asks nothing there either).
        let question = if self.user_commands.contains_key(rest) {
            Some(format!("Redefine command \"{rest}\"?"))
        } else if COMMANDS.contains(&rest) {
            Some(format!("Really redefine built-in command \"{rest}\"?"))
        } else {
            None
        };
        if let Some(question) = question {
            if !self.query(&question) {
                return Err(format!("Command \"{rest}\" not redefined."));
            }
        }
        Ok(Flow::Define(rest.to_string()))
    }

    /// `document NAME`: the help text of user command `NAME` follows, up
    /// to `end`.
    pub(super) fn document(&self, rest: &str) -> Result<Flow, String> {
        if rest.is_empty() {
            return Err("Argument required (name of command to define).".into());
        }
        if !self.user_commands.contains_key(rest) {
            return Err(if COMMANDS.contains(&rest) {
                format!("Command \"{rest}\" is built-in.")
            } else {
                format!("Undefined command: \"{rest}\".")
            });
        }
        Ok(Flow::Document(rest.to_string()))
    }

    /// `help NAME` of a user command: its documentation, or gdb's
    /// `User-defined.`.
    pub(super) fn help_user_command(&self, name: &str) -> Option<()> {
        let command = self.user_commands.get(name)?;
        if command.doc.is_empty() {
            outln!("User-defined.");
        }
        for line in &command.doc {
            outln!("{line}");
        }
        Some(())
    }
}

/// Largest command file `source` and `-x` read.
const MAX_COMMAND_FILE_BYTES: u64 = 16 << 20;

/// The text of a command file (`source`, `-x`): a regular file of at most
/// [`MAX_COMMAND_FILE_BYTES`], UTF-8; errors say which and why.
/// Where `source` finds command file `name`, as gdb's `source` does
/// (`find_and_open_script`): as named (from the current directory) if it
/// is there; else, for a name without a directory separator or with
/// `search` (`-s`), the first of `dirs` holding it (an absolute name taken
/// as relative to each); else as named, for the error to name.
pub(super) fn find_command_file(name: &str, search: bool, dirs: &[PathBuf]) -> PathBuf {
    let given = PathBuf::from(name);
    let searched = search || !name.contains('/');
    if given.exists() || !searched {
        return given;
    }
    let relative = name.trim_start_matches('/');
    dirs.iter()
        .map(|dir| dir.join(relative))
        .find(|candidate| candidate.exists())
        .unwrap_or(given)
}

/// The C library's words for an I/O error (`No such file or directory`),
/// as gdb prints them: Rust's without its `(os error N)`.
fn os_words(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn read_command_file(path: &Path, name: &str) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("{name}: {}.", os_words(&e)))?;
    if meta.is_dir() {
        return Err(format!("{name}: Is a directory."));
    }
    if !meta.is_file() {
        return Err(format!("{name}: not a regular file."));
    }
    if meta.len() > MAX_COMMAND_FILE_BYTES {
        return Err(format!(
            "{name}: {} bytes, over the {MAX_COMMAND_FILE_BYTES} a command file may have.",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_COMMAND_FILE_BYTES).read_to_end(&mut bytes))
        .map_err(|e| format!("{name}: {}.", os_words(&e)))?;
    String::from_utf8(bytes).map_err(|e| format!("{name}: not UTF-8 text ({e})."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &[&str]) -> Vec<String> {
        text.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn gdb_spellings_of_dbg_get_two_dashes_and_keep_their_values() {
        let args = words(&[
            "irvm",
            "dbg",
            "-ex",
            "-5 is no flag",
            "-batch",
            "-x",
            "f.gdb",
            "-command=g.gdb",
            "--module=m",
            "-eval-command=run",
            "--",
            "-ex",
        ]);
        assert_eq!(
            gdb_spellings(args),
            words(&[
                "irvm",
                "dbg",
                "--eval-command=-5 is no flag",
                "--batch",
                "-x",
                "f.gdb",
                "--command=g.gdb",
                "--module=m",
                "--eval-command=run",
                "--",
                "-ex",
            ])
        );
        // Other subcommands are left alone.
        let run = words(&["irvm", "run", "-ex", "x"]);
        assert_eq!(gdb_spellings(run.clone()), run);
    }

    #[test]
    fn user_arguments_split_and_substitute_as_gdb_does() {
        assert_eq!(
            split_user_args(r#"a "b c" 'd e' f(g, h) \"i"#),
            [r#"a"#, r#""b c""#, "'d e'", "f(g, h)", r#"\"i"#]
        );
        let args = words(&["x", "y"]);
        assert_eq!(
            substitute_user_args("$argc: $arg0 $arg1 $args $arg", &args).unwrap(),
            "2: x y $args $arg"
        );
        assert_eq!(
            substitute_user_args("$arg2", &args).unwrap_err(),
            "Missing argument 2 in user function."
        );
    }
}
