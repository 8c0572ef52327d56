//! A profile's sampled VM stacks as folded stacks: one line per stack,
//! its frames outermost first joined by `;`, then a space and its time in
//! microseconds; what `flamegraph.pl`, inferno and speedscope read. A
//! frame is `module.function (file:line)` where the debug information
//! places it, and a host call's leaf is `[host] module.function`.

use irvm::profile::{ProfileData, SampledFrame};

/// `file:line` of a `file:line:col` location.
pub(crate) fn line_of(location: &str) -> &str {
    match location.rsplit_once(':') {
        Some((head, col)) if col.chars().all(|c| c.is_ascii_digit()) && head.contains(':') => head,
        _ => location,
    }
}

/// A frame as folded stacks name it (no `;`, which separates frames).
pub(crate) fn frame_label(f: &SampledFrame) -> String {
    let label = match &f.location {
        Some(loc) => format!("{} ({})", f.function, line_of(loc)),
        None => f.function.clone(),
    };
    label.replace(';', ":").replace('\n', " ")
}

/// The folded-stacks text.
pub fn stacks(data: &ProfileData) -> String {
    let labels: Vec<String> = data.frames.iter().map(frame_label).collect();
    // Stacks whose frames differ only in offsets within a line are one.
    let mut merged: std::collections::BTreeMap<String, u64> = Default::default();
    for (stack, &ns) in data.stacks.iter().zip(&data.stack_ns) {
        if ns == 0 {
            continue;
        }
        let names: Vec<&str> = stack
            .iter()
            .map(|&f| labels.get(f as usize).map_or("?", String::as_str))
            .collect();
        *merged.entry(names.join(";")).or_default() += ns;
    }
    let lines: Vec<String> = merged
        .iter()
        .map(|(stack, ns)| format!("{stack} {}", ns.div_ceil(1000)))
        .collect();
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_fold_with_lines_and_microseconds() {
        let data = ProfileData {
            frames: vec![
                SampledFrame {
                    function: "m.main".into(),
                    location: Some("a.mlir:3:5".into()),
                },
                SampledFrame {
                    function: "[host] hal.fence.await".into(),
                    location: None,
                },
                // Another offset on the same line.
                SampledFrame {
                    function: "m.main".into(),
                    location: Some("a.mlir:3:9".into()),
                },
            ],
            stacks: vec![vec![0], vec![0, 1], vec![2]],
            stack_ns: vec![2_500, 1_000_000, 500],
            ..ProfileData::default()
        };
        assert_eq!(
            stacks(&data),
            "m.main (a.mlir:3) 3\nm.main (a.mlir:3);[host] hal.fence.await 1000\n"
        );
        assert_eq!(line_of("x.mlir:10:2"), "x.mlir:10");
        assert_eq!(line_of("no-column"), "no-column");
    }
}
