//! `irvm dump`: prints a module's metadata and/or disassembly, with the
//! modes, flags and text of IREE 3.13's `iree-dump-module`.
//!
//! `--output=all` (the default) prints the metadata, a blank line and the
//! disassembly; `metadata` and `disassembly` print one of them;
//! `flatbuffer-binary` writes the module's FlatBuffer bytes and
//! `flatbuffer-json` prints them as JSON (indented with `--pretty`).
//! `assembly` (an irvm addition) prints text `irvm as` reads back into a
//! module that runs as this one does (`irvm::bytecode::disasm::assembly`).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use irvm::bytecode::disasm::{DisasmOptions, Disassembler, FunctionFilter, TextForm};
use irvm::Module;

mod executables;
mod flatbuffer_json;
mod metadata;

/// Arguments of `irvm dump`.
#[derive(clap::Args)]
pub struct DumpArgs {
    /// What to print: `all` (metadata and disassembly), `metadata`,
    /// `disassembly`, `flatbuffer-binary`, `flatbuffer-json`,
    /// `executables` (each executable in the rodata: format, size, entry
    /// points; an irvm addition), or `assembly` (text `irvm as` reads back
    /// into a module that runs identically; an irvm addition).
    #[arg(long, default_value = "all")]
    output: String,
    /// Print only this function: an internal function ordinal, or the name
    /// the disassembly prints it under.
    #[arg(long, default_value = "")]
    function: String,
    /// Prefix each disassembled line with its bytecode offset.
    #[arg(
        long = "bytecode_offsets",
        alias = "bytecode-offsets",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        default_value = "false"
    )]
    bytecode_offsets: bool,
    /// Indent `--output=flatbuffer-json`.
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        default_value = "false"
    )]
    pretty: bool,
    /// The module file (`.vmfb`; `-`: read it from stdin).
    file: PathBuf,
}

/// The `--output` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutputMode {
    All,
    Metadata,
    Disassembly,
    Assembly,
    FlatbufferBinary,
    FlatbufferJson,
    Executables,
}

impl OutputMode {
    fn parse(text: &str) -> Result<OutputMode, String> {
        Ok(match text {
            "all" => OutputMode::All,
            "metadata" => OutputMode::Metadata,
            "disassembly" => OutputMode::Disassembly,
            "assembly" => OutputMode::Assembly,
            "flatbuffer-binary" => OutputMode::FlatbufferBinary,
            "flatbuffer-json" => OutputMode::FlatbufferJson,
            "executables" => OutputMode::Executables,
            other => return Err(format!("unrecognized --output= flag value '{other}'")),
        })
    }
}

