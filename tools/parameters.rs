//! `--parameters=[scope=]FILE` and `--parameter_mode`, as iree-run-module
//! reads them: the archives are opened, and the `io_parameters` module
//! registered, only when a loaded module imports it (the reference ignores
//! the flags otherwise).

use std::sync::{Arc, Mutex};

use irvm::{Context, Module};
use irvm_io_parameters::{io_parameters_module, parse_parameter_flag, OpenMode, ParameterIndex};

/// The parameter flags of the commands that run code.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ParameterArgs {
    /// A parameter archive (.irpa, .safetensors, .gguf) for programs that
    /// import `io_parameters`: `FILE` for parameters named without a scope,
    /// `SCOPE=FILE` for a scope; repeat for several (the first file with a
    /// key wins).
    #[arg(long = "parameters", value_name = "[SCOPE=]FILE")]
    pub parameters: Vec<String>,
    /// How archives are read: `file` (mapped; pages read as parameters
    /// are used) or `preload` (mapped and read in full at start-up). The
    /// results are the same.
    #[arg(long = "parameter_mode", default_value = "file")]
    pub parameter_mode: String,
}

/// The flags, and the index built from them the first time a module needs
/// it (one per process: `irvm bench` reuses it across iterations).
struct Settings {
    args: ParameterArgs,
    index: Option<Arc<ParameterIndex>>,
}

static SETTINGS: Mutex<Option<Settings>> = Mutex::new(None);

/// Records the command's parameter flags (a debug adapter's launch sets
/// them again for each program).
pub fn set(args: &ParameterArgs) {
    let mut s = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    *s = Some(Settings {
        args: args.clone(),
        index: None,
    });
}

/// Whether `module` imports `io_parameters` (or declares the dependency).
pub fn needs_io_parameters(module: &Module) -> bool {
    module
        .dependencies()
        .iter()
        .any(|d| d.name == "io_parameters")
        || module
            .imports()
            .iter()
            .any(|i| i.full_name.starts_with("io_parameters."))
}

/// The index of the recorded flags, built on first use.
fn index() -> Result<Arc<ParameterIndex>, String> {
    let mut guard = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    let settings = guard.get_or_insert_with(|| Settings {
        args: ParameterArgs {
            parameter_mode: "file".into(),
            ..ParameterArgs::default()
        },
        index: None,
    });
    if let Some(index) = &settings.index {
        return Ok(index.clone());
    }
    let mode = match settings.args.parameter_mode.as_str() {
        "file" => OpenMode::Map,
        "preload" => OpenMode::Preload,
        other => {
            return Err(format!(
                "INVALID_ARGUMENT; unrecognized --parameter_mode= value '{other}' (file or preload)"
            ))
        }
    };
    let mut index = ParameterIndex::new();
    for flag in &settings.args.parameters {
        let (scope, path) = parse_parameter_flag(flag);
        index
            .add_file_with(scope, path, mode)
            .map_err(|e| format!("{}; --parameters={flag}: {e}", e.code()))?;
    }
    let index = Arc::new(index);
    settings.index = Some(index.clone());
    Ok(index)
}

/// Registers the `io_parameters` module in `ctx` (over the flags' index)
/// unless a module of that name is already there.
pub fn ensure_io_parameters(ctx: &mut Context) -> Result<(), String> {
    if ctx.module_names().contains(&"io_parameters") {
        return Ok(());
    }
    let module = io_parameters_module(index()?)
        .map_err(|e| format!("INTERNAL; building the io_parameters module: {e}"))?;
    ctx.register_host_module(&module).map_err(|e| e.to_string())
}

/// Fails with DATA_LOSS when an archive of the flags' index shrank while
/// mapped and a read found its lost pages (they read as zeros): the
/// results of the call are then discarded. `Ok` when no index was built.
pub fn check_intact() -> Result<(), String> {
    let guard = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref().and_then(|s| s.index.as_ref()) {
        Some(index) => index
            .check_intact()
            .map_err(|e| format!("{}; {e}", e.code())),
        None => Ok(()),
    }
}
