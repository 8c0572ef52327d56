//! `--profile=FILE` for `irvm run` and `irvm bench`, and the profile's
//! part of `--print_statistics`: a [`Profile`] made before the modules
//! load, attached to the program's context, and written out when the run
//! ends in the format the file name says:
//! - `.json`: Chrome's trace event format (Perfetto, chrome://tracing),
//!   [`chrome`];
//! - `.html`: a self-contained page drawing the timeline and the table of
//!   dispatches, [`page`];
//! - `.folded`: folded stacks of the sampled VM profile, for flamegraph
//!   tools, [`folded`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use irvm::profile::{Profile, ProfileData, ProfileOptions};

pub mod chrome;
pub mod folded;
pub mod page;
pub mod sigint;
pub mod summary;

/// The `--profile` flag.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ProfileArgs {
    /// Record where the time goes and write it to FILE when the run ends:
    /// `.json` a Chrome trace (open in ui.perfetto.dev or
    /// chrome://tracing) with one track per thread (the VM's calls, host
    /// calls and waits; each worker's batches of workgroups; compiles),
    /// `.html` a page that draws it with a table of the dispatches by
    /// time, `.folded` the sampled VM stacks for flamegraph tools. Repeat
    /// for several files. With `--print_statistics`, the statistics add
    /// the VM time by function and by source line.
    #[arg(long = "profile", value_name = "FILE")]
    pub files: Vec<String>,
}

/// What a profile file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Chrome,
    Page,
    Folded,
}

fn format_of(path: &str) -> Result<Format, String> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".json") {
        Ok(Format::Chrome)
    } else if lower.ends_with(".html") {
        Ok(Format::Page)
    } else if lower.ends_with(".folded") {
        Ok(Format::Folded)
    } else {
        Err(format!(
            "INVALID_ARGUMENT; --profile={path}: the file name must end in .json (Chrome \
             trace), .html (timeline page) or .folded (folded stacks)"
        ))
    }
}

/// The run's profile, made by [`start`] (a process runs one program).
static PROFILE: OnceLock<Arc<Profile>> = OnceLock::new();

/// Set once [`write_files`] has been asked to write the files, so that
/// [`write_after_failure`] does not write them a second time.
static WRITTEN: AtomicBool = AtomicBool::new(false);

/// Makes the run's profile when `--profile` or `--print_statistics` asks
/// for one: a timeline and stack samples with `--profile`, only the
/// dispatch totals for `--print_statistics` alone. Checks the file names
/// first.
pub fn start(args: &ProfileArgs, statistics: bool) -> Result<(), String> {
    let mut timeline = false;
    for f in &args.files {
        timeline |= format_of(f)? != Format::Folded;
    }
    // Each file is made now, so that one that cannot be written fails
    // before anything runs, not after.
    for f in &args.files {
        std::fs::File::create(f).map_err(|e| format!("--profile={f}: {e}"))?;
    }
    let wanted = !args.files.is_empty();
    if !wanted && !statistics {
        return Ok(());
    }
    let options = ProfileOptions {
        // Folded stacks need the samples, not the timeline.
        timeline,
        sample_every: if wanted {
            ProfileOptions::default().sample_every
        } else {
            None
        },
        ..ProfileOptions::default()
    };
    let _ = PROFILE.set(Profile::new(options));
    Ok(())
}

/// The run's profile, if [`start`] made one.
pub fn current() -> Option<Arc<Profile>> {
    PROFILE.get().cloned()
}

/// Starts the profile's totals again: what `--print_statistics` ranks
/// covers what runs from now on (the modules' initializers ran before).
pub fn measure_from_here() {
    if let Some(p) = PROFILE.get() {
        p.reset_totals();
    }
}

/// Stops recording and returns what was recorded.
pub fn finish() -> Option<ProfileData> {
    let p = PROFILE.get()?;
    p.finish();
    Some(p.data())
}

/// What the writers say about the run.
pub struct RunInfo<'a> {
    /// `irvm run` or `irvm bench`.
    pub tool: &'a str,
    /// The module files.
    pub modules: &'a [String],
    /// The function(s) called.
    pub functions: &'a [String],
    /// The device (`local-task`, 2 workers).
    pub device: String,
}

/// Writes every `--profile` file; says on stderr (as `tool`) when the
/// timeline was longer than the profile keeps.
pub fn write_files(args: &ProfileArgs, data: &ProfileData, info: &RunInfo) -> Result<(), String> {
    WRITTEN.store(true, Ordering::SeqCst);
    if args.files.is_empty() {
        return Ok(());
    }
    if data.dropped_events > 0 {
        eprintln!(
            "{}: the profile's timeline kept its first {} events and left out {} later ones \
             (the dispatch totals, busy times and samples cover the whole run)",
            info.tool, data.max_events, data.dropped_events
        );
    }
    for path in &args.files {
        let text = match format_of(path)? {
            Format::Chrome => chrome::trace_json(data, info),
            Format::Page => page::html(data, info),
            Format::Folded => folded::stacks(data),
        };
        std::fs::write(path, text).map_err(|e| format!("writing --profile={path}: {e}"))?;
    }
    Ok(())
}

