//! The DAP requests that list the program's parts (`modules` and its
//! events, `loadedSources`, `breakpointLocations`) and `next` by
//! instruction, with raw DAP messages as `tests/all/dap.rs` sends them.

use serde_json::json;

use crate::dap::{base64_decode, launch, path, program, scope_variables, top_frame, Client};

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

/// Two launched modules of one name (as `irvm run` links them: the later
/// one wins lookups) are two DAP modules with ids of their own (the
/// protocol's `id` is unique: both were `module`, so an editor kept one).
#[test]
fn modules_of_one_name_have_ids_of_their_own() {
    let mut c = Client::start();
    let mut args = program("fib", "5");
    args["modules"] = json!([path("fib.vmfb"), path("fib.vmfb")]);
    launch(&mut c, args);
    let first = c.event("module");
    let second = c.event("module");
    assert_eq!(first["body"]["module"]["id"], "module");
    assert_eq!(second["body"]["module"]["id"], "module#2");
    let modules = c.ok("modules", json!({}));
    assert_eq!(modules["totalModules"], 2, "{modules}");
    assert_eq!(modules["modules"][0]["id"], "module");
    assert_eq!(modules["modules"][1]["id"], "module#2");
    assert_eq!(modules["modules"][1]["name"], "module");
    c.disconnect_cleanly();
}

/// A module named as the id a later module of a repeated name gets
/// (`module#2`) does not share it: ids stay unique however modules are
/// named (the third module's id was `module#2` too).
#[test]
fn module_ids_stay_unique_when_a_name_looks_like_an_id() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let odd = dir.path().join("odd.vmasm");
    std::fs::write(
        &odd,
        "vm.module @\"module#2\" version 0
vm.export @other
vm.func @other(%i0: i32) -> (i32) {
^bb0:
  vm.return %i0
}
",
    )
    .expect("written");
    let mut c = Client::start();
    let mut args = program("fib", "5");
    args["modules"] = json!([path("fib.vmfb"), path("fib.vmfb"), odd]);
    args["function"] = json!("other");
    launch(&mut c, args);
    let modules = c.ok("modules", json!({}));
    let ids: Vec<&str> = modules["modules"]
        .as_array()
        .expect("modules")
        .iter()
        .map(|m| m["id"].as_str().expect("an id"))
        .collect();
    assert_eq!(ids, ["module", "module#2", "module#2#3"], "{modules}");
    assert_eq!(modules["modules"][2]["name"], "module#2");
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

