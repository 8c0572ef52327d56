//! A profile as a trace in Chrome's trace event format (the JSON object
//! form: `traceEvents` plus metadata), which Perfetto and chrome://tracing
//! load: one process, one thread per track (`tid` = track + 1), a second
//! thread per track for its sampled VM stack (`tid` = 10,001 + track),
//! complete events (`ph: "X"`) for spans, counter events (`"C"`) for
//! memory in use, metadata events (`"M"`) naming the threads.

use std::fmt::Write as _;

use irvm::profile::{EventKind, ProfileData, SpanKind};

use super::{micros, sampled_spans, track_label, RunInfo};

/// The `tid` of the sampled-stack thread of track `track`.
pub const SAMPLED_TID_BASE: u32 = 10_001;

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into())
}

/// The trace as JSON text.
pub fn trace_json(data: &ProfileData, info: &RunInfo) -> String {
    let mut out = String::with_capacity(256 + data.events.len() * 160);
    out.push_str("{\"displayTimeUnit\":\"ms\",\"otherData\":{");
    let _ = write!(
        out,
        "\"tool\":{},\"modules\":{},\"functions\":{},\"device\":{},\"dropped_events\":{}",
        quoted(info.tool),
        quoted(&info.modules.join(" ")),
        quoted(&info.functions.join(" ")),
        quoted(&info.device),
        data.dropped_events
    );
    out.push_str("},\"traceEvents\":[\n");
    let mut first = true;
    let mut push = |out: &mut String, event: String| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(&event);
    };
    push(
        &mut out,
        format!(
            "{{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            quoted(&format!("{} {}", info.tool, info.modules.join(" ")))
        ),
    );
    let sampled = sampled_spans(data);
    let mut order: Vec<usize> = (0..data.tracks.len()).collect();
    order.sort_by_key(|&k| super::track_order(&data.tracks[k].name));
    for (rank, &k) in order.iter().enumerate() {
        let t = &data.tracks[k];
        let tid = k as u32 + 1;
        push(
            &mut out,
            format!(
                "{{\"ph\":\"M\",\"pid\":1,\"tid\":{tid},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                quoted(&track_label(&t.name))
            ),
        );
        push(
            &mut out,
            format!(
                "{{\"ph\":\"M\",\"pid\":1,\"tid\":{tid},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
                2 * rank + 1
            ),
        );
        if sampled.iter().any(|s| s.track == k as u32) {
            let stid = SAMPLED_TID_BASE + k as u32;
            push(
                &mut out,
                format!(
                    "{{\"ph\":\"M\",\"pid\":1,\"tid\":{stid},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                    quoted(&format!("{}: VM functions (sampled)", track_label(&t.name)))
                ),
            );
            push(
                &mut out,
                format!(
                    "{{\"ph\":\"M\",\"pid\":1,\"tid\":{stid},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
                    2 * rank + 2
                ),
            );
        }
    }
    for e in &data.events {
        let name = data.names.get(e.name as usize).map_or("?", String::as_str);
        let tid = e.track + 1;
        let ts = micros(e.start_ns);
        match e.kind {
            EventKind::Span { kind, site, count } => {
                let mut args = String::new();
                if let Some(site) = site.and_then(|s| data.sites.get(s as usize)) {
                    let [x, y, z] = site.workgroups;
                    let _ = write!(
                        args,
                        "\"executable\":{},\"format\":{},\"entry\":{},\"workgroups\":\"{x}x{y}x{z}\",\"location\":{}",
                        quoted(&site.executable),
                        quoted(&site.format),
                        quoted(&site.entry),
                        site.location.as_deref().map_or("null".into(), quoted),
                    );
                }
                match kind {
                    SpanKind::Batch => {
                        let _ = write!(args, ",\"workgroups run\":{count}");
                    }
                    SpanKind::Barrier => {
                        let _ = write!(args, ",\"workers that ran none\":{count}");
                    }
                    SpanKind::Transfer => {
                        let _ = write!(args, "\"bytes\":{count}");
                    }
                    _ => {}
                }
                push(
                    &mut out,
                    format!(
                        "{{\"ph\":\"X\",\"pid\":1,\"tid\":{tid},\"ts\":{ts},\"dur\":{},\"name\":{},\"cat\":\"{}\",\"args\":{{{args}}}}}",
                        micros(e.dur_ns),
                        quoted(name),
                        kind.category()
                    ),
                );
            }
            EventKind::Counter { value } => push(
                &mut out,
                format!(
                    "{{\"ph\":\"C\",\"pid\":1,\"tid\":{tid},\"ts\":{ts},\"name\":{},\"args\":{{\"bytes\":{value}}}}}",
                    quoted(name)
                ),
            ),
        }
    }
    for s in &sampled {
        let frame = data.frames.get(s.frame as usize);
        let name = frame.map_or("?", |f| f.function.as_str());
        let location = frame
            .and_then(|f| f.location.as_deref())
            .map_or("null".into(), quoted);
        push(
            &mut out,
            format!(
                "{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":\"vm\",\"args\":{{\"location\":{location}}}}}",
                SAMPLED_TID_BASE + s.track,
                micros(s.start_ns),
                micros(s.end_ns - s.start_ns),
                quoted(name)
            ),
        );
    }
    out.push_str("\n]}\n");
    out
}
