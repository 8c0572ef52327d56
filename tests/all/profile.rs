//! `--profile` and the profile's part of `--print_statistics`, as users
//! drive them: a model's dispatches on the timeline of each worker, the
//! trace loading as Chrome's format, the page drawn by a real browser, the
//! sampled VM profile as folded stacks and tables.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::common::cli::irvm;
use crate::common::paths::repo_file;

/// The embedded-ELF build of the conv2d model (several workgroups).
fn conv2d_args() -> Vec<String> {
    let args = std::fs::read_to_string(repo_file("tests/models/conv2d.args")).expect("args");
    let mut v = vec![format!(
        "--module={}",
        repo_file("tests/models/embedded/conv2d.vmfb")
    )];
    v.extend(args.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    v
}

fn load_trace(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).expect("the trace was written");
    serde_json::from_str(&text).expect("the trace is JSON")
}

fn events(trace: &Json) -> &Vec<Json> {
    trace["traceEvents"].as_array().expect("traceEvents")
}

/// The name of each thread (`tid`) the trace names.
fn thread_names(trace: &Json) -> Vec<(u64, String)> {
    events(trace)
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().expect("tid"),
                e["args"]["name"].as_str().expect("name").to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_models_dispatches_land_on_each_workers_track() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("trace.json");
    let mut args = vec!["run".to_string(), "--device=local-task".into()];
    args.push("--task_topology_max_group_count=2".into());
    args.extend(conv2d_args());
    args.push(format!("--profile={}", json.display()));
    args.push("--print_statistics".into());
    let (out, err, code) = irvm(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("result[0]"), "{out}");
    let trace = load_trace(&json);
    let names = thread_names(&trace);
    assert!(
        names.iter().any(|(_, n)| n == "VM (main thread)"),
        "{names:?}"
    );
    let spans: Vec<&Json> = events(&trace).iter().filter(|e| e["ph"] == "X").collect();
    // Every span is well formed: a time, a duration, a thread named.
    for s in &spans {
        assert!(
            s["ts"].as_f64().is_some() && s["dur"].as_f64().unwrap() >= 0.0,
            "{s}"
        );
        let tid = s["tid"].as_u64().unwrap();
        assert!(names.iter().any(|(t, _)| *t == tid), "unnamed thread {tid}");
    }
    let dispatches: Vec<&&Json> = spans.iter().filter(|s| s["cat"] == "dispatch").collect();
    assert!(!dispatches.is_empty(), "no dispatch span");
    for d in &dispatches {
        assert!(
            d["args"]["entry"]
                .as_str()
                .unwrap()
                .starts_with("conv2d_dispatch"),
            "{d}"
        );
        assert_eq!(d["args"]["format"], "embedded-elf-x86_64");
        let wg = d["args"]["workgroups"].as_str().unwrap();
        assert_eq!(wg.split('x').count(), 3, "{wg}");
    }
    // The workgroups run on the workers' own tracks, inside the dispatch.
    let batches: Vec<&&Json> = spans.iter().filter(|s| s["cat"] == "workgroups").collect();
    assert!(!batches.is_empty(), "no workgroup batch");
    let run: u64 = batches
        .iter()
        .map(|b| b["args"]["workgroups run"].as_u64().unwrap())
        .sum();
    let per_dispatch: u64 = dispatches
        .iter()
        .map(|d| {
            d["args"]["workgroups"]
                .as_str()
                .unwrap()
                .split('x')
                .map(|n| n.parse::<u64>().unwrap())
                .product::<u64>()
        })
        .sum();
    assert_eq!(run, per_dispatch, "every workgroup is in one batch");
    // The calling thread is one of the workers (a worker thread slow to
    // wake may find a small dispatch's workgroups all taken).
    for b in &batches {
        let tid = b["tid"].as_u64().unwrap();
        let name = &names.iter().find(|(t, _)| *t == tid).unwrap().1;
        assert!(
            name.starts_with("worker ") || name == "VM (main thread)",
            "a batch on {name}"
        );
    }
    // The native library names the source line of each export.
    for d in &dispatches {
        assert_eq!(d["args"]["location"], "conv2d.mlir:1", "{d}");
    }
    // The end of the dispatch, once a worker is out of work, is a barrier.
    assert!(spans.iter().any(|s| s["cat"] == "barrier"
        && s["name"]
            .as_str()
            .unwrap()
            .starts_with("barrier after conv2d_dispatch")));
    // The wait for the result's fence is a wait.
    assert!(spans
        .iter()
        .any(|s| s["cat"] == "wait" && s["name"] == "hal.fence.await"));
    // Host calls are on the VM's track; memory in use is a counter.
    assert!(spans
        .iter()
        .any(|s| s["cat"] == "host" && s["name"] == "hal.command_buffer.dispatch"));
    assert!(events(&trace)
        .iter()
        .any(|e| e["ph"] == "C" && e["args"]["bytes"].as_u64().is_some()));
    // --print_statistics ranks the dispatches and says how busy the
    // workers were.
    assert!(
        err.contains("dispatches by total time (top 1 of 1)"),
        "{err}"
    );
    assert!(err.contains("conv2d_dispatch_0"), "{err}");
    assert!(err.contains("of 2 workers over the run"), "{err}");
}