/// Standard base64 of `bytes` (the test's own, to check the adapter's).
fn base64_encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (k, &b)| n | u32::from(b) << (16 - 8 * k));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(DIGITS[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The memory reference of ref register `name` in the top frame.
fn memory_reference(c: &mut Client, name: &str) -> serde_json::Value {
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    let refs = scope_variables(c, &st["stackFrames"][0]["id"], "ref registers");
    let var = refs
        .iter()
        .find(|v| v["name"] == name)
        .expect("the register");
    var["memoryReference"].clone()
}

/// `writeMemory` writes a tensor's bytes (the program computes with
/// them), refuses what does not fit unless `allowPartial`, and refuses a
/// module's rodata as read-only.
#[test]
fn write_memory_changes_what_the_program_computes() {
    let mut c = Client::start();
    let caps = launch(
        &mut c,
        json!({"modules": [path("../models/add.vmfb")], "function": "add",
               "inputs": ["2x3xf32=1,2,3,4,5,6", "2x3xf32=10"], "stopOnEntry": true}),
    );
    assert_eq!(caps["supportsWriteMemoryRequest"], true);
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    let reference = memory_reference(&mut c, "%r0");
    let hundred = base64_encode(&[100f32.to_le_bytes(), 200f32.to_le_bytes()].concat());
    let w = c.ok(
        "writeMemory",
        json!({"memoryReference": reference, "offset": 4, "data": hundred}),
    );
    assert_eq!(w["bytesWritten"], 8, "{w}");
    let m = c.ok(
        "readMemory",
        json!({"memoryReference": reference, "offset": 0, "count": 12}),
    );
    let floats: Vec<f32> = base64_decode(m["data"].as_str().expect("data"))
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(floats, [1.0, 100.0, 200.0]);
    // 8 bytes at 20 of 24: nothing written, unless partial.
    let over = c.request(
        "writeMemory",
        json!({"memoryReference": reference, "offset": 20, "data": hundred}),
    );
    assert_eq!(over["success"], false);
    assert_eq!(
        over["message"],
        "8 bytes at offset 20 do not fit in the contents (24 bytes): nothing written \
         (allowPartial writes what fits)"
    );
    let part = c.ok(
        "writeMemory",
        json!({"memoryReference": reference, "offset": 20, "data": hundred, "allowPartial": true}),
    );
    assert_eq!(part["bytesWritten"], 4);
    let bad = c.request(
        "writeMemory",
        json!({"memoryReference": reference, "data": "%%%"}),
    );
    assert!(
        bad["message"]
            .as_str()
            .expect("message")
            .starts_with("`data` is not base64"),
        "{bad}"
    );
    // Only references handed out name memory: `m+1` and `m01` are not
    // `m1`, this one.
    assert_eq!(reference, "m1");
    for other in ["m+1", "m01", "m0", "m-1", "m"] {
        for command in ["writeMemory", "readMemory"] {
            let refused = c.request(
                command,
                json!({"memoryReference": other, "data": "AAAA", "count": 4}),
            );
            assert_eq!(
                refused["message"],
                format!("no memory with reference `{other}`"),
                "{refused}"
            );
        }
    }
    c.ok("continue", json!({"threadId": 1}));
    let mut outputs = String::new();
    loop {
        let e = c.event("output");
        let text = e["body"]["output"].as_str().unwrap_or("").to_string();
        outputs.push_str(&text);
        if text.starts_with("result[0]") {
            break;
        }
    }
    // 1 + 10, 100 + 10, 200 + 10, ..., the last 100 + 10.
    assert!(outputs.contains("11 110 210"), "{outputs}");
    assert!(outputs.contains("110]"), "{outputs}");
    c.disconnect_cleanly();
}

#[test]
fn write_memory_refuses_rodata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let module = dir.path().join("ro.vmasm");
    std::fs::write(
        &module,
        "vm.module @ro version 0\nvm.type !vm.buffer\nvm.rodata[0] = 01020304\n\
         vm.export @f\nvm.func @f() -> (!vm.buffer) {\n^bb0:\n  %r0 = vm.const.ref.rodata 0\n\
         vm.return %r0\n}\n",
    )
    .expect("module");
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [module.display().to_string()], "function": "f", "stopOnEntry": true}),
    );
    c.ok("configurationDone", json!({}));
    c.event("stopped");
    c.ok("next", json!({"threadId": 1, "granularity": "instruction"}));
    c.event("stopped");
    let reference = memory_reference(&mut c, "%r0");
    let refused = c.request(
        "writeMemory",
        json!({"memoryReference": reference, "data": base64_encode(&[9])}),
    );
    assert_eq!(
        refused["message"],
        "the memory is read-only: constant data (a module's rodata, or memory a host module \
         lends, such as a parameter archive's)"
    );
    let m = c.ok(
        "readMemory",
        json!({"memoryReference": reference, "count": 4}),
    );
    assert_eq!(
        base64_decode(m["data"].as_str().expect("data")),
        [1, 2, 3, 4]
    );
    c.disconnect_cleanly();
}

