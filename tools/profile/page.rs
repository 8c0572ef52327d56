//! A profile as one self-contained HTML page (no network, no external
//! file): the timeline drawn as SVG, one row per track and a row under it
//! for its sampled VM stack (wheel or buttons zoom, drag pans, hovering a
//! bar names it), the dispatches ranked by total time with their source
//! locations, and the sampled VM time by function. The data rides in the
//! page as JSON; `page.js` draws it.

use std::fmt::Write as _;

use irvm::profile::{EventKind, ProfileData};

use super::summary::{ranked_sites, vm_times};
use super::{micros, sampled_spans, track_label, RunInfo};

/// Most spans the page carries (the longest are kept): a browser draws
/// this many without trouble.
pub const MAX_PAGE_SPANS: usize = 200_000;

fn quoted(s: &str) -> String {
    // No `<` at all inside the script element the JSON sits in: `</script`
    // would close it, and `<!--` with `<script` would make the parser skip
    // past its real end.
    serde_json::to_string(s)
        .unwrap_or_else(|_| "\"?\"".into())
        .replace('<', "\\u003c")
}

/// Nesting depth of each span of one track: a span inside another (the
/// host call a dispatch runs in) sits one row lower.
fn depths(spans: &[(u64, u64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by(|&a, &b| {
        spans[a]
            .0
            .cmp(&spans[b].0)
            .then(spans[b].1.cmp(&spans[a].1))
    });
    let mut depth = vec![0; spans.len()];
    let mut open: Vec<u64> = Vec::new();
    for i in order {
        let (start, dur) = spans[i];
        while open.last().is_some_and(|&end| end <= start) {
            open.pop();
        }
        depth[i] = open.len();
        open.push(start + dur);
    }
    depth
}

/// The page as HTML text.
pub fn html(data: &ProfileData, info: &RunInfo) -> String {
    let mut json = String::with_capacity(1 << 16);
    let _ = write!(
        json,
        "{{\"tool\":{},\"modules\":{},\"called\":{},\"device\":{},\"elapsed_us\":{},\"dropped\":{},",
        quoted(info.tool),
        quoted(&info.modules.join(" ")),
        quoted(&info.functions.join(" ")),
        quoted(&info.device),
        micros(data.elapsed_ns),
        data.dropped_events
    );
    json.push_str("\"tracks\":[");
    for (k, t) in data.tracks.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        let _ = write!(json, "{}", quoted(&track_label(&t.name)));
    }
    json.push_str("],\"track_order\":[");
    let mut order: Vec<usize> = (0..data.tracks.len()).collect();
    order.sort_by_key(|&k| super::track_order(&data.tracks[k].name));
    for (k, t) in order.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        let _ = write!(json, "{t}");
    }
    json.push_str("],\"names\":[");
    for (k, n) in data.names.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        json.push_str(&quoted(n));
    }
    // Spans: [track, depth, category, name, start_us, dur_us, site].
    let mut spans: Vec<(u32, u32, &'static str, u64, u64, i64)> = data
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Span { kind, site, .. } => Some((
                e.track,
                e.name,
                kind.category(),
                e.start_ns,
                e.dur_ns,
                site.map_or(-1, i64::from),
            )),
            EventKind::Counter { .. } => None,
        })
        .collect();
    let dropped_here = spans.len().saturating_sub(MAX_PAGE_SPANS);
    if dropped_here > 0 {
        spans.sort_by_key(|s| std::cmp::Reverse(s.4));
        spans.truncate(MAX_PAGE_SPANS);
    }
    let mut depth = vec![0usize; spans.len()];
    for track in 0..data.tracks.len() as u32 {
        let idx: Vec<usize> = (0..spans.len()).filter(|&i| spans[i].0 == track).collect();
        let ranges: Vec<(u64, u64)> = idx.iter().map(|&i| (spans[i].3, spans[i].4)).collect();
        for (i, d) in idx.iter().zip(depths(&ranges)) {
            depth[*i] = d;
        }
    }
    json.push_str("],\"spans\":[");
    for (k, (s, d)) in spans.iter().zip(&depth).enumerate() {
        if k > 0 {
            json.push(',');
        }
        let _ = write!(
            json,
            "[{},{},\"{}\",{},{},{},{}]",
            s.0,
            d,
            s.2,
            s.1,
            micros(s.3),
            micros(s.4),
            s.5
        );
    }
    let _ = write!(json, "],\"page_dropped\":{dropped_here},\"sampled\":[");
    let mut sampled = sampled_spans(data);
    if sampled.len() > MAX_PAGE_SPANS {
        sampled.sort_by_key(|s| std::cmp::Reverse(s.end_ns - s.start_ns));
        sampled.truncate(MAX_PAGE_SPANS);
    }
    for (k, s) in sampled.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        let _ = write!(
            json,
            "[{},{},{},{},{}]",
            s.track,
            s.depth,
            s.frame,
            micros(s.start_ns),
            micros(s.end_ns - s.start_ns)
        );
    }
    json.push_str("],\"frames\":[");
    for (k, f) in data.frames.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        let _ = write!(
            json,
            "[{},{}]",
            quoted(&f.function),
            f.location.as_deref().map_or("null".into(), quoted)
        );
    }
    json.push_str("],\"sites\":[");
    for (k, s) in data.sites.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        let [x, y, z] = s.workgroups;
        let _ = write!(
            json,
            "[{},{},\"{x}x{y}x{z}\",{}]",
            quoted(&s.executable),
            quoted(&s.entry),
            s.location.as_deref().map_or("null".into(), quoted)
        );
    }
    json.push_str("],\"ranked\":[");
    for (k, r) in ranked_sites(data).iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        let _ = write!(
            json,
            "[{},{},{},{}]",
            quoted(&r.name),
            quoted(&r.location),
            r.count,
            micros(r.total_ns)
        );
    }
    json.push_str("],\"functions\":[");
    let times = vm_times(data);
    for (k, (f, own, all)) in times.functions.iter().take(100).enumerate() {
        if k > 0 {
            json.push(',');
        }
        let _ = write!(json, "[{},{},{}]", quoted(f), micros(*own), micros(*all));
    }
    let _ = write!(json, "],\"vm_total_us\":{}}}", micros(times.total_ns));
    let mut page = String::with_capacity(json.len() + PAGE_JS.len() + 4096);
    page.push_str(PAGE_HEAD);
    page.push_str("<script id=\"profile-data\" type=\"application/json\">");
    page.push_str(&json);
    page.push_str("</script>\n<script>\n");
    page.push_str(PAGE_JS);
    page.push_str("</script>\n</body>\n</html>\n");
    page
}

const PAGE_HEAD: &str = include_str!("page_head.html");
const PAGE_JS: &str = include_str!("page.js");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_spans_sit_one_row_lower() {
        // An invocation holding a host call holding a dispatch; then a
        // second call after the first.
        let d = depths(&[(0, 100), (10, 50), (20, 10), (70, 5)]);
        assert_eq!(d, vec![0, 1, 2, 1]);
    }

    #[test]
    fn the_data_cannot_close_its_script_element() {
        assert_eq!(quoted("</script>"), "\"\\u003c/script>\"");
        assert!(!quoted("<!--<script>").contains('<'));
    }
}
