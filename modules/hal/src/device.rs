//! How the `hal` module's CPU device runs: on the calling thread
//! (`local-sync`) or over a pool of workers (`local-task`, IREE's default
//! for its tools), and whether it loads native executables.

use std::sync::{Arc, OnceLock};

use irvm::{Ref, StatusCode, Trap};

use crate::workers::Workers;

/// How dispatches of native executables are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// `local-sync`: every workgroup on the calling thread, in order.
    Sync,
    /// `local-task`: workgroups spread over `workers` participants (the
    /// calling thread and `workers - 1` threads the device starts on its
    /// first dispatch, `workers::Workers`). vmvx dispatches
    /// share them too, each worker running workgroups in a context of its
    /// own (`vmvx_grid.rs`), unless the loading context has a fuel limit
    /// (fuel is spent in program order: then on the calling thread).
    Task {
        /// Worker threads (at least 1; at most [`MAX_WORKERS`] start).
        workers: usize,
    },
}

/// One dispatch, as [`DeviceOptions::on_dispatch`] sees it before its
/// workgroups run.
#[derive(Clone, Debug)]
pub struct DispatchEvent<'a> {
    /// The executable's name (a vmvx module's name, a native library's).
    pub executable: &'a str,
    /// Its format (`vmvx-bytecode-fb`, `embedded-elf-x86_64`, ...).
    pub format: &'a str,
    /// The entry point dispatched.
    pub entry: &'a str,
    /// Workgroup counts x, y, z.
    pub workgroups: [u32; 3],
}

/// A function told of every dispatch (tracing, debuggers).
#[derive(Clone)]
pub struct DispatchHook(pub Arc<dyn Fn(&DispatchEvent<'_>) + Send + Sync>);

impl std::fmt::Debug for DispatchHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DispatchHook")
    }
}

impl PartialEq for DispatchHook {
    fn eq(&self, other: &DispatchHook) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for DispatchHook {}

/// A function given each `hal.buffer_view.trace` (IREE's debug sink): the
/// key (the program's tracing label, as UTF-8 text, invalid bytes
/// replaced) and the traced buffer views (`!hal.buffer_view` refs). An
/// error it returns fails the program's call.
#[derive(Clone)]
pub struct TraceHook(pub Arc<TraceFn>);

/// What a [`TraceHook`] calls: `(key, views)`.
pub type TraceFn = dyn Fn(&str, &[Ref]) -> Result<(), Trap> + Send + Sync;

impl std::fmt::Debug for TraceHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceHook")
    }
}

impl PartialEq for TraceHook {
    fn eq(&self, other: &TraceHook) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for TraceHook {}

/// Options of the `hal` module's device ([`crate::hal_module_with`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceOptions {
    /// Sync or task, and how many workers.
    pub kind: DeviceKind,
    /// Whether native executables (llvm-cpu: `embedded-elf-*`,
    /// `system-elf-*`) are loaded. They are machine code from the module
    /// and run with the host process's rights; with `false` the device
    /// answers `hal.executable.format` queries for them with 0, so a
    /// module built only for them fails cleanly at initialization, and
    /// only vmvx bytecode runs (see docs/HOSTILE_INPUT.md).
    pub native_executables: bool,
    /// Called before each dispatch runs (`None`: nothing is told).
    pub on_dispatch: Option<DispatchHook>,
    /// Given each `hal.buffer_view.trace` (`None`: traces are checked and
    /// dropped, as IREE does without a debug sink).
    pub on_trace: Option<TraceHook>,
    /// How vmvx executables' bytecode runs (`Context::set_tier` of the
    /// context each executable gets); `None`: the default, the
    /// `IRVM_ENGINE` environment variable, else `Tier::Auto`.
    pub tier: Option<irvm::Tier>,
}

impl Default for DeviceOptions {
    /// `local-task` over every core, native executables allowed: what
    /// IREE's tools do by default.
    fn default() -> DeviceOptions {
        DeviceOptions {
            kind: DeviceKind::Task {
                workers: default_workers(),
            },
            native_executables: true,
            on_dispatch: None,
            on_trace: None,
            tier: None,
        }
    }
}

/// The most workers a `local-task` pool has; larger counts are clamped to
/// it, as IREE clamps `--task_topology_max_group_count` to its
/// `IREE_TASK_TOPOLOGY_MAX_GROUP_COUNT`.
pub const MAX_WORKERS: usize = 256;

/// The cores this process may use (at least 1, at most [`MAX_WORKERS`]),
/// asked once per process (the answer reads cgroup files).
pub fn default_workers() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(MAX_WORKERS)
    })
}