#[test]
fn fills_and_copies_are_transfers_and_host_calls_are_leaves_of_the_vm_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("loop.json");
    let folded = dir.path().join("loop.folded");
    let args = std::fs::read_to_string(repo_file("tests/models/loop.args")).unwrap();
    let mut argv = vec![
        "run".to_string(),
        format!("--module={}", repo_file("tests/models/embedded/loop.vmfb")),
        format!("--profile={}", json.display()),
        format!("--profile={}", folded.display()),
    ];
    argv.extend(args.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    let (_, err, code) = irvm(&argv);
    assert_eq!(code, 0, "{err}");
    let trace = load_trace(&json);
    let transfers: Vec<&Json> = events(&trace)
        .iter()
        .filter(|e| e["cat"] == "transfer")
        .collect();
    assert!(!transfers.is_empty(), "no transfer span");
    for t in &transfers {
        assert!(
            ["fill", "copy", "update"].contains(&t["name"].as_str().unwrap()),
            "{t}"
        );
        assert!(t["args"]["bytes"].as_u64().unwrap() > 0, "{t}");
    }
    let stacks = std::fs::read_to_string(&folded).unwrap();
    assert!(
        stacks
            .lines()
            .any(|l| l.contains(";[host] hal.device.queue.execute")),
        "{stacks}"
    );
}

#[test]
fn print_statistics_alone_ranks_dispatches_without_a_timeline() {
    let mut args = vec!["run".to_string(), "--device=local-sync".into()];
    args.extend(conv2d_args());
    args.push("--print_statistics".into());
    let (_, err, code) = irvm(&args);
    assert_eq!(code, 0, "{err}");
    let table: Vec<&str> = err
        .lines()
        .skip_while(|l| !l.contains("dispatches by total time"))
        .collect();
    assert!(table.len() > 2, "{err}");
    // # total share count mean entry: the one dispatch has all the time.
    let row: Vec<&str> = table[2].split_whitespace().collect();
    assert_eq!(row[0], "1", "{err}");
    assert_eq!(row[2], "100.0%", "{err}");
    assert_eq!(row[3], "1", "{err}");
    assert!(
        err.contains("local-sync: workgroups run on the calling thread"),
        "{err}"
    );
    // Without --profile nothing is sampled.
    assert!(!err.contains("VM time by function"), "{err}");
}

fn call_in_loop() -> String {
    format!(
        "--module={}",
        repo_file("benchmarks/corpus/call_in_loop.vmfb")
    )
}

