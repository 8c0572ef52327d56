//! `irvm params`: parameter archives, as IREE 3.13's parameter tools.
//!
//! - `irvm params dump` ~ `iree-dump-parameters`: the same table for the
//!   same files (`.irpa`, `.safetensors`, `.gguf`), one per scope;
//!   `--extract` writes an entry's bytes to a file.
//! - `irvm params create` ~ `iree-create-parameters`: an `.irpa` of splat
//!   and data entries declared on the command line.
//! - `irvm params convert` ~ `iree-convert-parameters`: one `.irpa` from
//!   parameter files, with `--exclude`, `--rename`, `--splat`, `--strip`.
//!
//! The archives written are byte-identical to the reference tools' for the
//! same inputs (tests/all/params.rs compares them). Where the reference
//! fails or misbehaves irvm does not: `create --data=K=4xf32=1.5` fills the
//! entry with the value (3.13 fails with "write failed" and leaves a
//! half-written file), each output is written to a temporary file in the
//! output's directory and renamed over the output only once complete, and
//! two entries of one key each get their own bytes in `convert` (3.13
//! copies the first one's bytes into both).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use irvm_hal::{ElementType, TensorType};
use irvm_io_parameters::archive::irpa_writer::{ArchiveWriter, Contents, DEFAULT_DATA_ALIGNMENT};
use irvm_io_parameters::archive::{irpa, map_file, read_entries, EntryData, FileBytes, Format};

/// Arguments of `irvm params`.
#[derive(clap::Args)]
pub struct ParamsArgs {
    #[command(subcommand)]
    command: ParamsCommand,
}

#[derive(clap::Subcommand)]
enum ParamsCommand {
    /// Print the entries of parameter files (like iree-dump-parameters).
    Dump(DumpArgs),
    /// Create an .irpa archive of declared entries (like
    /// iree-create-parameters).
    Create(CreateArgs),
    /// Convert parameter files into one .irpa archive (like
    /// iree-convert-parameters).
    Convert(ConvertArgs),
}

/// Arguments of `irvm params dump`.
#[derive(clap::Args)]
pub struct DumpArgs {
    /// Parameter files, `[SCOPE=]FILE` (read after the `--parameters` ones).
    files: Vec<String>,
    /// A parameter file, `FILE` (the global scope) or `SCOPE=FILE`.
    #[arg(long = "parameters")]
    parameters: Vec<String>,
    /// Write an entry's bytes to a file: `[SCOPE::]KEY=FILE`.
    #[arg(long = "extract")]
    extract: Vec<String>,
    /// `file` or `preload` (accepted; files are memory-mapped either way).
    #[arg(
        long = "parameter_mode",
        alias = "parameter-mode",
        default_value = "file"
    )]
    parameter_mode: String,
    /// After each table, each entry's description: irpa metadata,
    /// safetensors dtype and shape, gguf type and dimensions (irvm only).
    #[arg(long = "info")]
    info: bool,
}

/// Arguments of `irvm params create`.
#[derive(clap::Args)]
pub struct CreateArgs {
    /// A splat entry, `KEY=SHAPExTYPE[=VALUE]`: no bytes in the file, the
    /// value (zero without one) repeated.
    #[arg(long = "splat")]
    splat: Vec<String>,
    /// A data entry, `KEY=SHAPExTYPE[=VALUE]`: stored in the file, filled
    /// with the value (zeros without one).
    #[arg(long = "data")]
    data: Vec<String>,
    /// Alignment of data entries in the storage segment (a power of two).
    #[arg(long = "alignment", default_value_t = DEFAULT_DATA_ALIGNMENT)]
    alignment: u64,
    /// Do not print the new archive's entries.
    #[arg(
        long = "quiet",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        default_value = "false"
    )]
    quiet: bool,
    /// The .irpa file to write.
    #[arg(long = "output", default_value = "")]
    output: String,
}