impl DeviceOptions {
    /// Options for the device IREE's `--device=URI` names: `local-sync` or
    /// `local-task`, optionally followed by `://` (a path after it is
    /// refused, as IREE's CPU drivers refuse it); `workers` (`--task_topology_max_group_count`, 0 or `None`:
    /// every core; at most [`MAX_WORKERS`]) sizes the task pool.
    pub fn from_uri(uri: &str, workers: Option<usize>) -> Result<DeviceOptions, String> {
        let (driver, path) = uri.split_once("://").unwrap_or((uri, ""));
        if !path.is_empty() && matches!(driver, "local-sync" | "local-task") {
            return Err(format!(
                "device paths not yet implemented; creating device '{uri}'"
            ));
        }
        let kind = match driver {
            "local-sync" => DeviceKind::Sync,
            "local-task" => DeviceKind::Task {
                workers: match workers {
                    Some(n) if n > 0 => n.min(MAX_WORKERS),
                    _ => default_workers(),
                },
            },
            other => {
                return Err(format!(
                    "no HAL driver is registered that can service `{other}`; irvm's drivers \
                     are local-sync and local-task (CPU)"
                ))
            }
        };
        Ok(DeviceOptions {
            kind,
            ..DeviceOptions::default()
        })
    }

    /// The device's identifier, as `hal.device.id` queries match it.
    pub fn identifier(&self) -> &'static str {
        match self.kind {
            DeviceKind::Sync => "local-sync",
            DeviceKind::Task { .. } => "local-task",
        }
    }

    /// Workers one dispatch may use.
    pub fn concurrency(&self) -> usize {
        match self.kind {
            DeviceKind::Sync => 1,
            DeviceKind::Task { workers } => workers.clamp(1, MAX_WORKERS),
        }
    }
}

/// A device's options and, for `local-task`, its workers (started on
/// first use, shared by every executable the device loads, and stopped
/// when the last of them drops).
#[derive(Debug)]
pub struct DeviceConfig {
    /// What the device was made with.
    pub options: DeviceOptions,
    workers: OnceLock<Result<Workers, String>>,
}

impl DeviceConfig {
    /// A configuration for `options` (no threads are started yet).
    pub fn new(options: DeviceOptions) -> Arc<DeviceConfig> {
        Arc::new(DeviceConfig {
            options,
            workers: OnceLock::new(),
        })
    }

    /// The workers of a `local-task` device (`None` for `local-sync`).
    pub fn workers(&self) -> Result<Option<&Workers>, Trap> {
        let DeviceKind::Task { workers } = self.options.kind else {
            return Ok(None);
        };
        let count = workers.clamp(1, MAX_WORKERS);
        let started = self
            .workers
            .get_or_init(|| Workers::start(count).map_err(|e| e.to_string()));
        match started {
            Ok(w) => Ok(Some(w)),
            Err(e) => Err(Trap::new(
                StatusCode::ResourceExhausted,
                format!("starting the local-task workers ({count} threads): {e}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_uris() {
        assert_eq!(
            DeviceOptions::from_uri("local-sync", Some(3)).unwrap().kind,
            DeviceKind::Sync
        );
        assert_eq!(
            DeviceOptions::from_uri("local-task://", Some(3))
                .unwrap()
                .kind,
            DeviceKind::Task { workers: 3 }
        );
        assert_eq!(
            DeviceOptions::from_uri("local-task", Some(0)).unwrap().kind,
            DeviceKind::Task {
                workers: default_workers()
            }
        );
        // As IREE, a count past the limit is clamped, not refused.
        assert_eq!(
            DeviceOptions::from_uri("local-task", Some(20_000))
                .unwrap()
                .kind,
            DeviceKind::Task {
                workers: MAX_WORKERS
            }
        );
        let huge = DeviceConfig::new(DeviceOptions {
            kind: DeviceKind::Task { workers: 1 << 40 },
            ..DeviceOptions::default()
        });
        assert_eq!(huge.options.concurrency(), MAX_WORKERS);
        let e = DeviceOptions::from_uri("local-task://0", None).unwrap_err();
        assert!(e.contains("device paths not yet implemented"), "{e}");
        let e = DeviceOptions::from_uri("cuda", None).unwrap_err();
        assert!(e.contains("`cuda`"), "{e}");
    }

    #[test]
    fn workers_start_on_first_use_and_stop_with_the_device() {
        let sync = DeviceConfig::new(DeviceOptions::from_uri("local-sync", None).unwrap());
        assert!(sync.workers().unwrap().is_none());
        let task = DeviceConfig::new(DeviceOptions::from_uri("local-task", Some(3)).unwrap());
        assert_eq!(task.workers().unwrap().map(Workers::count), Some(3));
        // The same workers on every later use.
        let first: *const Workers = task.workers().unwrap().unwrap();
        assert!(std::ptr::eq(first, task.workers().unwrap().unwrap()));
        // Parked, then the device goes: `Workers`' drop joins its threads
        // (`workers::tests::dropping_parked_workers_ends_every_thread`).
        std::thread::sleep(crate::workers::SPIN * 50);
        drop(task);
    }
}
