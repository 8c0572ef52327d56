//! The profile's part of `--print_statistics`: the ten dispatches that
//! took the most time, how busy the workers were, and with `--profile`
//! the sampled VM time by function and by source line.

use std::collections::HashMap;
use std::time::Duration;

use irvm::profile::ProfileData;

use super::folded::line_of;

/// How a dispatch site ranks: its totals and where it is.
pub struct RankedSite {
    /// `executable::entry`.
    pub name: String,
    /// Source location of the op, or `-`.
    pub location: String,
    /// Dispatches.
    pub count: u64,
    /// Their total time.
    pub total_ns: u64,
}

/// Dispatch sites by total time, most first (sites with the same entry
/// point and location are one: only their workgroup counts differ).
pub fn ranked_sites(data: &ProfileData) -> Vec<RankedSite> {
    let mut merged: HashMap<(String, String), RankedSite> = HashMap::new();
    for (site, totals) in data.sites.iter().zip(&data.site_totals) {
        let name = format!("{}::{}", site.executable, site.entry);
        let location = site.location.clone().unwrap_or_else(|| "-".into());
        let r = merged
            .entry((name.clone(), location.clone()))
            .or_insert(RankedSite {
                name,
                location,
                count: 0,
                total_ns: 0,
            });
        r.count += totals.count;
        r.total_ns += totals.total_ns;
    }
    let mut sites: Vec<RankedSite> = merged.into_values().filter(|r| r.count > 0).collect();
    sites.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    sites
}

/// The busy fraction of the device's threads over `wall`: the hal's
/// workers on `local-task` (`workers` of them: the calling thread, which
/// takes workgroups too, and `workers - 1` threads), or the calling
/// thread's dispatch time on `local-sync` (`workers` 0).
pub fn busy_line(data: &ProfileData, workers: usize, wall: Duration) -> Option<String> {
    let wall_ns = wall.as_nanos().max(1) as f64;
    let pct = |ns: u64, n: usize| 100.0 * ns as f64 / (wall_ns * n.max(1) as f64);
    if workers == 0 {
        let busy: u64 = data.tracks.iter().map(|t| t.busy_ns).sum();
        if busy == 0 {
            return None;
        }
        return Some(format!(
            "{:.1}% of the run (local-sync: workgroups run on the calling thread)",
            pct(busy, 1)
        ));
    }
    let mut each: Vec<(u32, u64)> = data
        .tracks
        .iter()
        .filter_map(|t| {
            let n = t.name.strip_prefix("irvm-hal-worker-")?.parse().ok()?;
            Some((n, t.busy_ns))
        })
        .collect();
    // The calling thread takes workgroups too (and runs vmvx ones).
    let caller: u64 = data
        .tracks
        .iter()
        .filter(|t| !t.name.starts_with("irvm-hal-worker-"))
        .map(|t| t.busy_ns)
        .sum();
    if each.is_empty() && caller == 0 {
        return None;
    }
    each.sort();
    let total: u64 = each.iter().map(|e| e.1).sum::<u64>() + caller;
    let mut line = format!(
        "{:.1}% of {workers} worker{} over the run",
        pct(total, workers),
        if workers == 1 { "" } else { "s" }
    );
    if !each.is_empty() {
        let list: Vec<String> = each
            .iter()
            .take(16)
            .map(|(n, ns)| format!("{n}: {:.0}%", pct(*ns, 1)))
            .collect();
        line.push_str(&format!(
            " ({}{})",
            list.join(", "),
            if each.len() > 16 { ", ..." } else { "" }
        ));
    }
    if caller > 0 {
        line.push_str(&format!(
            "; the calling thread ran workgroups {:.1}% of the run",
            pct(caller, 1)
        ));
    }
    Some(line)
}

/// Sampled time per function (self, total) and per source line (self).
pub struct VmTimes {
    /// `(function, self ns, total ns)`, most self time first.
    pub functions: Vec<(String, u64, u64)>,
    /// `(file:line, self ns)`, most first.
    pub lines: Vec<(String, u64)>,
    /// All sampled time.
    pub total_ns: u64,
}

/// The VM time tables from the samples.
pub fn vm_times(data: &ProfileData) -> VmTimes {
    let mut own: HashMap<&str, u64> = HashMap::new();
    let mut all: HashMap<&str, u64> = HashMap::new();
    let mut lines: HashMap<String, u64> = HashMap::new();
    let mut total_ns = 0;
    for (stack, &ns) in data.stacks.iter().zip(&data.stack_ns) {
        let frames: Vec<_> = stack
            .iter()
            .filter_map(|&f| data.frames.get(f as usize))
            .collect();
        let Some(leaf) = frames.last() else { continue };
        total_ns += ns;
        *own.entry(leaf.function.as_str()).or_default() += ns;
        let mut seen: Vec<&str> = Vec::new();
        for f in &frames {
            if !seen.contains(&f.function.as_str()) {
                seen.push(&f.function);
                *all.entry(f.function.as_str()).or_default() += ns;
            }
        }
        // A host call's time goes to the line that made it.
        if let Some(loc) = frames.iter().rev().find_map(|f| f.location.as_deref()) {
            *lines.entry(line_of(loc).to_owned()).or_default() += ns;
        }
    }
    let mut functions: Vec<(String, u64, u64)> = own
        .iter()
        .map(|(f, &s)| (f.to_string(), s, all.get(f).copied().unwrap_or(s)))
        .collect();
    for (f, &t) in &all {
        if !own.contains_key(f) {
            functions.push((f.to_string(), 0, t));
        }
    }
    functions.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
    let mut lines: Vec<(String, u64)> = lines.into_iter().collect();
    lines.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    VmTimes {
        functions,
        lines,
        total_ns,
    }
}