/// Arguments of `irvm params convert`.
#[derive(clap::Args)]
pub struct ConvertArgs {
    /// Input files `[SCOPE=]FILE` (after the `--parameters` ones), then
    /// the output when there is no `--output`.
    files: Vec<String>,
    /// An input file, `FILE` or `SCOPE=FILE`.
    #[arg(long = "parameters")]
    parameters: Vec<String>,
    /// Leave this key out.
    #[arg(long = "exclude")]
    exclude: Vec<String>,
    /// Rename a key: `OLD=NEW`.
    #[arg(long = "rename")]
    rename: Vec<String>,
    /// Make an entry (by its new name) a splat: `KEY` (zeros) or
    /// `KEY=TYPE=VALUE` (`f32=4.5`, `x32=CAFEF00D`).
    #[arg(long = "splat")]
    splat: Vec<String>,
    /// Make every entry not named by `--splat` a splat of zeros.
    #[arg(
        long = "strip",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        default_value = "false"
    )]
    strip: bool,
    /// Do not print the new archive's entries.
    #[arg(
        long = "quiet",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        action = clap::ArgAction::Set,
        default_value = "false"
    )]
    quiet: bool,
    /// The .irpa file to write.
    #[arg(long = "output")]
    output: Option<String>,
    /// `file` or `preload` (accepted; files are memory-mapped either way).
    #[arg(
        long = "parameter_mode",
        alias = "parameter-mode",
        default_value = "file"
    )]
    parameter_mode: String,
}

