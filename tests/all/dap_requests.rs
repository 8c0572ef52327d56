//! The DAP requests that list the program's parts (`modules` and its
//! events, `loadedSources`, `breakpointLocations`) and `next` by
//! instruction, with raw DAP messages as `tests/all/dap.rs` sends them.

use serde_json::json;

use crate::dap::{launch, path, program, top_frame, Client};

/// The capabilities are announced; `modules` lists the module with the
/// launch's path (as a `module` event did at launch); `loadedSources`
/// names the debug information's file as frames name it.
#[test]
fn modules_and_loaded_sources() {
    let mut c = Client::start();
    let caps = launch(&mut c, program("fib", "5"));
    for cap in [
        "supportsModulesRequest",
        "supportsLoadedSourcesRequest",
        "supportsBreakpointLocationsRequest",
    ] {
        assert_eq!(caps[cap], true, "{cap}: {caps}");
    }
    let fib = std::fs::canonicalize(path("fib.vmfb"))
        .expect("fib.vmfb")
        .display()
        .to_string();
    let event = c.event("module");
    assert_eq!(event["body"]["reason"], "new");
    assert_eq!(event["body"]["module"]["name"], "module");
    assert_eq!(event["body"]["module"]["path"], fib.as_str());
    let modules = c.ok("modules", json!({}));
    assert_eq!(modules["totalModules"], 1, "{modules}");
    assert_eq!(modules["modules"][0]["id"], "module");
    assert_eq!(modules["modules"][0]["path"], fib.as_str());
    assert_eq!(modules["modules"][0]["symbolStatus"], "debug information");
    let none = c.ok("modules", json!({"startModule": 1}));
    assert_eq!(none["modules"], json!([]));
    assert_eq!(none["totalModules"], 1);
    let bad = c.request("modules", json!({"startModule": -1}));
    assert_eq!(bad["success"], false, "{bad}");
    let loaded = c.ok("loadedSources", json!({}));
    let sources = loaded["sources"].as_array().expect("sources");
    assert_eq!(sources.len(), 1, "{loaded}");
    assert_eq!(sources[0]["name"], "fib.mlir");
    let mlir = std::path::Path::new(sources[0]["path"].as_str().expect("a path"));
    assert_eq!(
        std::fs::canonicalize(mlir).expect("on disk"),
        std::fs::canonicalize(path("fib.mlir")).expect("fib.mlir")
    );
    c.disconnect_cleanly();
}

/// `breakpointLocations` gives the lines of a range that have code (as
/// the client counts lines), and a clear error for a file nobody names.
#[test]
fn breakpoint_locations_are_the_lines_with_code() {
    let mut c = Client::start();
    launch(&mut c, program("fib", "5"));
    let source = json!({"path": path("fib.mlir")});
    let all = c.ok(
        "breakpointLocations",
        json!({"source": source, "line": 1, "endLine": 20}),
    );
    let lines: Vec<i64> = all["breakpoints"]
        .as_array()
        .expect("breakpoints")
        .iter()
        .map(|b| b["line"].as_i64().expect("line"))
        .collect();
    // fib.mlir: the constants (4, 5), the loop's entry (6), the compare
    // (7), the condition (8), the loop body (12, 13, 14).
    assert_eq!(lines, [4, 5, 6, 7, 8, 12, 13, 14], "{all}");
    let one = c.ok("breakpointLocations", json!({"source": source, "line": 12}));
    assert_eq!(one["breakpoints"], json!([{"line": 12}]));
    let blank = c.ok(
        "breakpointLocations",
        json!({"source": source, "line": 10, "endLine": 11}),
    );
    assert_eq!(blank["breakpoints"], json!([]));
    let missing = c.request(
        "breakpointLocations",
        json!({"source": {"path": "/nonexistent/x.mlir"}, "line": 1}),
    );
    assert_eq!(
        missing["body"]["error"]["format"],
        "no source `/nonexistent/x.mlir` (not on disk, and no module names it)"
    );
    c.disconnect_cleanly();
}

/// `next` with `granularity: instruction` steps over a call (gdb's
/// `nexti`), `stepIn` by instruction enters it.
#[test]
fn next_by_instruction_steps_over_calls() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("calls.vmfb")], "function": "sum_squares", "inputs": ["4"],
               "sourceDirs": [path("")]}),
    );
    let stop = c.run_to_line("calls.mlir", 13);
    assert_eq!(stop["body"]["reason"], "breakpoint");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 13);
    c.ok("next", json!({"threadId": 1, "granularity": "instruction"}));
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    assert_eq!(frame["line"], 14, "{frame}");
    c.ok("continue", json!({"threadId": 1}));
    c.event("stopped");
    c.ok(
        "stepIn",
        json!({"threadId": 1, "granularity": "instruction"}),
    );
    c.event("stopped");
    let (frame, _) = top_frame(&mut c);
    assert!(
        frame["name"].as_str().expect("name").contains("fn1"),
        "{frame}"
    );
    c.disconnect_cleanly();
}