/// `setExpression` sets a register named as such or by its source name,
/// as `setVariable` does; other expressions are refused. Data breakpoints
/// take `read` and `readWrite` (as `rwatch` and `awatch`): a read stops
/// with the value read.
#[test]
fn set_expression_and_read_data_breakpoints() {
    let mut c = Client::start();
    let caps = launch(&mut c, program("fib", "5"));
    assert_eq!(caps["supportsSetExpression"], true);
    c.run_to_line("fib.mlir", 13);
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    let frame = st["stackFrames"][0]["id"].clone();
    let set = c.ok(
        "setExpression",
        json!({"expression": "%next", "value": "41", "frameId": frame}),
    );
    assert_eq!(set["value"], "41", "{set}");
    let set = c.ok("setExpression", json!({"expression": "%i1", "value": "2"}));
    assert_eq!(set["value"], "2", "{set}");
    let read = c.ok("evaluate", json!({"expression": "%next", "frameId": frame}));
    assert_eq!(read["result"], "41");
    let refused = c.request(
        "setExpression",
        json!({"expression": "%i1 + 1", "value": "2"}),
    );
    assert_eq!(refused["success"], false, "{refused}");
    let info = c.ok(
        "dataBreakpointInfo",
        json!({"frameId": frame, "name": "%i1"}),
    );
    let id = info["dataId"].clone();
    let set = c.ok(
        "setDataBreakpoints",
        json!({"breakpoints": [{"dataId": id, "accessType": "read"}, {"dataId": id, "accessType": "execute"}]}),
    );
    assert_eq!(set["breakpoints"][0]["verified"], true, "{set}");
    assert_eq!(
        set["breakpoints"][1]["message"],
        "unknown `accessType` `execute` (write, read or readWrite)"
    );
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": []}),
    );
    c.ok("continue", json!({"threadId": 1}));
    // Line 13 adds 1 to %i1 (2, as set): a read of 2.
    let stop = c.event("stopped");
    assert_eq!(stop["body"]["reason"], "data breakpoint", "{stop}");
    assert_eq!(stop["body"]["description"], "%i1 read");
    assert_eq!(stop["body"]["text"], "%i1: read 2");
    c.disconnect_cleanly();
}

/// `restart` after `terminate` is refused, saying why: the client ended
/// the program (its reader gave up every wait of the session), and a
/// restart accepted then started a program cancelled at once, which
/// reported nothing (no `stopped`, no `exited`) and ran no further.
#[test]
fn restart_after_terminate_is_refused() {
    let mut c = Client::start();
    let mut args = program("fib", "5");
    args["stopOnEntry"] = json!(true);
    launch(&mut c, args);
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    c.ok("terminate", json!({}));
    c.event("terminated");
    let refused = c.request("restart", json!({"arguments": program("fib", "6")}));
    assert_eq!(refused["success"], false, "{refused}");
    assert_eq!(
        refused["message"],
        "the program was ended by `terminate`: start a new session to run it again"
    );
    c.disconnect_cleanly();
}