#[test]
fn a_bytecode_program_gets_folded_stacks_and_time_per_function_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("vm.folded");
    let (out, err, code) = irvm(&[
        "run".to_string(),
        call_in_loop(),
        "--input=3000000".into(),
        format!("--profile={}", folded.display()),
        "--print_statistics".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("result[0]: i32="), "{out}");
    let text = std::fs::read_to_string(&folded).unwrap();
    let mut total = 0u64;
    for line in text.lines() {
        // frames;joined;by;semicolons MICROSECONDS
        let (stack, us) = line.rsplit_once(' ').expect("a count");
        total += us.parse::<u64>().expect("an integer count");
        assert!(stack.split(';').all(|f| f.starts_with("module.")), "{line}");
        assert!(stack.contains("call_in_loop.mlir:"), "{line}");
    }
    // The samples cover the run: at least half of the call's time.
    let call_ms: f64 = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("run time (the call):"))
        .and_then(|v| v.trim().trim_end_matches(" ms").parse().ok())
        .expect("run time");
    assert!(
        total as f64 / 1e3 > call_ms * 0.5,
        "{total} us sampled of a {call_ms} ms call"
    );
    // The tables: functions, then lines (exact: --print_statistics runs
    // every instruction through the counting loop).
    assert!(err.contains("VM time by function"), "{err}");
    assert!(
        err.contains("sampled at the instruction under way"),
        "{err}"
    );
    let lines: Vec<&str> = err
        .lines()
        .skip_while(|l| !l.contains("VM time by source line"))
        .skip(1)
        .collect();
    assert!(lines.len() >= 3, "several lines share the time: {err}");
    assert!(lines[0].contains("call_in_loop.mlir:"), "{err}");
}

#[test]
fn compiled_code_is_sampled_and_its_compiles_are_on_the_timeline() {
    // The fast loops with the compiling tier: samples land at loop heads.
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("jit.folded");
    let json = dir.path().join("jit.json");
    let (_, err, code) = irvm(&[
        "run".to_string(),
        call_in_loop(),
        "--input=20000000".into(),
        "--engine=jit".into(),
        format!("--profile={}", folded.display()),
        format!("--profile={}", json.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(!text.is_empty(), "compiled code was never sampled");
    let trace = load_trace(&json);
    let compiles: Vec<&Json> = events(&trace)
        .iter()
        .filter(|e| e["cat"] == "compile")
        .collect();
    assert!(!compiles.is_empty(), "no compile on the timeline");
    assert!(compiles[0]["name"]
        .as_str()
        .unwrap()
        .starts_with("compile function "));
    // The sampled stack has a thread of its own in the trace.
    assert!(thread_names(&trace)
        .iter()
        .any(|(_, n)| n == "VM (main thread): VM functions (sampled)"));
    assert!(events(&trace)
        .iter()
        .any(|e| e["cat"] == "vm" && e["name"] == "module.call_in_loop"));
}

#[test]
fn vmvx_workgroups_run_on_the_calling_thread_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("vmvx.json");
    let args = std::fs::read_to_string(repo_file("tests/models/conv2d.args")).unwrap();
    let mut argv = vec![
        "run".to_string(),
        "--device=local-task".into(),
        format!("--module={}", repo_file("tests/models/conv2d.vmfb")),
        format!("--profile={}", json.display()),
        "--print_statistics".into(),
    ];
    argv.extend(args.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    let (_, err, code) = irvm(&argv);
    assert_eq!(code, 0, "{err}");
    let trace = load_trace(&json);
    let main_tid = thread_names(&trace)
        .iter()
        .find(|(_, n)| n == "VM (main thread)")
        .map(|(t, _)| *t)
        .unwrap();
    let batch = events(&trace)
        .iter()
        .find(|e| e["cat"] == "workgroups")
        .expect("a batch");
    assert_eq!(batch["tid"].as_u64(), Some(main_tid));
    assert_eq!(batch["args"]["format"], "vmvx-bytecode-fb");
    assert!(err.contains("the calling thread ran workgroups"), "{err}");
}

#[test]
fn bench_writes_a_trace_with_the_timed_calls() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let mut args = vec![
        "bench".to_string(),
        "--device=local-task".into(),
        "--benchmark_min_time=5x".into(),
    ];
    args.extend(conv2d_args());
    args.push(format!("--profile={}", json.display()));
    let (_, err, code) = irvm(&args);
    assert_eq!(code, 0, "{err}");
    let trace = load_trace(&json);
    let invocations: Vec<&Json> = events(&trace)
        .iter()
        .filter(|e| e["cat"] == "invocation")
        .collect();
    assert!(
        invocations
            .iter()
            .any(|e| e["name"].as_str().unwrap().contains("timed call")),
        "{invocations:?}"
    );
    let dispatches = events(&trace)
        .iter()
        .filter(|e| e["cat"] == "dispatch")
        .count();
    assert!(dispatches >= 6, "warm-up and 5 timed calls: {dispatches}");
    assert_eq!(trace["otherData"]["tool"], "irvm bench");
}

#[test]
fn a_profile_file_of_unknown_kind_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("trace.txt");
    let (out, err, code) = irvm(&[
        "run".to_string(),
        call_in_loop(),
        "--input=10".into(),
        format!("--profile={}", bad.display()),
    ]);
    assert_ne!(code, 0);
    assert!(out.is_empty(), "nothing ran: {out}");
    assert!(err.contains("--profile="), "{err}");
    assert!(
        err.contains(".json") && err.contains(".html") && err.contains(".folded"),
        "{err}"
    );
    assert!(!bad.exists());
    // A file that cannot be made is an error naming it, before the run.
    let (out, err, code) = irvm(&[
        "run".to_string(),
        call_in_loop(),
        "--input=10".into(),
        "--profile=/nonexistent-dir/p.json".into(),
    ]);
    assert_ne!(code, 0);
    assert!(out.is_empty(), "nothing ran: {out}");
    assert!(err.contains("--profile=/nonexistent-dir/p.json"), "{err}");
}

#[test]
fn a_trapping_call_still_writes_its_profile() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("trap.json");
    // Too few inputs traps at the call.
    let (_, err, code) = irvm(&[
        "run".to_string(),
        format!(
            "--module={}",
            repo_file("tests/models/embedded/conv2d.vmfb")
        ),
        "--function=conv2d".into(),
        "--input=1x6x6x2xf32=1".into(),
        "--input=3x3x2x4xi32=1".into(),
        format!("--profile={}", json.display()),
    ]);
    assert_ne!(code, 0, "{err}");
    load_trace(&json);
}