/// Writes what the profile recorded when the run failed before the tool
/// wrote it (a module that failed to load or to initialize, a function or
/// input refused): the files [`start`] made then hold the loading and the
/// initializers that ran, not nothing. Does nothing when no profile was
/// started or the files were written; a file that cannot be written is
/// reported on stderr (the run already failed).
pub fn write_after_failure(args: &ProfileArgs, tool: &str, modules: &[String]) {
    if WRITTEN.load(Ordering::SeqCst) {
        return;
    }
    let Some(data) = finish() else {
        return;
    };
    let info = RunInfo {
        tool,
        modules,
        functions: &[],
        device: crate::tensor_io::device_label(),
    };
    if let Err(e) = write_files(args, &data, &info) {
        eprintln!("{tool}: {e}");
    }
}

/// Nanoseconds as microseconds, as trace viewers read timestamps.
pub(crate) fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// A track's name as the viewers show it: `VM (main)` for the main
/// thread, `worker N` for the hal's workers, else the thread's name.
pub(crate) fn track_label(name: &str) -> String {
    if name == "main" {
        "VM (main thread)".into()
    } else if let Some(n) = name.strip_prefix("irvm-hal-worker-") {
        format!("worker {n}")
    } else if name == "irvm-jit" || name.contains("compile") {
        format!("compiler ({name})")
    } else {
        name.to_owned()
    }
}

/// The order tracks are shown in: the main thread, the hal's workers by
/// number, then the rest by name.
pub(crate) fn track_order(name: &str) -> (u8, u64, String) {
    if name == "main" {
        (0, 0, String::new())
    } else if let Some(n) = name
        .strip_prefix("irvm-hal-worker-")
        .and_then(|n| n.parse().ok())
    {
        (1, n, String::new())
    } else {
        (2, 0, name.to_owned())
    }
}

/// A span of the sampled VM stack, made from consecutive samples that
/// share the frame at `depth`.
pub(crate) struct SampledSpan {
    pub track: u32,
    pub frame: u32,
    pub depth: usize,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// The samples as nested spans per track: a frame's span lasts while the
/// samples that follow each other have it at the same depth; at most
/// [`ProfileData::max_events`] of them, the earliest.
pub(crate) fn sampled_spans(data: &ProfileData) -> Vec<SampledSpan> {
    let mut spans = all_sampled_spans(data);
    if spans.len() > data.max_events {
        spans.sort_by_key(|s| s.start_ns);
        spans.truncate(data.max_events);
    }
    spans
}

fn all_sampled_spans(data: &ProfileData) -> Vec<SampledSpan> {
    let mut by_track: std::collections::BTreeMap<u32, Vec<&irvm::profile::SamplePoint>> =
        Default::default();
    for s in &data.samples {
        by_track.entry(s.track).or_default().push(s);
    }
    let mut out = Vec::new();
    for (track, mut points) in by_track {
        points.sort_by_key(|p| p.start_ns);
        let mut open: Vec<(u32, u64)> = Vec::new();
        let mut prev_end = 0u64;
        let close =
            |open: &mut Vec<(u32, u64)>, keep: usize, at: u64, out: &mut Vec<SampledSpan>| {
                while open.len() > keep {
                    let depth = open.len() - 1;
                    let (frame, start) = open.pop().expect("open frame");
                    out.push(SampledSpan {
                        track,
                        frame,
                        depth,
                        start_ns: start,
                        end_ns: at.max(start),
                    });
                }
            };
        for p in points {
            let stack = data
                .stacks
                .get(p.stack as usize)
                .map_or(&[][..], Vec::as_slice);
            // A gap (the program outside bytecode) ends every frame.
            if p.start_ns > prev_end {
                close(&mut open, 0, prev_end, &mut out);
            }
            let same = open
                .iter()
                .zip(stack)
                .take_while(|((f, _), g)| f == *g)
                .count();
            close(&mut open, same, p.start_ns, &mut out);
            for &f in &stack[same..] {
                open.push((f, p.start_ns));
            }
            prev_end = p.end_ns;
        }
        close(&mut open, 0, prev_end, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use irvm::profile::SamplePoint;

    #[test]
    fn samples_merge_into_nested_spans() {
        let data = ProfileData {
            max_events: 100,
            stacks: vec![vec![0], vec![0, 1], vec![0, 2]],
            samples: [
                (0, 10, 0),
                (10, 20, 1),
                (20, 30, 1),
                (30, 40, 2),
                (50, 60, 0),
            ]
            .iter()
            .map(|&(start_ns, end_ns, stack)| SamplePoint {
                track: 0,
                start_ns,
                end_ns,
                stack,
            })
            .collect(),
            ..ProfileData::default()
        };
        let mut spans: Vec<_> = sampled_spans(&data)
            .into_iter()
            .map(|s| (s.frame, s.depth, s.start_ns, s.end_ns))
            .collect();
        spans.sort();
        assert_eq!(
            spans,
            vec![
                (0, 0, 0, 40),
                (0, 0, 50, 60),
                (1, 1, 10, 30),
                (2, 1, 30, 40)
            ]
        );
    }
}