/// Prints the profile's statistics to stderr, each line indented as
/// `--print_statistics` indents its own. `every_instruction`: the program
/// ran in the instruction-by-instruction loop, where a sample lands on
/// the instruction under way; the fast loops answer a sample at their
/// next back edge or call, so there a line's time shows at the loop head
/// or call that follows it.
pub fn print(data: &ProfileData, workers: usize, wall: Duration, every_instruction: bool) {
    let ms = |ns: u64| ns as f64 / 1e6;
    let sites = ranked_sites(data);
    if !sites.is_empty() {
        let all: u64 = sites.iter().map(|s| s.total_ns).sum();
        eprintln!(
            "  dispatches by total time (top {} of {}):",
            sites.len().min(10),
            sites.len()
        );
        eprintln!(
            "    {:>4} {:>11} {:>6} {:>7} {:>11}  executable::entry point @ source",
            "#", "total ms", "share", "count", "mean us"
        );
        for (k, s) in sites.iter().take(10).enumerate() {
            eprintln!(
                "    {:>4} {:>11.3} {:>5.1}% {:>7} {:>11.2}  {} @ {}",
                k + 1,
                ms(s.total_ns),
                100.0 * s.total_ns as f64 / all.max(1) as f64,
                s.count,
                s.total_ns as f64 / s.count.max(1) as f64 / 1e3,
                s.name,
                s.location
            );
        }
    }
    if let Some(line) = busy_line(data, workers, wall) {
        eprintln!("  {:<29}{line}", "workers busy:");
    }
    if data.stacks.is_empty() {
        return;
    }
    let t = vm_times(data);
    let share = |ns: u64| 100.0 * ns as f64 / t.total_ns.max(1) as f64;
    eprintln!(
        "  VM time by function (sampled; {:.3} ms in all, host calls timed exactly):",
        ms(t.total_ns)
    );
    eprintln!(
        "    {:>11} {:>6} {:>11} {:>6}  function",
        "self ms", "self", "total ms", "total"
    );
    for (f, own, all) in t.functions.iter().take(15) {
        eprintln!(
            "    {:>11.3} {:>5.1}% {:>11.3} {:>5.1}%  {f}",
            ms(*own),
            share(*own),
            ms(*all),
            share(*all)
        );
    }
    if !t.lines.is_empty() {
        eprintln!(
            "  VM time by source line (self; host calls at the line that made them; {}):",
            if every_instruction {
                "sampled at the instruction under way"
            } else {
                "sampled where the loop next polls, a loop head or call"
            }
        );
        for (l, ns) in t.lines.iter().take(15) {
            eprintln!("    {:>11.3} {:>5.1}%  {l}", ms(*ns), share(*ns));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use irvm::profile::{DispatchSite, SampledFrame, SiteTotals, Track};

    #[test]
    fn sites_rank_by_total_and_merge_workgroup_counts() {
        let site = |entry: &str, wg: u32| DispatchSite {
            executable: "e".into(),
            format: "f".into(),
            entry: entry.into(),
            workgroups: [wg, 1, 1],
            location: Some("m.mlir:4:1".into()),
        };
        let data = ProfileData {
            sites: vec![site("a", 1), site("b", 1), site("a", 2)],
            site_totals: vec![
                SiteTotals {
                    count: 1,
                    total_ns: 10,
                },
                SiteTotals {
                    count: 2,
                    total_ns: 15,
                },
                SiteTotals {
                    count: 1,
                    total_ns: 10,
                },
            ],
            ..ProfileData::default()
        };
        let r = ranked_sites(&data);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].name.as_str(), r[0].count, r[0].total_ns),
            ("e::a", 2, 20)
        );
        assert_eq!(r[1].name, "e::b");
    }

    #[test]
    fn busy_counts_each_worker_over_the_wall_time() {
        let data = ProfileData {
            tracks: vec![
                Track {
                    name: "main".into(),
                    busy_ns: 0,
                },
                Track {
                    name: "irvm-hal-worker-1".into(),
                    busy_ns: 250,
                },
                Track {
                    name: "irvm-hal-worker-0".into(),
                    busy_ns: 750,
                },
            ],
            ..ProfileData::default()
        };
        let line = busy_line(&data, 2, Duration::from_nanos(1000)).unwrap();
        assert_eq!(line, "50.0% of 2 workers over the run (0: 75%, 1: 25%)");
        assert!(busy_line(&ProfileData::default(), 2, Duration::from_secs(1)).is_none());
    }

    #[test]
    fn vm_times_split_self_and_total() {
        let f = |name: &str, loc: Option<&str>| SampledFrame {
            function: name.into(),
            location: loc.map(str::to_owned),
        };
        let data = ProfileData {
            frames: vec![
                f("m.main", Some("a.mlir:1:1")),
                f("m.fib", Some("a.mlir:7:3")),
                f("[host] hal.fence.await", None),
            ],
            stacks: vec![vec![0, 1], vec![0, 1, 1], vec![0, 2]],
            stack_ns: vec![100, 50, 30],
            ..ProfileData::default()
        };
        let t = vm_times(&data);
        assert_eq!(t.total_ns, 180);
        assert_eq!(t.functions[0], ("m.fib".to_string(), 150, 150));
        assert_eq!(
            t.functions[1],
            ("[host] hal.fence.await".to_string(), 30, 30)
        );
        assert_eq!(t.functions[2], ("m.main".to_string(), 0, 180));
        assert_eq!(t.lines[0], ("a.mlir:7".to_string(), 150));
        assert_eq!(t.lines[1], ("a.mlir:1".to_string(), 30));
    }
}