#[test]
fn a_module_failing_to_initialize_still_writes_its_profile() {
    // vmvx_tiles's __init dispatches a vmvx kernel; 1000 instructions of
    // fuel end it there. The file made at start-up must then hold the
    // profile of what ran (a trace, a page, stacks), not stay empty.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("init.json");
    let html = dir.path().join("init.html");
    for tool in ["run", "bench"] {
        for f in [&json, &html] {
            let _ = std::fs::remove_file(f);
        }
        let (_, err, code) = irvm(&[
            tool.to_string(),
            format!("--module={}", repo_file("tests/models/vmvx_tiles.vmfb")),
            "--function=vmvx_tiles".into(),
            "--input=f32=0.5".into(),
            "--fuel=1000".into(),
            format!("--profile={}", json.display()),
            format!("--profile={}", html.display()),
        ]);
        assert_ne!(code, 0, "{tool}: {err}");
        assert!(err.contains("failed to initialize"), "{tool}: {err}");
        let trace = load_trace(&json);
        assert!(
            thread_names(&trace).iter().any(|(_, n)| n.contains("VM")),
            "{tool}: {trace}"
        );
        let page = std::fs::read_to_string(&html).expect("the page was written");
        assert!(page.contains("</html>"), "{tool}: {page}");
    }
}

