//! iree-run-module's questions about drivers and devices
//! (`--list_drivers`, `--list_devices[=DRIVER]`, `--dump_devices[=DRIVER]`),
//! answered for irvm's own CPU device. As in the reference, a question is
//! answered instead of running anything, and needs no `--module`.

use std::process::ExitCode;

/// The drivers irvm's `hal` module provides: (name, what it does).
const DRIVERS: &[(&str, &str)] = &[
    (
        "local-sync",
        "irvm's CPU device: every dispatch runs on the calling thread",
    ),
    (
        "local-task",
        "irvm's CPU device: native workgroups spread over a worker pool",
    ),
];

/// Flags that ask about the HAL instead of running a program.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct HalQueryArgs {
    /// Print the HAL drivers irvm provides (local-sync, local-task), then
    /// exit.
    #[arg(long = "list_drivers")]
    list_drivers: bool,
    /// Print the device URIs of every driver, or of the one named
    /// (`--list_devices=local-task`), then exit.
    #[arg(long = "list_devices", num_args = 0..=1, default_missing_value = "")]
    list_devices: Option<String>,
    /// Print the devices of every driver, or of the one named, with their
    /// `--device=` spelling, then exit.
    #[arg(long = "dump_devices", num_args = 0..=1, default_missing_value = "")]
    dump_devices: Option<String>,
}

/// A line of 76 `=` under a `# `, as the reference frames its sections.
fn rule() -> String {
    format!("# {}", "=".repeat(76))
}

/// The drivers `name` selects (all when empty), or an error naming it.
fn drivers(name: &str) -> Result<Vec<&'static str>, String> {
    if name.is_empty() {
        return Ok(DRIVERS.iter().map(|d| d.0).collect());
    }
    match DRIVERS.iter().find(|d| d.0 == name) {
        Some(d) => Ok(vec![d.0]),
        None => Err(format!(
            "NOT_FOUND; no driver '{name}' registered (irvm has {})",
            DRIVERS.iter().map(|d| d.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

impl HalQueryArgs {
    /// Answers the first question asked (drivers, then devices, then the
    /// device dump) and returns the exit code, or `None` when none was
    /// asked.
    pub fn answer(&self, tool: &str) -> Option<ExitCode> {
        let fail = |message: String| {
            eprintln!("irvm {tool}: {message}");
            Some(ExitCode::FAILURE)
        };
        if self.list_drivers {
            let mut text = format!(
                "{}\n# Available HAL drivers\n{}\n# Use --list_devices={{driver name}} to enumerate available devices.\n\n",
                rule(),
                rule()
            );
            for (name, what) in DRIVERS {
                text.push_str(&format!("{name:>16}: {what}\n"));
            }
            out!("{text}");
            return Some(ExitCode::SUCCESS);
        }
        if let Some(name) = &self.list_devices {
            return match drivers(name) {
                Ok(list) => {
                    for d in list {
                        outln!("{d}://");
                    }
                    Some(ExitCode::SUCCESS)
                }
                Err(e) => fail(e),
            };
        }
        if let Some(name) = &self.dump_devices {
            return match drivers(name) {
                Ok(list) => {
                    let sections: Vec<String> = list
                        .iter()
                        .map(|d| {
                            format!(
                                "{rule}\n# Enumerated devices for driver '{d}'\n{rule}\n\n\
                                 # ==={dash}===\n# --device={d}://\n#   default\n# ==={dash}===\n",
                                rule = rule(),
                                dash = "-".repeat(70)
                            )
                        })
                        .collect();
                    out!("{}", sections.join("\n"));
                    Some(ExitCode::SUCCESS)
                }
                Err(e) => fail(e),
            };
        }
        None
    }
}