/// Runs `irvm dump`.
pub fn main(args: DumpArgs) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let (text, result) = dump(&args);
    let written = stdout.write_all(&text).and_then(|()| stdout.flush());
    if let Err(e) = written {
        crate::stdout::fail(e);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("irvm dump: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Produces the output (possibly partial, before an error) and the outcome.
fn dump(args: &DumpArgs) -> (Vec<u8>, Result<(), String>) {
    let mode = match OutputMode::parse(&args.output) {
        Ok(mode) => mode,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let loaded = if args.file.as_os_str() == "-" {
        crate::cmd_run::module_from_stdin(None, u64::MAX)
    } else {
        Module::from_file(&args.file)
            .map_err(|e| crate::cmd_run::explain_load_error(&args.file.display().to_string(), e))
    };
    let module = match loaded {
        Ok(module) => module,
        Err(e) => return (Vec::new(), Err(e)),
    };
    if mode == OutputMode::FlatbufferBinary {
        let bytes = module.file_bytes()[module.flatbuffer_range()].to_vec();
        return (bytes, Ok(()));
    }
    let mut text = String::new();
    if mode == OutputMode::Executables {
        let result = executables::write_executables(&module, &mut text);
        return (text.into_bytes(), result);
    }
    if mode == OutputMode::FlatbufferJson {
        let result = flatbuffer_json::write_json(&module, args.pretty, &mut text);
        return (text.into_bytes(), result);
    }
    let mut result = Ok(());
    if matches!(mode, OutputMode::All | OutputMode::Metadata) {
        result = metadata::write_metadata(&module, &mut text);
    }
    if result.is_ok() && mode == OutputMode::All {
        text.push('\n');
    }
    if result.is_ok() && matches!(mode, OutputMode::All | OutputMode::Disassembly) {
        result = disassemble(&module, args, TextForm::Disassembly, &mut text);
    }
    if mode == OutputMode::Assembly {
        result = disassemble(&module, args, TextForm::Assembly, &mut text);
    }
    (text.into_bytes(), result)
}

fn disassemble(
    module: &Module,
    args: &DumpArgs,
    form: TextForm,
    out: &mut String,
) -> Result<(), String> {
    let filter = parse_function_filter(&args.function);
    let options = DisasmOptions {
        bytecode_offsets: args.bytecode_offsets,
        filter,
        form,
    };
    let printed = Disassembler::new(module)
        .write_module(&options, out)
        .map_err(|e| e.to_string())?;
    match filter {
        FunctionFilter::All => Ok(()),
        _ if printed > 0 => Ok(()),
        FunctionFilter::Ordinal(n) => Err(format!(
            "no function with ordinal {n} in module '{}' ({} functions)",
            module.name(),
            module.function_count()
        )),
        FunctionFilter::Name(name) => Err(format!(
            "no function named '{name}' in module '{}'",
            module.name()
        )),
    }
}

/// `--function`: empty for all functions; text that C's `strtoul` (base 0)
/// reads a number from selects an ordinal (as iree-dump-module does);
/// anything else is a function name.
fn parse_function_filter(text: &str) -> FunctionFilter<'_> {
    if text.is_empty() {
        FunctionFilter::All
    } else if let Some(ordinal) = strtoul_prefix(text) {
        FunctionFilter::Ordinal(ordinal)
    } else {
        FunctionFilter::Name(text)
    }
}

/// The number C's `strtoul(text, &end, 0)` reads from the start of `text`
/// (leading spaces, a sign, `0x` hex or `0` octal), truncated to 32 bits;
/// `None` when no digits are read, the value overflows, or the text has 16
/// or more bytes (IREE's limit).
fn strtoul_prefix(text: &str) -> Option<u32> {
    if text.len() >= 16 {
        return None;
    }
    let s = text.trim_start_matches([' ', '\t', '\n', '\x0B', '\x0C', '\r']);
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let hex_digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_hexdigit()));
    let (radix, digits) = match hex_digits {
        Some(rest) => (16, rest),
        None if s.starts_with('0') => (8, s),
        None => (10, s),
    };
    let len = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if len == 0 {
        return None;
    }
    let value = u64::from_str_radix(&digits[..len], radix).ok()?;
    let value = if negative {
        value.wrapping_neg()
    } else {
        value
    };
    Some(value as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_filter_reads_numbers_like_strtoul() {
        assert_eq!(parse_function_filter(""), FunctionFilter::All);
        assert_eq!(parse_function_filter("3"), FunctionFilter::Ordinal(3));
        assert_eq!(parse_function_filter("0x1A"), FunctionFilter::Ordinal(26));
        assert_eq!(parse_function_filter("017"), FunctionFilter::Ordinal(15));
        assert_eq!(parse_function_filter(" 2abc"), FunctionFilter::Ordinal(2));
        assert_eq!(parse_function_filter("0x"), FunctionFilter::Ordinal(0));
        assert_eq!(
            parse_function_filter("-1"),
            FunctionFilter::Ordinal(u32::MAX)
        );
        assert_eq!(parse_function_filter("fn2"), FunctionFilter::Name("fn2"));
        assert_eq!(
            parse_function_filter("1234567890123456"),
            FunctionFilter::Name("1234567890123456")
        );
    }

    #[test]
    fn output_modes_parse() {
        assert_eq!(OutputMode::parse("all"), Ok(OutputMode::All));
        assert_eq!(
            OutputMode::parse("disassembly"),
            Ok(OutputMode::Disassembly)
        );
        assert_eq!(OutputMode::parse("assembly"), Ok(OutputMode::Assembly));
        assert!(OutputMode::parse("bogus")
            .unwrap_err()
            .contains("unrecognized --output= flag value 'bogus'"));
    }
}
