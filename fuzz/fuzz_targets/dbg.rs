//! The debugger on valid programs (see `gen_program.rs`; every `app`
//! instruction has its own source line): a fuzz-chosen sequence of
//! breakpoints (by line, function or offset), steps, nexts, finishes,
//! continues, inspections, and changes of where the program goes (`jump`,
//! `return`, `call`). Each command must succeed or fail with a
//! `DebugCommandError`; a run driven to its end must finish exactly as the
//! plain interpreter does, unless such a change altered it. Never a panic.
#![no_main]

mod gen_program;

use irvm::{Context, Limits, Module, Ref, TypeRegistry, Value};
use irvm_debugger::{Debugger, Stop};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fn context(lib: &[u8], app: &[u8]) -> Context {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.set_limits(Limits {
        max_buffer_bytes: 1 << 16,
        max_list_elements: 1 << 12,
        ..Limits::default()
    });
    for bytes in [lib, app] {
        let module = Module::from_bytes(bytes.to_vec()).expect("generated module loads");
        ctx.register_module(module)
            .expect("generated module registers");
    }
    ctx
}

fn outcome(r: &Result<Vec<Value>, irvm::Trap>) -> String {
    match r {
        Ok(v) => v.iter().map(|v| format!("{v}; ")).collect(),
        Err(t) => format!("trap {t}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(program) = gen_program::generate(&mut u, true) else {
        return;
    };
    let lib = irvm::asm::assemble(&program.lib, "lib.vmasm").expect("lib assembles");
    let app = irvm::asm::assemble(&program.app, "app.vmasm").expect("app assembles");
    let Ok((name, sig)) = u.choose(&program.app_exports).cloned() else {
        return;
    };
    let mut args: Vec<Value> = (0..sig.i32_args)
        .map(|k| Value::I32(k as i32 + 2))
        .collect();
    args.extend((0..sig.ref_args).map(|_| Value::Ref(Ref::Null)));
    let mut plain = context(&lib, &app);
    let f = plain.function(&format!("app.{name}")).expect("export");
    let expected = outcome(&plain.invoke(&f, &args));

    let mut ctx = context(&lib, &app);
    // A jump or return can make a counted loop endless (the constant its
    // counter steps by skipped): fuel ends it. The generated programs
    // never come near it otherwise (at most three trips a loop).
    ctx.set_fuel(Some(10_000_000));
    let f = ctx.function(&format!("app.{name}")).expect("export");
    let mut dbg = Debugger::new(ctx, f, args);
    // Module globals persist across runs in one context: only the first
    // run's outcome is comparable with the plain interpreter's.
    let mut starts = 0u32;
    let mut first: Option<String> = None;
    // A jump, return or call changed what the first run computes.
    let mut altered = false;
    let commands = u.int_in_range(0..=40u32).unwrap_or(0);
    for _ in 0..commands {
        let Ok(op) = u.int_in_range(0..=14u8) else {
            break;
        };
        let stop = match op {
            0 => {
                let line = u.int_in_range(0..=program.lines + 2).unwrap_or(0);
                let _ = dbg.set_breakpoint(&format!("app.mlir:{line}"));
                None
            }
            1 => {
                let spec = match u.int_in_range(0..=3u8).unwrap_or(0) {
                    0 => format!("g{}", u.int_in_range(0..=3u8).unwrap_or(0)),
                    1 => format!("lib.f{}", u.int_in_range(0..=3u8).unwrap_or(0)),
                    2 => format!("*{}", u.int_in_range(0..=200u16).unwrap_or(0)),
                    _ => {
                        let len = u.int_in_range(0..=12usize).unwrap_or(0);
                        String::from_utf8_lossy(u.bytes(len).unwrap_or(&[])).into_owned()
                    }
                };
                let _ = dbg.set_breakpoint(&spec);
                None
            }
            2 => {
                let id = u.int_in_range(0..=4u32).unwrap_or(0);
                let _ = dbg.delete_breakpoint((id > 0).then_some(id));
                None
            }
            3 => {
                starts += 1;
                Some(dbg.run())
            }
            4 => Some(dbg.continue_()),
            5 => Some(dbg.step_instruction()),
            6 => Some(dbg.step()),
            7 => Some(dbg.step_over()),
            8 => Some(dbg.finish()),
            9 => {
                let spec = match u.int_in_range(0..=2u8).unwrap_or(0) {
                    0 => format!(
                        "app.mlir:{}",
                        u.int_in_range(0..=program.lines + 2).unwrap_or(0)
                    ),
                    1 => format!("*{}", u.int_in_range(0..=200u16).unwrap_or(0)),
                    _ => format!("lib.f{}", u.int_in_range(0..=3u8).unwrap_or(0)),
                };
                let target = dbg.jump_target(&spec);
                let jumped = target.and_then(|t| dbg.jump(&t));
                altered |= starts == 1 && jumped.is_ok();
                Some(jumped)
            }
            10 => {
                if let Ok(n) = u.int_in_range(0..=3usize) {
                    let _ = dbg.select_frame(n);
                }
                let given: Vec<String> = match u.int_in_range(0..=2u8).unwrap_or(0) {
                    0 => Vec::new(),
                    1 => vec!["7".into()],
                    _ => vec!["%i0".into(), "0".into()],
                };
                let returned = dbg.return_values(&given).and_then(|v| dbg.return_now(v));
                altered |= starts == 1 && returned.is_ok();
                Some(returned)
            }
            11 => {
                if let Ok((name, sig)) = u.choose(&program.app_exports).cloned() {
                    let mut given: Vec<String> =
                        (0..sig.i32_args).map(|k| format!("{k}")).collect();
                    given.extend((0..sig.ref_args).map(|_| "0".to_string()));
                    let called = dbg.call_function(&format!("app.{name}"), &given);
                    // (A call may change the program's globals.)
                    altered |= starts == 1 && called.is_ok();
                }
                None
            }
            _ => {
                // Inspection, as `bt`, `info registers` and `list` use it.
                for frame in dbg.frames() {
                    let _ = frame.i32s.len() + frame.refs.len();
                }
                if let Some((at, _)) = dbg.current() {
                    let _ = dbg.position_of(&at);
                    let _ = dbg.function_name(&at);
                    let _ = dbg.register_banks(at.module_index, at.function);
                }
                None
            }
        };
        let end = match stop {
            Some(Ok(Stop::Finished(v))) => Some(outcome(&Ok(v))),
            Some(Ok(Stop::Exception(t) | Stop::Failed(t))) => Some(outcome(&Err(t))),
            _ => None,
        };
        if starts == 1 && first.is_none() {
            first = end;
        }
    }
    // Drive the program to its end.
    if starts == 0 {
        starts = 1;
        let end = match dbg.run() {
            Ok(Stop::Finished(v)) => Some(outcome(&Ok(v))),
            Ok(Stop::Exception(t) | Stop::Failed(t)) => Some(outcome(&Err(t))),
            _ => None,
        };
        first = first.or(end);
    }
    let _ = dbg.delete_breakpoint(None);
    let mut guard = 0;
    while dbg.is_running() && guard < 1000 {
        guard += 1;
        let end = match dbg.continue_() {
            Ok(Stop::Finished(v)) => Some(outcome(&Ok(v))),
            Ok(Stop::Exception(t) | Stop::Failed(t)) => Some(outcome(&Err(t))),
            _ => None,
        };
        if starts == 1 && first.is_none() {
            first = end;
        }
    }
    assert!(
        !dbg.is_running(),
        "the program still runs after 1000 continues"
    );
    if starts == 1 && !altered {
        let got = first.expect("the first run ended");
        assert_eq!(
            got, expected,
            "the debugger's run ended differently from the plain interpreter's\n{}\n{}",
            program.lib, program.app
        );
    }
});