/// `restart` starts the program again, keeping its breakpoints; with new
/// `inputs` and `stopOnEntry`; refused where it would change the modules;
/// and while the program runs, it abandons the run for the new one.
#[test]
fn restart_runs_the_program_again() {
    let mut c = Client::start();
    let caps = launch(&mut c, program("fib", "5"));
    assert_eq!(caps["supportsRestartRequest"], true);
    let early = c.request("restart", json!({}));
    assert_eq!(
        early["message"],
        "the program has not started (send `configurationDone`)"
    );
    c.run_to_line("fib.mlir", 12);
    c.ok("continue", json!({"threadId": 1}));
    c.event("stopped");
    let k = |c: &mut Client| {
        let st = c.ok("stackTrace", json!({"threadId": 1}));
        let frame = st["stackFrames"][0]["id"].clone();
        c.ok("evaluate", json!({"expression": "%i1", "frameId": frame}))["result"].clone()
    };
    assert_eq!(k(&mut c), "1");
    c.ok("restart", json!({}));
    assert_eq!(c.event("output")["body"]["output"], "EXEC @fib\n");
    assert_eq!(c.event("stopped")["body"]["reason"], "breakpoint");
    // The first iteration again.
    assert_eq!(k(&mut c), "0");
    let mut other = program("fib", "5");
    other["modules"] = json!([path("calls.vmfb")]);
    let refused = c.request("restart", json!({"arguments": other}));
    assert_eq!(
        refused["message"],
        "`restart` cannot change `modules` (the modules would be loaded again): start a new \
         session for that"
    );
    let mut three = program("fib", "3");
    three["stopOnEntry"] = json!(true);
    c.ok("restart", json!({"arguments": three}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path("fib.mlir")}, "breakpoints": []}),
    );
    c.ok("continue", json!({"threadId": 1}));
    let result = loop {
        let text = c.event("output")["body"]["output"].clone();
        if text.as_str().is_some_and(|t| t.starts_with("result")) {
            break text;
        }
    };
    assert_eq!(result, "result[0]: i32=2\n");
    c.disconnect_cleanly();

    // While it runs (a long loop): the run is abandoned for the new one.
    let mut c = Client::start();
    launch(&mut c, program("fib", "2000000000"));
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("output")["body"]["output"], "EXEC @fib\n");
    // Well inside the loop (which runs for seconds).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut five = program("fib", "5");
    five["stopOnEntry"] = json!(true);
    c.ok("restart", json!({"arguments": five}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    c.ok("continue", json!({"threadId": 1}));
    let result = loop {
        let text = c.event("output")["body"]["output"].clone();
        if text.as_str().is_some_and(|t| t.starts_with("result")) {
            break text;
        }
    };
    assert_eq!(result, "result[0]: i32=5\n");
    c.disconnect_cleanly();
}

/// The debug console keeps gdb's value history as `irvm dbg` does: each
/// call's result is `$N = VALUE`, and `$N`, `$` and `$$N` read it back (in
/// any context: a watch too; alone or inside an expression), with gdb's
/// words for what it has not reached.
#[test]
fn the_debug_console_keeps_gdbs_value_history() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("dbg/frames.vmasm")], "function": "main", "inputs": ["5"],
               "sourceDirs": [path("")]}),
    );
    c.run_to_line("dbg/frames.src", 9);
    let (frame, _) = top_frame(&mut c);
    let evaluate = |c: &mut Client, expression: &str, context: &str| {
        c.request(
            "evaluate",
            json!({"expression": expression, "context": context, "frameId": frame["id"]}),
        )
    };
    let empty = evaluate(&mut c, "$", "repl");
    assert_eq!(empty["message"], "History is empty.", "{empty}");
    for (call, shown) in [("twice(4)", "$1 = 8"), ("twice(%i0)", "$2 = 10")] {
        let called = evaluate(&mut c, call, "repl");
        assert_eq!(called["body"]["result"], shown, "{called}");
    }
    for (reference, value) in [("$1", "8"), ("$", "10"), ("$$", "8"), ("$$0", "10")] {
        let read = evaluate(&mut c, reference, "repl");
        assert_eq!(read["body"]["result"], value, "{reference}: {read}");
        assert_eq!(read["body"]["type"], "i32", "{read}");
    }
    let watched = evaluate(&mut c, "$2", "watch");
    assert_eq!(watched["body"]["result"], "10", "{watched}");
    // Inside a larger expression, of its own type.
    let sum = evaluate(&mut c, "$1 + $2 * 2", "watch");
    assert_eq!(sum["body"]["result"], "28", "{sum}");
    let missing = evaluate(&mut c, "$7 + 1", "repl");
    assert_eq!(missing["message"], "History has not yet reached $7.");
    let far = evaluate(&mut c, "$3", "repl");
    assert_eq!(far["message"], "History has not yet reached $3.");
    let back = evaluate(&mut c, "$$5", "repl");
    assert_eq!(back["message"], "History does not go back to $$5.");
    c.disconnect_cleanly();
}