/// Runs `irvm TOOL` on spin(10^15) (days) with `--profile`, sends SIGINT
/// once the tool has printed `first_line` (stdout for `run`, stderr for
/// `bench`), and returns its exit code,
/// stderr and the trace it wrote.
fn interrupted_with_profile(tool: &str, first_line: &str) -> (Option<i32>, String, Json) {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stopped.json");
    let mut child = std::process::Command::new(crate::common::cli::irvm_bin())
        .args([
            tool.to_string(),
            format!("--module={}", repo_file("tests/data/spin.vmfb")),
            "--function=spin".into(),
            "--input=1000000000000000".into(),
            format!("--profile={}", json.display()),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("irvm runs");
    // `run` prints EXEC on stdout, `bench` its context lines on stderr,
    // just before the call starts.
    let mut seen = String::new();
    if tool == "run" {
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        stdout.read_line(&mut seen).expect("read");
        assert_eq!(seen.trim_end(), first_line);
    } else {
        let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        while !seen.contains(first_line) {
            assert!(stderr.read_line(&mut seen).expect("read") > 0, "{seen}");
        }
        child.stderr = Some(stderr.into_inner());
    }
    // The tool installs its Ctrl-C handler before printing that line; the
    // wait lets the call run into its loop (a Ctrl-C before its first
    // instruction ends it there, which the caller accepts too).
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: signalling our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().expect("irvm ends");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let trace = load_trace(&json);
    (out.status.code(), err, trace)
}

#[test]
fn ctrl_c_ends_the_call_and_the_profile_of_what_ran_is_written() {
    for (tool, first_line) in [("run", "EXEC @spin"), ("bench", "Load Average")] {
        let (code, err, trace) = interrupted_with_profile(tool, first_line);
        // Ended by the interrupt (exit status 1 and the trap with its
        // backtrace), not killed by the signal.
        assert_eq!(code, Some(1), "irvm {tool}: {err}");
        assert!(
            err.contains("CANCELLED") && err.contains("interrupted"),
            "{err}"
        );
        // Located in the loop (line 8), or at the function's entry (line 4)
        // when the Ctrl-C came before the call's first instruction.
        assert!(
            err.contains("spin.mlir:8") || err.contains("spin.mlir:4"),
            "a located backtrace: {err}"
        );
        if tool == "run" {
            assert!(
                events(&trace).iter().any(|e| e["name"] == "@spin"),
                "the interrupted invocation is on the timeline"
            );
        }
    }
}

/// The Chromium the page test drives: `IRVM_CHROMIUM`, else
/// `/usr/bin/chromium` (`.ci/run` installs it).
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("IRVM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    path.exists().then_some(path)
}

/// Chromium, headless, as this machine's closed network wants it.
fn headless(browser: &Path, profile: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,900",
    ]);
    cmd.arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

#[test]
fn the_page_draws_tracks_bars_and_the_dispatch_table_in_a_browser() {
    let Some(browser) = chromium() else {
        eprintln!(
            "skipping: no Chromium at /usr/bin/chromium (set IRVM_CHROMIUM; .ci/run installs \
             Debian's chromium)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("profile.html");
    let mut args = vec![
        "run".to_string(),
        "--device=local-task".into(),
        "--task_topology_max_group_count=2".into(),
    ];
    args.extend(conv2d_args());
    args.push(format!("--profile={}", page.display()));
    let (_, err, code) = irvm(&args);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: no script, style or image is fetched.
    for needle in ["src=", "<link", "@import", "https://"] {
        assert!(
            !html.contains(needle),
            "the page fetches something: {needle}"
        );
    }
    let out = headless(&browser, &dir.path().join("chromium"))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_drawn(&dom);
    // And a screenshot shows it (a PNG of the window's size).
    let png = dir.path().join("shot.png");
    let shot = headless(&browser, &dir.path().join("chromium2"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(shot.status.success());
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");

    // Names cannot break the page: a module whose file name opens an HTML
    // comment and a script still gets its page drawn.
    let odd = dir.path().join("m<!--<script>.vmfb");
    std::fs::copy(repo_file("tests/models/embedded/conv2d.vmfb"), &odd).unwrap();
    let page = dir.path().join("odd.html");
    let mut args = vec![
        "run".to_string(),
        "--device=local-task".into(),
        "--task_topology_max_group_count=2".into(),
    ];
    args.extend(conv2d_args().into_iter().skip(1));
    args.push(format!("--module={}", odd.display()));
    args.push(format!("--profile={}", page.display()));
    let (_, err, code) = irvm(&args);
    assert_eq!(code, 0, "{err}");
    let out = headless(&browser, &dir.path().join("chromium3"))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    check_drawn(&String::from_utf8_lossy(&out.stdout));
}

/// The page's script ran and drew: a track per thread, bars in them, the
/// dispatch ranked with its source line.
fn check_drawn(dom: &str) {
    assert!(dom.contains("data-label=\"VM (main thread)\""), "{dom}");
    assert!(dom.contains("class=\"span cat-workgroups\""), "{dom}");
    assert!(dom.contains("class=\"span cat-dispatch\""), "{dom}");
    let bars: usize = dom
        .split("data-bars=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .expect("the timeline counts its bars");
    assert!(bars >= 3, "{bars} bars");
    let table = dom
        .split("<table id=\"dispatches\">")
        .nth(1)
        .expect("the dispatch table");
    let body = table.split("</tbody>").next().unwrap();
    assert!(body.contains("conv2d_dispatch_0"), "{body}");
    assert!(body.contains("100.0%"), "{body}");
    assert!(body.contains("conv2d.mlir:1"), "{body}");
}

/// Writes `text` as `NAME.vmasm` in `dir` and assembles it to `NAME.vmfb`.
fn assemble(dir: &Path, name: &str, text: &str) -> PathBuf {
    let src = dir.join(format!("{name}.vmasm"));
    let out = dir.join(format!("{name}.vmfb"));
    std::fs::write(&src, text).unwrap();
    let (_, err, code) = irvm(&[
        "as".to_string(),
        "-o".into(),
        out.display().to_string(),
        src.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn a_loop_free_callee_gets_its_own_time_in_every_engine() {
    // `main` calls `heavy` in a loop; `heavy` is straight-line code with no
    // loop or call, so only the poll before its return can see it on top.
    // (`main` runs compiled between the calls, which leave for the
    // interpreter while a profile samples: its entries and exits are
    // `main`'s time, a few microseconds a pass in a debug build, so
    // `heavy` is made long enough to outweigh them.)
    let mut heavy = String::new();
    for k in 0..1200 {
        heavy.push_str(&format!(
            "  %i0 = vm.mul.i32 %i0, %i0\n  %i1 = vm.const.i32 {k}\n  %i0 = vm.add.i32 %i0, %i1\n"
        ));
    }
    let text = format!(
        "vm.module @leaf version 0\n\
         vm.func @heavy(%i0: i32) -> (i32) {{\n^bb0:\n{heavy}  vm.return %i0\n}}\n\
         vm.export @main\n\
         vm.func @main(%i0: i32) -> (i32) {{\n^bb0:\n  %i1 = vm.const.i32.zero\n  vm.br ^bb1()\n\
         ^bb1:\n  %i1 = vm.call @heavy(%i1)\n  %i2 = vm.const.i32 1\n  %i0 = vm.sub.i32 %i0, %i2\n  \
         vm.cond_br %i0, ^bb1(), ^bb2()\n^bb2:\n  vm.return %i1\n}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let module = assemble(dir.path(), "leaf", &text);
    for engine in ["interp", "jit", "auto"] {
        let folded = dir.path().join(format!("{engine}.folded"));
        let (_, err, code) = irvm(&[
            "run".to_string(),
            format!("--module={}", module.display()),
            "--function=main".into(),
            "--input=30000".into(),
            format!("--engine={engine}"),
            format!("--profile={}", folded.display()),
        ]);
        assert_eq!(code, 0, "{err}");
        let (mut callee, mut all) = (0u64, 0u64);
        for line in std::fs::read_to_string(&folded).unwrap().lines() {
            let (stack, us) = line.rsplit_once(' ').unwrap();
            let us: u64 = us.parse().unwrap();
            all += us;
            if stack.split(';').count() == 2 {
                callee += us;
            }
        }
        assert!(
            callee * 10 > all * 8,
            "{engine}: the callee got {callee} of {all} us"
        );
    }
}

#[test]
fn deep_recursion_is_sampled_with_its_middle_elided() {
    let text = "vm.module @deep version 0\n\
        vm.func @down(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32.zero\n  \
        %i2 = vm.cmp.eq.i32 %i0, %i1\n  vm.cond_br %i2, ^bb1(), ^bb2()\n^bb1:\n  vm.return %i1\n\
        ^bb2:\n  %i7 = vm.const.i32 1\n  %i3 = vm.sub.i32 %i0, %i7\n  %i3 = vm.call @down(%i3)\n  \
        %i3 = vm.add.i32 %i3, %i7\n  vm.return %i3\n}\n\
        vm.export @main\n\
        vm.func @main(%i0: i32, %i1: i32) -> (i32) {\n^bb0:\n  %i5 = vm.const.i32.zero\n  vm.br ^bb1()\n\
        ^bb1:\n  %i6 = vm.call @down(%i1)\n  %i5 = vm.add.i32 %i5, %i6\n  %i7 = vm.const.i32 1\n  \
        %i0 = vm.sub.i32 %i0, %i7\n  vm.cond_br %i0, ^bb1(), ^bb2()\n^bb2:\n  vm.return %i5\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let module = assemble(dir.path(), "deep", text);
    let folded = dir.path().join("deep.folded");
    let json = dir.path().join("deep.json");
    let (out, err, code) = irvm(&[
        "run".to_string(),
        format!("--module={}", module.display()),
        "--function=main".into(),
        "--input=3000".into(),
        "--input=5000".into(),
        format!("--profile={}", folded.display()),
        format!("--profile={}", json.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("i32=15000000"), "{out}");
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(text.contains("[deeper frames elided]"), "{text}");
    for line in text.lines() {
        let frames = line.split(';').count();
        assert!(frames <= 128, "{frames} frames kept");
    }
    // Bounded output: a distinct stack per sampled depth of at most 128
    // frames, not 5000 frames per sample.
    assert!(std::fs::metadata(&json).unwrap().len() < 64 << 20);
    load_trace(&json);
}

/// A `hal.device.queue.fill` of `%i0:1` bytes (a pattern of 8) into a new
/// buffer, waited for.
const QUEUE_FILL: &str = r#"vm.module @qfill version 0
vm.type i32
vm.type i64
vm.type !hal.allocator
vm.type !hal.buffer
vm.type !hal.device
vm.type !hal.fence
vm.import @hal.allocator.allocate cconv "0rIiiI_r"
vm.import @hal.device.allocator cconv "0r_r"
vm.import @hal.devices.get cconv "0i_r"
vm.import @hal.fence.await cconv "0iICrD_i"
vm.import @hal.fence.create cconv "0rI_r"
vm.import @hal.device.queue.fill cconv "0rIrrrIIIiI_v"

vm.export @fill
vm.func @fill(%i0:1: i64) -> (i32) {
^bb0:
  %i8 = vm.const.i32.zero
  %i9 = vm.const.i32 48
  %i10 = vm.const.i32 3075
  %i13 = vm.const.i32 8
  %i14:15 = vm.const.i64 -1
  %i16:17 = vm.const.i64.zero
  %i18:19 = vm.const.i64 578437695752307201
  %r0 = vm.call @hal.devices.get(%i8)
  %r1 = vm.call @hal.device.allocator(%r0)
  %r2 = vm.call @hal.allocator.allocate(%r1, %i14:15, %i9, %i10, %i0:1)
  %r3 = vm.call @hal.fence.create(%r0, %i16:17)
  %r4 = vm.const.ref.zero
  vm.call @hal.device.queue.fill(%r0, %i14:15, %r4, %r3, %r2, %i16:17, %i0:1, %i18:19, %i13, %i16:17)
  vm.call.variadic.yieldable @hal.fence.await segments[65535, 65535, 1](%i8, %i14:15, %r3) -> ^bb1(%i20)
^bb1:
  vm.return %i20
}
"#;

#[test]
fn a_transfer_that_fails_is_on_the_transfer_track() {
    // A fill of 2 GiB refused for want of fuel (the same path as one a
    // deadline stops part way): the time it took is on the track, no bytes
    // counted, as a finished one's would be. (Fuel, not a deadline: the
    // outcome does not depend on the machine's speed.)
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("qfill.vmasm");
    std::fs::write(&module, QUEUE_FILL).unwrap();
    let json = dir.path().join("fill.json");
    let (_, err, code) = irvm(&[
        "run".to_string(),
        format!("--module={}", module.display()),
        "--function=fill".into(),
        format!("--input={}", 2u64 << 30),
        "--fuel=100000".into(),
        format!("--profile={}", json.display()),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("RESOURCE_EXHAUSTED") && err.contains("fuel"),
        "{err}"
    );
    let trace = load_trace(&json);
    let fills: Vec<&Json> = events(&trace)
        .iter()
        .filter(|e| e["cat"] == "transfer" && e["name"] == "fill")
        .collect();
    assert_eq!(fills.len(), 1, "{fills:?}");
    assert_eq!(fills[0]["args"]["bytes"].as_u64(), Some(0), "{}", fills[0]);
}