/// Runs `irvm params`.
pub fn main(args: ParamsArgs) -> ExitCode {
    let result = match args.command {
        ParamsCommand::Dump(a) => dump(a).map_err(|e| format!("irvm params dump: {e}")),
        ParamsCommand::Create(a) => create(a).map_err(|e| format!("irvm params create: {e}")),
        ParamsCommand::Convert(a) => convert(a).map_err(|e| format!("irvm params convert: {e}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// One entry of a parameter file.
struct Param {
    key: String,
    /// The irpa metadata blob (other formats have none).
    metadata: Vec<u8>,
    data: EntryData,
    info: String,
    /// Which of the loaded files holds it.
    file: usize,
}

/// Parameter files read into scopes, in the order scopes first appear
/// (as IREE's scope map orders them).
#[derive(Default)]
struct Scopes {
    files: Vec<(String, FileBytes)>,
    scopes: Vec<(String, Vec<Param>)>,
}

impl Scopes {
    /// Reads `flag` (`FILE` or `SCOPE=FILE`, split at the first `=` as
    /// IREE splits it).
    fn load(&mut self, flag: &str, mode: &str) -> Result<(), String> {
        if mode != "file" && mode != "preload" {
            return Err(format!("unrecognized --parameter_mode= value '{mode}'"));
        }
        let (scope, path) = flag.split_once('=').unwrap_or(("", flag));
        let format = Format::from_path(Path::new(path)).ok_or_else(|| {
            let ext = Path::new(path).extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
            format!(
                "{path}: unsupported file format `{ext}`; ensure the extension matches one of the supported formats: [.irpa, .gguf, .safetensors]"
            )
        })?;
        let bytes = map_file(Path::new(path)).map_err(|e| format!("cannot read {path}: {e}"))?;
        let file = self.files.len();
        let params: Vec<Param> = if format == Format::Irpa {
            irpa::read_raw(&bytes)
                .map_err(|e| format!("{path}: {e}"))?
                .into_iter()
                .map(|e| Param {
                    key: e.key.to_string(),
                    info: String::from_utf8_lossy(e.metadata).into_owned(),
                    metadata: e.metadata.to_vec(),
                    data: e.data,
                    file,
                })
                .collect()
        } else {
            read_entries(format, &bytes)
                .map_err(|e| format!("{path}: {e}"))?
                .into_iter()
                .map(|e| Param {
                    key: e.key,
                    metadata: Vec::new(),
                    data: e.data,
                    info: e.info,
                    file,
                })
                .collect()
        };
        self.files.push((path.to_string(), bytes));
        match self.scopes.iter_mut().find(|(s, _)| s == scope) {
            Some((_, list)) => list.extend(params),
            None => self.scopes.push((scope.to_string(), params)),
        }
        Ok(())
    }

    /// The bytes of a DATA entry.
    /// A DATA_LOSS message naming the first input that changed since it
    /// was read (truncated or rewritten by another process).
    fn changed(&self) -> Result<(), String> {
        match self.files.iter().find(|(_, bytes)| bytes.lost()) {
            Some((path, _)) => Err(format!(
                "DATA_LOSS; {path} changed while it was read (another process truncated or \
                 rewrote it); nothing was written"
            )),
            None => Ok(()),
        }
    }

    fn bytes(&self, p: &Param) -> Option<&[u8]> {
        let EntryData::Data { offset, length } = p.data else {
            return None;
        };
        let file: &[u8] = &self.files[p.file].1;
        file.get(usize::try_from(offset).ok()?..usize::try_from(offset.checked_add(length)?).ok()?)
    }
}

/// One scope's table as IREE prints it (`iree_io_parameter_index_dump`).
fn table<'a>(
    scope: &str,
    entries: impl Iterator<Item = (&'a str, &'a EntryData)> + Clone,
) -> String {
    use std::fmt::Write as _;
    let count = entries.clone().count();
    let total = entries
        .clone()
        .fold(0u64, |n, (_, d)| n.wrapping_add(d.length()));
    let scope = if scope.is_empty() {
        "<global>".to_string()
    } else {
        format!("`{scope}`")
    };
    let mut s = String::new();
    s.push_str("//===--------------------------------------------------------------------------------------------------------------===//\n");
    let _ = writeln!(
        s,
        "// Parameter scope {scope} ({count} entries, {total} total bytes)"
    );
    s.push_str("//===------------+------------------+------------------+-----------------------------------------------------------===//\n");
    s.push_str("//         Start |              End |           Length | Key\n");
    s.push_str("//---------------+------------------+------------------+--------------------------------------------------------------//\n");
    for (key, data) in entries {
        let _ = match data {
            EntryData::Splat { length, .. } => {
                writeln!(
                    s,
                    "               - |                - | {length:16} | `{key}`"
                )
            }
            EntryData::Data { offset, length } => writeln!(
                s,
                "{offset:16} | {:16} | {length:16} | `{key}`",
                offset.wrapping_add(*length)
            ),
        };
    }
    s.push('\n');
    s
}

fn dump(args: DumpArgs) -> Result<(), String> {
    let mut scopes = Scopes::default();
    for flag in args.parameters.iter().chain(&args.files) {
        scopes.load(flag, &args.parameter_mode)?;
    }
    let mut text = String::new();
    for (scope, params) in &scopes.scopes {
        text.push_str(&table(
            scope,
            params.iter().map(|p| (p.key.as_str(), &p.data)),
        ));
        if args.info {
            for p in params {
                text.push_str(&format!("`{}`: {}\n", p.key, p.info));
            }
            text.push('\n');
        }
    }
    out!("{text}");
    for flag in &args.extract {
        extract(&scopes, flag)
            .map_err(|e| format!("extracting parameter with flag `{flag}`: {e}"))?;
    }
    Ok(())
}

/// `--extract=[SCOPE::]KEY=FILE`.
fn extract(scopes: &Scopes, flag: &str) -> Result<(), String> {
    let (id, path) = flag.split_once('=').unwrap_or((flag, ""));
    let (scope, key) = id.split_once("::").unwrap_or(("", id));
    let (_, params) = scopes
        .scopes
        .iter()
        .find(|(s, _)| s == scope)
        .ok_or_else(|| format!("no parameter scope `{scope}`"))?;
    let p = params
        .iter()
        .find(|p| p.key == key)
        .ok_or_else(|| format!("no parameter found in index with key '{key}'"))?;
    let shown = if scope.is_empty() {
        key.to_string()
    } else {
        format!("{scope}::{key}")
    };
    outln!(
        "Extracting parameter `{shown}` ({}b) to `{path}`...",
        p.data.length()
    );
    let bytes = scopes
        .bytes(p)
        .ok_or_else(|| format!("`{shown}` is a splat: it has no bytes in the file to extract"))?;
    let written = std::fs::write(path, bytes);
    if let Err(e) = scopes.changed() {
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    written.map_err(|e| format!("cannot write {path}: {e}"))
}

/// A parsed `SHAPExTYPE[=VALUE]`: the entry's length and its pattern
/// (`None` without a value).
fn declaration(spec: &str) -> Result<(u64, Option<Vec<u8>>), String> {
    let (shape_type, value) = spec.split_once('=').unwrap_or((spec, ""));
    let shape_type = shape_type.trim();
    let shape_type = shape_type.strip_prefix('"').unwrap_or(shape_type);
    let shape_type = shape_type.strip_suffix('"').unwrap_or(shape_type);
    if shape_type.is_empty() {
        return Err("empty string input".into());
    }
    let tensor = TensorType::parse(shape_type).map_err(|t| t.message.to_string())?;
    let bits = tensor.element_type.bits();
    if bits == 0 || bits % 8 != 0 {
        return Err(format!(
            "{shape_type}: opaque and sub-byte aligned element types cannot currently be used as splats; use a bitcast type (2xi4=1xi8, etc)"
        ));
    }
    let length = tensor.byte_length().map_err(|t| t.message.to_string())?;
    if value.is_empty() {
        return Ok((length, None));
    }
    Ok((
        length,
        Some(element(tensor.element_type, value, shape_type)?),
    ))
}

/// `value` as one element of `ty`, at most 16 bytes.
fn element(ty: ElementType, value: &str, what: &str) -> Result<Vec<u8>, String> {
    let size = ty.byte_size();
    if size > 16 {
        return Err(format!(
            "element type size for {what} out of range of splat patterns"
        ));
    }
    let mut pattern = vec![0u8; size];
    ty.parse_element(value, &mut pattern)?;
    Ok(pattern)
}

fn create(args: CreateArgs) -> Result<(), String> {
    if args.output.is_empty() {
        return Err("no output file: name one with --output=FILE.irpa".into());
    }
    let mut writer = ArchiveWriter::new();
    let parse = |flag: &str| -> Result<(String, u64, Option<Vec<u8>>), String> {
        let (key, spec) = flag.split_once('=').unwrap_or((flag, ""));
        let (length, pattern) = declaration(spec).map_err(|e| format!("`{flag}`: {e}"))?;
        Ok((key.to_string(), length, pattern))
    };
    // Splats first, then data entries in the order given (as the
    // reference declares them).
    for flag in &args.splat {
        let (key, length, pattern) = parse(flag)?;
        let pattern = pattern.unwrap_or_else(|| vec![0]);
        writer
            .add_splat(&key, b"", &pattern, length)
            .map_err(|e| format!("`{flag}`: {e}"))?;
    }
    for flag in &args.data {
        let (key, length, pattern) = parse(flag)?;
        let contents = match pattern {
            // A value of zeros is the zeros the file starts with.
            Some(p) if p.iter().any(|b| *b != 0) => Contents::Fill(p),
            _ => Contents::Zeros,
        };
        writer
            .add_data(&key, b"", args.alignment, length, contents)
            .map_err(|e| format!("`{flag}`: {e}"))?;
    }
    write_archive(&writer, Path::new(&args.output), args.quiet, || Ok(()))
}

fn convert(args: ConvertArgs) -> Result<(), String> {
    let mut inputs: Vec<&String> = args.parameters.iter().collect();
    let output = match &args.output {
        Some(o) => {
            inputs.extend(&args.files);
            o.clone()
        }
        None => {
            let (last, rest) = args.files.split_last().ok_or(
                "no output file: name one with --output=FILE.irpa or as the last argument",
            )?;
            if rest.is_empty() && inputs.is_empty() {
                return Err("no input file: name the inputs, then the output (or use --parameters= and --output=)".into());
            }
            // A mistaken order must not write over an input.
            if Format::from_path(Path::new(last)) != Some(Format::Irpa) {
                return Err(format!(
                    "the output, {last}, must be an .irpa file (the last argument is the output)"
                ));
            }
            inputs.extend(rest);
            last.clone()
        }
    };
    if output.is_empty() {
        return Err("no output file: name one with --output=FILE.irpa".into());
    }
    let mut scopes = Scopes::default();
    for flag in inputs {
        scopes.load(flag, &args.parameter_mode)?;
    }
    // Each --splat as (key, pattern), checked before anything is written.
    let mut splats = Vec::new();
    for flag in &args.splat {
        let (key, spec) = flag.split_once('=').unwrap_or((flag, ""));
        let pattern = if spec.is_empty() {
            vec![0]
        } else {
            let (ty, value) = spec.split_once('=').unwrap_or((spec, ""));
            let ty = ElementType::parse(ty).map_err(|e| format!("`--splat={flag}`: {e}"))?;
            element(ty, value, spec).map_err(|e| format!("`--splat={flag}`: {e}"))?
        };
        splats.push((key, pattern));
    }
    let mut writer = ArchiveWriter::new();
    for (_, params) in &scopes.scopes {
        for p in params {
            if args.exclude.contains(&p.key) {
                continue;
            }
            let key = args
                .rename
                .iter()
                .find_map(|r| {
                    let (old, new) = r.split_once('=').unwrap_or((r, ""));
                    (old == p.key).then_some(new)
                })
                .unwrap_or(&p.key);
            let splat = splats
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, pattern)| pattern.clone())
                .or_else(|| args.strip.then(|| vec![0]));
            let added = match (&p.data, splat) {
                (_, Some(pattern)) => writer.add_splat(key, &p.metadata, &pattern, p.data.length()),
                (EntryData::Splat { pattern, length }, None) => {
                    writer.add_splat(key, &p.metadata, pattern, *length)
                }
                (EntryData::Data { length, .. }, None) => {
                    let bytes = scopes.bytes(p).unwrap_or(&[]);
                    writer.add_data(
                        key,
                        &p.metadata,
                        DEFAULT_DATA_ALIGNMENT,
                        *length,
                        Contents::Bytes(bytes),
                    )
                }
            };
            added.map_err(|e| format!("{}: entry `{}`: {e}", scopes.files[p.file].0, p.key))?;
        }
    }
    write_archive(&writer, Path::new(&output), args.quiet, || scopes.changed())
}

/// Writes `writer`'s archive to `path` through a temporary file in the
/// same directory, renamed over `path` once complete; prints its table
/// unless `quiet`.
fn write_archive(
    writer: &ArchiveWriter<'_>,
    path: &Path,
    quiet: bool,
    inputs_intact: impl Fn() -> Result<(), String>,
) -> Result<(), String> {
    let shown = path.display();
    writer.layout().map_err(|e| format!("{shown}: {e}"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| format!("{shown}: not a file name"))?
        .to_string_lossy();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut file| {
            let layout = writer.write(&mut file)?;
            file.sync_all()?;
            drop(file);
            Ok(layout)
        });
    // An input that changed meanwhile (a read of a lost page fails, or
    // reads zeros) is the cause to name, not the output.
    if let Err(e) = inputs_intact() {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    let layout = match written.and_then(|layout| std::fs::rename(&temp, path).map(|()| layout)) {
        Ok(layout) => layout,
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            return Err(format!("cannot write {shown}: {e}"));
        }
    };
    if !quiet {
        out!(
            "{}",
            table("", layout.entries.iter().map(|e| (e.key.as_str(), &e.data)))
        );
    }
    let _ = std::io::stdout().flush();
    Ok(())
}