/// `evaluate` (a watch, a hover, the debug console) reads C's unsigned
/// and sized integer types as `irvm dbg`'s `print` does, each value as
/// gdb 13.1 prints it (`print 0xFFFFFFFFFFFFFFFF` is
/// 18446744073709551615, an `unsigned long`; `print -1 < 1u` is 0; `print
/// (unsigned char)200` is `200 '\310'`; `int x = 5; print x - 6u` is
/// 4294967295, an `unsigned int`).
#[test]
fn evaluate_reads_unsigned_and_sized_integers_as_dbg_does() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("dbg/frames.vmasm")], "function": "main", "inputs": ["5"],
               "sourceDirs": [path("")]}),
    );
    c.run_to_line("dbg/frames.src", 9);
    let (frame, _) = top_frame(&mut c);
    let cases = [
        ("0xFFFFFFFFFFFFFFFF", "18446744073709551615", "ui64"),
        ("-1 < 1u", "0", "i32"),
        ("-1 / 2u", "2147483647", "ui32"),
        ("(unsigned char)200", "200 '\\310'", "ui8"),
        ("%i0 - 6u", "4294967295", "ui32"),
        ("(long)%i0 - 6u", "-1", "i64"),
    ];
    for context in ["watch", "hover", "repl"] {
        for (expression, value, ty) in cases {
            let e = c.request(
                "evaluate",
                json!({"expression": expression, "context": context, "frameId": frame["id"]}),
            );
            assert_eq!(e["body"]["result"], value, "{context} {expression}: {e}");
            assert_eq!(e["body"]["type"], ty, "{context} {expression}: {e}");
        }
    }
    c.disconnect_cleanly();
}

/// The f32 and f64 registers in VS Code's variable views, and `evaluate`
/// (a watch, a hover, the debug console), show a float as `irvm dbg`'s
/// `print` does, as gdb 13.1 prints it: f32 0.1 is 0.100000001, f64 1.1
/// is 1.1000000000000001, NaNs with their bits (before: `%g`: 0.1, 1.1,
/// -nan).
#[test]
fn float_registers_and_evaluate_show_floats_as_gdb_prints_them() {
    let mut c = Client::start();
    launch(
        &mut c,
        json!({"modules": [path("dbg/floats.vmasm")], "function": "main", "inputs": ["1.5"],
               "stopOnEntry": true}),
    );
    c.ok("configurationDone", json!({}));
    assert_eq!(c.event("stopped")["body"]["reason"], "entry");
    // To the last add, as `irvm dbg`'s `stepi 10` after `break main`.
    for _ in 0..10 {
        c.ok("next", json!({"threadId": 1, "granularity": "instruction"}));
        c.event("stopped");
    }
    let (frame, _) = top_frame(&mut c);
    let value_of = |vars: &[serde_json::Value], name: &str| -> String {
        vars.iter()
            .find(|v| v["name"] == name)
            .and_then(|v| v["value"].as_str())
            .unwrap_or_else(|| panic!("{name} not in {vars:?}"))
            .to_string()
    };
    let f32s = scope_variables(&mut c, &frame["id"], "f32 registers");
    assert_eq!(value_of(&f32s, "%i1"), "0.100000001");
    assert_eq!(value_of(&f32s, "%i4"), "1.60000002");
    assert_eq!(value_of(&f32s, "%i11"), "nan(0x400000)");
    let f64s = scope_variables(&mut c, &frame["id"], "f64 registers");
    assert_eq!(value_of(&f64s, "%i2:3"), "1.1000000000000001");
    assert_eq!(value_of(&f64s, "%i8:9"), "-nan(0x8000000000000)");
    assert_eq!(value_of(&f64s, "%i12:13"), "4.9406564584124654e-324");
    let cases = [
        ("%i2:3", "1.1000000000000001", "f64"),
        ("%i1 * 3", "0.300000012", "f32"),
        ("(float)1/3", "0.333333343", "f32"),
        ("0x1.8p1", "3", "f64"),
        ("1.0/0", "inf", "f64"),
    ];
    for context in ["watch", "hover", "repl"] {
        for (expression, value, ty) in cases {
            let e = c.request(
                "evaluate",
                json!({"expression": expression, "context": context, "frameId": frame["id"]}),
            );
            assert_eq!(e["body"]["result"], value, "{context} {expression}: {e}");
            assert_eq!(e["body"]["type"], ty, "{context} {expression}: {e}");
        }
    }
    c.disconnect_cleanly();
}
