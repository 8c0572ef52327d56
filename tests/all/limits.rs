//! Resource limits and the observer hook, through the API and `irvm run`:
//! fuel, deadline, interrupt, stack depth, buffer size, pausing, tracing.
//!
//! `tests/data/limits.vmfb` is assembled from `tests/data/limits.vmasm` with
//! `iree-as-module --output=tests/data/limits.vmfb tests/data/limits.vmasm`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use irvm::{
    CallState, Context, Control, ExecView, Limits, Module, Observer, StatusCode, TypeRegistry,
    Value,
};

use crate::common::cli::irvm;
use crate::common::paths::data;

/// How long a stop or a refusal that takes milliseconds on a quiet machine
/// may take on a loaded one (what these bounds catch, an endless loop or a
/// terabyte zeroed, takes minutes or forever).
const PROMPT: Duration = Duration::from_secs(2);

fn context() -> Context {
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    let module = Module::from_file(data("limits.vmfb")).expect("limits.vmfb loads");
    ctx.register_module(module).expect("links");
    ctx
}

fn call(ctx: &mut Context, name: &str, args: &[Value]) -> Result<Vec<Value>, irvm::Trap> {
    let f = ctx.function(&format!("limits.{name}")).expect("export");
    ctx.invoke(&f, args)
}

/// The single i64 result of `alloc`.
fn i64_result(r: Result<Vec<Value>, irvm::Trap>) -> i64 {
    let v = r.expect("call succeeds");
    assert_eq!(v.len(), 1);
    v[0].as_i64().expect("an i64 result")
}

#[test]
fn fuel_stops_an_infinite_loop() {
    let mut ctx = context();
    ctx.set_fuel(Some(1_000_000));
    let t0 = Instant::now();
    let e = call(&mut ctx, "spin", &[]).unwrap_err();
    assert!(t0.elapsed() < PROMPT);
    assert_eq!(e.code, StatusCode::ResourceExhausted);
    assert!(e.message.contains("fuel exhausted"), "{e}");
    assert_eq!(e.backtrace[0].function, "spin");
    assert_eq!(ctx.fuel(), Some(0));
    // More fuel lets a terminating function finish; fuel is charged per
    // instruction.
    ctx.set_fuel(Some(10));
    assert_eq!(i64_result(call(&mut ctx, "alloc", &[Value::I64(8)])), 8);
    assert_eq!(ctx.fuel(), Some(10 - 4));
}

#[test]
fn infinite_recursion_is_a_clean_error() {
    let mut ctx = context();
    ctx.set_limits(Limits {
        max_stack_depth: 500,
        ..ctx.limits()
    });
    let e = call(&mut ctx, "recurse", &[Value::I32(1)]).unwrap_err();
    assert_eq!(e.code, StatusCode::ResourceExhausted);
    assert!(e.message.contains("stack overflow"), "{e}");
    assert_eq!(e.backtrace.len(), 500);
    // The context stays usable.
    assert_eq!(i64_result(call(&mut ctx, "alloc", &[Value::I64(1)])), 1);
}

#[test]
fn huge_buffers_hit_the_limit() {
    let mut ctx = context();
    let t0 = Instant::now();
    let e = call(&mut ctx, "alloc", &[Value::I64(1 << 40)]).unwrap_err();
    assert!(t0.elapsed() < PROMPT);
    assert_eq!(e.code, StatusCode::ResourceExhausted);
    assert!(e.message.contains("1099511627776 bytes exceeds"), "{e}");
    let mut limits = ctx.limits();
    limits.max_buffer_bytes = 64;
    ctx.set_limits(limits);
    assert!(call(&mut ctx, "alloc", &[Value::I64(65)]).is_err());
    assert_eq!(i64_result(call(&mut ctx, "alloc", &[Value::I64(64)])), 64);
}

#[test]
fn interrupt_from_another_thread() {
    let mut ctx = context();
    let handle = ctx.interrupt_handle();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        handle.interrupt();
    });
    let e = call(&mut ctx, "spin", &[]).unwrap_err();
    t.join().unwrap();
    assert_eq!(e.code, StatusCode::Cancelled);
    // The flag is consumed: the next call runs normally.
    assert_eq!(i64_result(call(&mut ctx, "alloc", &[Value::I64(2)])), 2);
}

#[test]
fn a_cleared_interrupt_does_not_cancel_the_next_call() {
    let mut ctx = context();
    let handle = ctx.interrupt_handle();
    handle.interrupt();
    assert!(handle.is_interrupted());
    assert!(handle.clear());
    assert!(!handle.is_interrupted() && !handle.clear());
    assert_eq!(i64_result(call(&mut ctx, "alloc", &[Value::I64(2)])), 2);
}

#[test]
fn deadline_ends_a_long_call() {
    let mut ctx = context();
    ctx.set_deadline(Some(Instant::now() + Duration::from_millis(50)));
    let t0 = Instant::now();
    let e = call(&mut ctx, "spin", &[]).unwrap_err();
    assert_eq!(e.code, StatusCode::DeadlineExceeded);
    assert!(t0.elapsed() < PROMPT);
}

/// Pauses before every instruction and records where.
struct StepEverything {
    seen: std::sync::Arc<std::sync::Mutex<Vec<(u32, u32, usize)>>>,
}

impl Observer for StepEverything {
    fn before_instruction(&mut self, view: &ExecView<'_>) -> Control {
        self.seen
            .lock()
            .unwrap()
            .push((view.function, view.offset, view.i32_registers().len()));
        Control::Pause
    }
}

#[test]
fn an_observer_pauses_before_each_instruction() {
    let mut ctx = context();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    ctx.set_observer(Some(Box::new(StepEverything { seen: seen.clone() })));
    let f = ctx.function("limits.alloc").unwrap();
    let mut state = ctx.begin_call(&f, &[Value::I64(24)]).unwrap();
    let mut pauses = 0;
    while let CallState::Paused = state {
        pauses += 1;
        let frames = ctx.frames();
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].frame.function, "alloc");
        // The argument sits in the i64 pair %i0:1.
        assert_eq!(frames[0].i32s[0], 24);
        assert_eq!(
            frames[0].frame.offset,
            Some(seen.lock().unwrap().last().unwrap().1)
        );
        state = ctx.resume().unwrap();
    }
    match state {
        CallState::Done(v) => assert_eq!(i64_result(Ok(v)), 24),
        _ => panic!("expected the call to finish"),
    }
    // const, alloc, length, return: each paused once, in order.
    assert_eq!(pauses, 4);
    let offsets: Vec<u32> = seen.lock().unwrap().iter().map(|s| s.1).collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{offsets:?}");
    // Detached, calls run straight through.
    ctx.set_observer(None);
    assert_eq!(i64_result(call(&mut ctx, "alloc", &[Value::I64(3)])), 3);
}

#[test]
fn irvm_run_limit_flags() {
    let m = format!("--module={}", data("limits.vmfb").display());
    let (_, err, code) = irvm(&["run", &m, "--function=spin", "--fuel=100000"]);
    assert_eq!(code, 1);
    assert!(err.contains("RESOURCE_EXHAUSTED; fuel exhausted"), "{err}");
    let (_, err, code) = irvm(&["run", &m, "--function=spin", "--timeout=0.05"]);
    assert_eq!(code, 1);
    assert!(err.contains("DEADLINE_EXCEEDED"), "{err}");
    let (_, err, code) = irvm(&[
        "run",
        &m,
        "--function=recurse",
        "--input=0",
        "--max-stack-depth=64",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("call depth exceeds 64"), "{err}");
    assert!(err.contains("(x64)"), "recursion prints compactly: {err}");
    let (_, err, code) = irvm(&[
        "run",
        &m,
        "--function=alloc",
        "--input=4096",
        "--max-buffer-bytes=4095",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("exceeds the context's limit of 4095 bytes"),
        "{err}"
    );
    let (out, _, code) = irvm(&["run", &m, "--function=alloc", "--input=4096"]);
    assert_eq!(code, 0);
    assert_eq!(out, "EXEC @alloc\nresult[0]: i64=4096\n");
    // Not a timeout: usage errors (exit 2) naming the flag.
    for bad in ["-1", "NaN", "soon", ""] {
        let t = format!("--timeout={bad}");
        let (_, err, code) = irvm(&["run", &m, "--function=spin", &t]);
        assert_eq!(code, 2, "{t}: {err}");
        assert!(err.contains("--timeout"), "{t}: {err}");
    }
    // Past what the clock represents: no deadline, however it is spelled.
    for huge in ["1e19", "1e400", "inf", "18446744073709551616"] {
        let t = format!("--timeout={huge}");
        let (out, err, code) = irvm(&["run", &m, "--function=alloc", "--input=8", &t]);
        assert_eq!(code, 0, "{t}: {err}");
        assert!(out.contains("i64=8"), "{t}: {out}");
    }
}

/// A module whose `recurse` calls itself forever with a frame of `regs`
/// i32 registers.
fn recursion(regs: usize) -> Module {
    let text = format!(
        "vm.module @deep version 0
vm.export @recurse
vm.func @recurse(%i0: i32) -> (i32) {{
^bb0:
  %i{last} = vm.const.i32 1
  %i0 = vm.add.i32 %i0, %i{last}
  %i0 = vm.call @deep:0(%i0)
  vm.return %i0
}}",
        last = regs - 1
    );
    Module::from_assembly(&text, "deep.vmasm").expect("assembles")
}

#[test]
fn the_register_slot_bound_is_named_when_it_is_the_one_hit() {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_module(recursion(1000)).expect("links");
    let mut limits = ctx.limits();
    limits.max_stack_depth = 10_000_000;
    limits.max_stack_bytes = 1 << 40;
    ctx.set_limits(limits);
    let f = ctx.function("deep.recurse").expect("export");
    let e = ctx.invoke(&f, &[Value::I32(0)]).unwrap_err();
    assert_eq!(e.code, StatusCode::ResourceExhausted);
    assert!(
        e.message
            .contains("i32 register slots all frames may hold together"),
        "{e}"
    );
}

#[test]
fn deep_recursion_of_small_frames_stays_within_the_memory_budget() {
    // Frames of 4 registers: the frame records cost more than the
    // registers, and both are charged.
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_module(recursion(4)).expect("links");
    let budget = 40 << 20;
    let mut limits = ctx.limits();
    limits.max_stack_depth = 100_000_000;
    limits.max_stack_bytes = 1 << 40;
    limits.max_memory_bytes = budget;
    ctx.set_limits(limits);
    let f = ctx.function("deep.recurse").expect("export");
    let e = ctx.invoke(&f, &[Value::I32(0)]).unwrap_err();
    assert_eq!(e.code, StatusCode::ResourceExhausted, "{e}");
    assert!(e.message.contains("call stack"), "{e}");
    let peak = ctx.memory_peak();
    assert!(peak <= budget, "held {peak} of a budget of {budget}");
}

/// The byte offset of `lim.forever`'s `vm.br ^bb1()` (two constants of 3
/// and 7 bytes after the block marker at 0); the loop starts after it.
const FOREVER_ENTRY_BRANCH: u32 = 0x0B;

#[test]
fn a_deadline_names_an_instruction_of_the_loop_that_ran() {
    // lim.forever is `^bb0: br ^bb1` then a loop at ^bb1: the trap must
    // point into the loop, not at the branch that entered it, in every
    // tier.
    for tier in TIERS {
        let mut ctx = loop_context(tier);
        let f = ctx.function("lim.forever").expect("export");
        ctx.set_deadline(Some(Instant::now() + Duration::from_millis(30)));
        let e = ctx.invoke(&f, &[]).unwrap_err();
        assert_eq!(e.code, StatusCode::DeadlineExceeded, "{tier:?}: {e}");
        let at = e.backtrace[0].offset.expect("an offset");
        assert!(at > FOREVER_ENTRY_BRANCH, "{tier:?}: trap at {at:#x}: {e}");
    }
}

#[test]
fn trace_execution_shows_each_instruction_with_values() {
    let m = format!("--module={}", data("limits.vmfb").display());
    let (out, err, code) = irvm(&[
        "run",
        &m,
        "--function=alloc",
        "--input=24",
        "--trace-execution",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "EXEC @alloc\nresult[0]: i64=24\n");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "[limits.alloc+00000001]    %i2 = vm.const.i32 16  // 0x00000010",
            "[limits.alloc+00000008]    %r0 = vm.buffer.alloc %i0:1(24), %i2(16)",
            "[limits.alloc+0000000F]    %i0:1 = vm.buffer.length %r0(!vm.buffer[24])",
            "[limits.alloc+00000014]    vm.return %i0(24)",
        ]
    );
}

/// `tests/data/divz.vmfb` is compiled from `tests/data/divz.mlir` with
/// `iree-compile --iree-hal-target-device=local
/// --iree-hal-local-target-device-backends=vmvx divz.mlir -o divz.vmfb`
/// (so it carries iree-compile's debug database).
#[test]
fn failures_with_debug_info_print_the_source_line() {
    let m = format!("--module={}", data("divz.vmfb").display());
    let (out, err, code) = irvm(&["run", &m, "--function=main", "--input=4", "--input=0"]);
    assert_eq!(code, 1);
    assert_eq!(out, "EXEC @main\n");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "divz.mlir:2:8: error: INVALID_ARGUMENT: integer division by zero",
            "  [0] module.main+0x0000000F divz.mlir:2:8",
            "        called from divz.mlir:8:8",
            "        called from divz.mlir:5:1",
        ]
    );
    let (out, _, code) = irvm(&["run", &m, "--function=main", "--input=4", "--input=2"]);
    assert_eq!((code, out.as_str()), (0, "EXEC @main\nresult[0]: i32=2\n"));
}

/// Byte position, in the file, of a `ModuleStateDef` i32 field of `module`.
fn module_state_field(module: &Module, vt: u16) -> Option<usize> {
    let state = irvm::loader::schema::module_def(module).module_state()?;
    let tab = state._tab;
    let field = tab.vtable().get(vt);
    (field != 0).then(|| module.flatbuffer_range().start + tab.loc() + field as usize)
}

/// Found by `cargo fuzz run run` (an out-of-memory: a mutated
/// `global_bytes_capacity` of 14 GB was allocated at registration): module
/// state sizes are bounded by `Limits` before anything is allocated.
#[test]
fn module_state_sizes_are_bounded_before_allocation() {
    use irvm::loader::schema::ModuleStateDef;
    let Some(path) = ["global_ops.vmfb", "global_ops_i64.vmfb"]
        .iter()
        .map(|f| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/conformance/iree-vm-tests")
                .join(f)
        })
        .find(|p| p.exists())
    else {
        eprintln!("skipping: ../shared/conformance not present");
        return;
    };
    let original = std::fs::read(&path).unwrap();
    let module = Module::from_bytes(original.clone()).unwrap();
    for (vt, what) in [
        (
            ModuleStateDef::VT_GLOBAL_BYTES_CAPACITY,
            "global_bytes_capacity",
        ),
        (ModuleStateDef::VT_GLOBAL_REF_COUNT, "global_ref_count"),
    ] {
        let Some(at) = module_state_field(&module, vt) else {
            continue;
        };
        for bad in [i32::MAX, -1, 1 << 30] {
            let mut bytes = original.clone();
            bytes[at..at + 4].copy_from_slice(&bad.to_le_bytes());
            let m = match Module::from_bytes(bytes) {
                Ok(m) => m,
                // The loader already refuses negative sizes.
                Err(e) => {
                    assert!(bad < 0 && e.to_string().contains(what), "{e}");
                    continue;
                }
            };
            let registry = TypeRegistry::new();
            let mut ctx = Context::new(&registry);
            let t0 = Instant::now();
            let e = ctx.register_module(m).unwrap_err().to_string();
            assert!(t0.elapsed() < PROMPT);
            assert!(e.contains(what) && e.contains(&bad.to_string()), "{e}");
        }
    }
}

/// A loop compiled code takes (arithmetic in the body), ending in a call.
const LOOP_TEXT: &str = "vm.module @lim version 0
vm.export @sum
vm.func @sum(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.const.i32.zero
  %i2 = vm.const.i32.zero
  %i3 = vm.const.i32 1
  vm.br ^bb1()
^bb1:
  %i1 = vm.add.i32 %i1, %i2
  %i4 = vm.mul.i32 %i2, %i2
  %i1 = vm.xor.i32 %i1, %i4
  %i2 = vm.add.i32 %i2, %i3
  %i5 = vm.cmp.lt.i32.s %i2, %i0
  vm.cond_br %i5, ^bb1(), ^bb2()
^bb2:
  %i6 = vm.call @twice(%i1)
  vm.return %i6
}
vm.func @twice(%i0: i32) -> (i32) {
^bb0:
  %i1 = vm.add.i32 %i0, %i0
  vm.return %i1
}
vm.export @forever
vm.func @forever() -> () {
^bb0:
  %i0 = vm.const.i32.zero
  %i1 = vm.const.i32 1
  vm.br ^bb1()
^bb1:
  %i0 = vm.add.i32 %i0, %i1
  %i2 = vm.cmp.nz.i32 %i1
  vm.cond_br %i2, ^bb1(), ^bb2()
^bb2:
  vm.return
}
";

fn loop_context(tier: irvm::Tier) -> Context {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(tier);
    let module = Module::from_assembly(LOOP_TEXT, "lim.vmasm").expect("assembles");
    ctx.register_module(module).expect("links");
    ctx
}

/// Sees every instruction and does nothing: forces the hooked loop, which
/// counts fuel one instruction at a time (the reference for the others).
struct Watch;

impl Observer for Watch {
    fn before_instruction(&mut self, _: &ExecView<'_>) -> Control {
        Control::Continue
    }
}

/// What a call with `fuel` did: its result or trap (code, function,
/// offset) and the fuel left.
fn fueled_outcome(tier: Option<irvm::Tier>, fuel: u64, n: i32) -> (String, Option<u64>) {
    let mut ctx = loop_context(tier.unwrap_or(irvm::Tier::Interp));
    if tier.is_none() {
        ctx.set_observer(Some(Box::new(Watch)));
    }
    ctx.set_fuel(Some(fuel));
    let f = ctx.function("lim.sum").expect("export");
    let what = match ctx.invoke(&f, &[Value::I32(n)]) {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!(
            "{:?} at {}+{:?}",
            e.code, e.backtrace[0].function, e.backtrace[0].offset
        ),
    };
    (what, ctx.fuel())
}

const TIERS: [irvm::Tier; 3] = [irvm::Tier::Interp, irvm::Tier::Jit, irvm::Tier::Auto];

#[test]
fn fuel_runs_out_at_the_same_instruction_in_every_tier() {
    // The whole call's cost, from the hooked loop.
    let budget = 1 << 30;
    let (done, left) = fueled_outcome(None, budget, 5_000);
    let cost = budget - left.expect("fuel set");
    assert!(done.starts_with('['), "{done}");
    let mut fuels: Vec<u64> = (0..40).collect();
    fuels.extend([cost - 2, cost - 1, cost, cost + 1, cost / 2, cost / 3 + 7]);
    for fuel in fuels {
        let expected = fueled_outcome(None, fuel, 5_000);
        for tier in TIERS {
            assert_eq!(
                fueled_outcome(Some(tier), fuel, 5_000),
                expected,
                "--fuel={fuel} (the call costs {cost}) in {tier:?}"
            );
        }
    }
}

#[test]
fn compiled_code_keeps_running_with_limits() {
    if !irvm::Tier::compiler_available() {
        eprintln!("no compiling tier on this machine");
        return;
    }
    // Fuel (the copy that counts it), a deadline alone and an interrupt
    // handle alone (the copy that reads the stop word at loop heads).
    for (fuel, deadline, handle) in [
        (true, true, true),
        (false, true, false),
        (false, false, true),
    ] {
        for tier in [irvm::Tier::Jit, irvm::Tier::Auto] {
            let mut ctx = loop_context(tier);
            if fuel {
                ctx.set_fuel(Some(u64::MAX / 2));
            }
            if deadline {
                ctx.set_deadline(Some(Instant::now() + Duration::from_secs(3600)));
            }
            let _handle = handle.then(|| ctx.interrupt_handle());
            let f = ctx.function("lim.sum").expect("export");
            let r = ctx.invoke(&f, &[Value::I32(100_000)]).expect("runs");
            let mut interp = loop_context(irvm::Tier::Interp);
            let g = interp.function("lim.sum").expect("export");
            let plain = interp.invoke(&g, &[Value::I32(100_000)]).expect("runs");
            assert_eq!(format!("{r:?}"), format!("{plain:?}"));
            assert!(
                ctx.compiled_functions().0 > 0,
                "{tier:?} (fuel {fuel}, deadline {deadline}, handle {handle}): limits must \
                 not switch the compiling tier off"
            );
        }
    }
}

#[test]
fn deadline_and_interrupt_stop_every_tier() {
    for tier in TIERS {
        let mut ctx = loop_context(tier);
        let f = ctx.function("lim.forever").expect("export");
        ctx.set_deadline(Some(Instant::now() + Duration::from_millis(50)));
        let t0 = Instant::now();
        let e = ctx.invoke(&f, &[]).unwrap_err();
        assert_eq!(e.code, StatusCode::DeadlineExceeded, "{tier:?}: {e}");
        assert!(t0.elapsed() < PROMPT, "{tier:?}");
        ctx.set_deadline(None);

        let handle = ctx.interrupt_handle();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            handle.interrupt();
        });
        let e = ctx.invoke(&f, &[]).unwrap_err();
        t.join().unwrap();
        assert_eq!(e.code, StatusCode::Cancelled, "{tier:?}: {e}");
        // Fuel bounds it as well, in whichever tier.
        ctx.set_fuel(Some(10_000_000));
        let e = ctx.invoke(&f, &[]).unwrap_err();
        assert_eq!(e.code, StatusCode::ResourceExhausted, "{tier:?}: {e}");
        assert_eq!(ctx.fuel(), Some(0));
    }
}

/// A 512 MiB `hal.device.queue.read` from a file over a program's buffer
/// (`hal.ex.file.from_memory`), its source never written (so untouched
/// pages): the read went through a copy of its whole source, in one piece
/// (memory no budget counted, and no deadline could cut short), where it
/// now moves the bytes straight into the target, in stoppable pieces.
const QUEUE_READ: &str = r#"
vm.module @halread version 0
vm.type i32
vm.type i64
vm.type !vm.buffer
vm.type !hal.allocator
vm.type !hal.buffer
vm.type !hal.device
vm.type !hal.fence
vm.type !hal.file
vm.import @hal.allocator.allocate cconv "0rIiiI_r"
vm.import @hal.device.allocator cconv "0r_r"
vm.import @hal.devices.get cconv "0i_r"
vm.import @hal.fence.await cconv "0iICrD_i"
vm.import @hal.fence.create cconv "0rI_r"
vm.import @hal.ex.file.from_memory cconv "0rIirIIi_r"
vm.import @hal.device.queue.read cconv "0rIrrrIrIII_v"

vm.export @read
vm.func @read(%i0:1: i64) -> (i32) {
^bb0:
  %i8 = vm.const.i32.zero
  %i9 = vm.const.i32 48
  %i10 = vm.const.i32 3075
  %i12 = vm.const.i32 1
  %i14:15 = vm.const.i64 -1
  %i16:17 = vm.const.i64.zero
  %i2 = vm.const.i32 16
  %r7 = vm.buffer.alloc %i0:1, %i2
  %r0 = vm.call @hal.devices.get(%i8)
  %r1 = vm.call @hal.device.allocator(%r0)
  %r2 = vm.call @hal.allocator.allocate(%r1, %i14:15, %i9, %i10, %i0:1)
  %r8 = vm.call @hal.ex.file.from_memory(%r0, %i14:15, %i12, %r7, %i16:17, %i0:1, %i8)
  %r3 = vm.call @hal.fence.create(%r0, %i16:17)
  %r4 = vm.const.ref.zero
  vm.call @hal.device.queue.read(%r0, %i14:15, %r4, %r3, %r8, %i16:17, %r2, %i16:17, %i0:1, %i16:17)
  vm.call.variadic.yieldable @hal.fence.await segments[65535, 65535, 1](%i8, %i14:15, %r3) -> ^bb1(%i21)
^bb1:
  vm.return %i21
}
"#;

#[test]
fn a_queue_read_moves_its_bytes_without_a_copy_of_the_whole_source() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("halread.vmasm");
    std::fs::write(&module, QUEUE_READ).unwrap();
    const LEN: u64 = 512 << 20;
    let (status, peak) = exit_and_peak_resident(
        std::process::Command::new(crate::common::cli::irvm_bin())
            .arg("run")
            .arg(format!("--module={}", module.display()))
            .args([
                "--function=read",
                &format!("--input={LEN}"),
                "--timeout=120",
            ]),
    );
    assert_eq!(status, Some(0));
    // The target's LEN bytes and the process itself; a copy of the source
    // would add another LEN.
    assert!(
        peak < LEN + LEN / 2,
        "peak resident {peak} bytes for a read of {LEN}"
    );
}

/// Runs `cmd` (stdout and stderr discarded) to its end: its exit code
/// (`None` when a signal ended it) and its own peak resident size in bytes
/// (`wait4`: not the other tests' children, which
/// `getrusage(RUSAGE_CHILDREN)` would mix in).
fn exit_and_peak_resident(cmd: &mut std::process::Command) -> (Option<i32>, u64) {
    #[expect(
        clippy::zombie_processes,
        reason = "reaped by `wait4` below, which std's `Child` does not see"
    )]
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child.id()` is our unwaited child; the pointers are to live
    // locals.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, usage.ru_maxrss as u64 * 1024)
}

/// A module whose function takes a buffer view (and returns its rank).
const TAKES_A_TENSOR: &str = r#"vm.module @take version 0
vm.type i32
vm.type !hal.buffer_view
vm.import @hal.buffer_view.rank cconv "0r_i"

vm.export @take
vm.func @take(%r0: !hal.buffer_view) -> (i32) {
^bb0:
  %i0 = vm.call @hal.buffer_view.rank(%r0)
  vm.return %i0
}
"#;

#[test]
fn a_large_input_tensor_takes_its_own_size_in_memory_not_twice_it() {
    // Parsed (a splat) or read (raw bytes from a file, a `.npy`) straight
    // into the view's buffer: no second copy of the input.
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("take.vmasm");
    std::fs::write(&module, TAKES_A_TENSOR).unwrap();
    const LEN: u64 = 256 << 20;
    let npy = dir.path().join("big.npy");
    {
        use std::io::Write;
        // Version 1.0; the header padded to 64 bytes with spaces and a newline.
        let dict = format!("{{'descr': '|i1', 'fortran_order': False, 'shape': ({LEN},), }}");
        let pad = 64 - (10 + dict.len() + 1) % 64;
        let mut header = dict.into_bytes();
        header.extend(std::iter::repeat_n(b' ', pad));
        header.push(b'\n');
        let mut f = std::io::BufWriter::new(std::fs::File::create(&npy).unwrap());
        f.write_all(b"\x93NUMPY\x01\x00").unwrap();
        f.write_all(&(header.len() as u16).to_le_bytes()).unwrap();
        f.write_all(&header).unwrap();
        let block = vec![3u8; 1 << 20];
        for _ in 0..LEN >> 20 {
            f.write_all(&block).unwrap();
        }
    }
    for input in [
        format!("{LEN}xi8=1"),
        format!("{LEN}xi8=@/dev/zero"),
        format!("@{}", npy.display()),
    ] {
        let (status, peak) = exit_and_peak_resident(
            std::process::Command::new(crate::common::cli::irvm_bin())
                .arg("run")
                .arg(format!("--module={}", module.display()))
                .args(["--function=take", &format!("--input={input}")]),
        );
        assert_eq!(status, Some(0), "{input}");
        assert!(
            peak < LEN + LEN / 2,
            "peak resident {peak} bytes for an input of {LEN}: {input}"
        );
    }
}

#[test]
fn a_long_list_resize_ends_at_the_deadline_not_when_done() {
    // `vm.list.resize` writes every new element: 128 Mi i64 elements are
    // 1 GiB and a fraction of a second of work, in pieces with looks at the
    // stop word between them (before: one `Vec::resize`, 3 s past
    // `--timeout=0.05` for 128 Mi elements in a release build).
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("grow.vmasm");
    std::fs::write(
        &source,
        "vm.module @grow version 0\nvm.type i64\nvm.type !vm.list<i64>\n\n\
         vm.export @grow\nvm.func @grow(%i0: i32) -> (i32) {\n^bb0:\n  \
         %i1 = vm.const.i32.zero\n  %r0 = vm.list.alloc %i1 : !vm.list<i64>\n  \
         vm.list.resize %r0, %i0\n  %i2 = vm.list.size %r0\n  vm.return %i2\n}\n",
    )
    .unwrap();
    let m = format!("--module={}", source.display());
    let started = Instant::now();
    let (_, err, code) = irvm(&["run", &m, "--input=134217728", "--timeout=0.05"]);
    let took = started.elapsed();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("DEADLINE_EXCEEDED"), "{err}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Short lists grow as before under the same limit.
    let (out, err, code) = irvm(&["run", &m, "--input=1000", "--timeout=60"]);
    assert_eq!(
        (out.as_str(), code),
        ("EXEC @grow\nresult[0]: i32=1000\n", 0),
        "{err}"
    );
}

#[test]
fn a_list_grown_one_element_at_a_time_costs_fuel_for_the_elements_added() {
    // Each `vm.list.resize` costs fuel for the elements it writes or
    // releases, not for the list's whole length (before: 200,000 one-element
    // growths cost 5 billion units, so any fuel ran out), and the capacity
    // doubles past its end instead of growing by exactly one.
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("push.vmasm");
    std::fs::write(
        &source,
        "vm.module @push version 0\nvm.type i32\nvm.type !vm.list<i32>\n\n\
         vm.export @push\nvm.func @push(%i0: i32) -> (i32) {\n^bb0:\n  \
         %i1 = vm.const.i32.zero\n  %r0 = vm.list.alloc %i1 : !vm.list<i32>\n  \
         %i2 = vm.const.i32 1\n  vm.br ^bb1(%i1->%i3)\n^bb1:\n  \
         %i4 = vm.cmp.lt.i32.s %i3, %i0\n  vm.cond_br %i4, ^bb2(), ^bb3()\n^bb2:\n  \
         %i5 = vm.list.size %r0\n  %i6 = vm.add.i32 %i5, %i2\n  vm.list.resize %r0, %i6\n  \
         vm.list.set.i32 %r0, %i5, %i3\n  %i3 = vm.add.i32 %i3, %i2\n  vm.br ^bb1()\n^bb3:\n  \
         %i7 = vm.list.size %r0\n  %i8 = vm.sub.i32 %i7, %i2\n  \
         %i9 = vm.list.get.i32 %r0, %i8\n  vm.return %i9\n}\n",
    )
    .unwrap();
    let m = format!("--module={}", source.display());
    for engine in ["--engine=interp", "--engine=auto"] {
        let (out, err, code) = irvm(&["run", &m, "--input=200000", "--fuel=10000000", engine]);
        assert_eq!(
            (out.as_str(), code),
            ("EXEC @push\nresult[0]: i32=199999\n", 0),
            "{engine}: {err}"
        );
    }
}

/// What a call of `lists.append` (`crate::jit::APPEND_LOOP`) with `fuel`
/// did, as [`fueled_outcome`] says it.
fn fueled_append(tier: Option<irvm::Tier>, fuel: u64, n: i32) -> (String, Option<u64>) {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(tier.unwrap_or(irvm::Tier::Interp));
    let module = Module::from_assembly(crate::jit::APPEND_LOOP, "lists.vmasm").expect("assembles");
    ctx.register_module(module).expect("links");
    if tier.is_none() {
        ctx.set_observer(Some(Box::new(Watch)));
    }
    ctx.set_fuel(Some(fuel));
    let f = ctx.function("lists.append").expect("export");
    let what = match ctx.invoke(&f, &[Value::I32(n)]) {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!(
            "{:?} at {}+{:?}: {}",
            e.code, e.backtrace[0].function, e.backtrace[0].offset, e.message
        ),
    };
    (what, ctx.fuel())
}

#[test]
fn an_append_loop_runs_out_of_fuel_at_the_same_instruction_in_every_tier() {
    // `vm.list.resize` stands alone in the runs fuel is charged in, and
    // compiled code now runs it (paying its unit, then the run after it);
    // the growth by 100 and the shrink after the loop are bulk work of
    // 400 bytes and more, charged by the interpreter.
    let budget = 1 << 30;
    let (done, left) = fueled_append(None, budget, 3_000);
    let cost = budget - left.expect("fuel set");
    assert!(done.starts_with('['), "{done}");
    let mut fuels: Vec<u64> = (0..40).collect();
    fuels.extend([
        cost - 30,
        cost - 20,
        cost - 10,
        cost - 2,
        cost - 1,
        cost,
        cost + 1,
    ]);
    fuels.extend([cost / 2, cost / 3 + 7, cost / 5 + 1]);
    for fuel in fuels {
        let expected = fueled_append(None, fuel, 3_000);
        for tier in TIERS {
            assert_eq!(
                fueled_append(Some(tier), fuel, 3_000),
                expected,
                "--fuel={fuel} (the call costs {cost}) in {tier:?}"
            );
        }
    }
}

#[test]
fn an_append_loop_with_a_deadline_stays_in_compiled_code() {
    // The copy that reads the stop word runs resizes of fewer than 64
    // bytes itself, and leaves the larger ones (charged as bulk work and
    // grown in pieces) to the interpreter.
    if !irvm::Tier::compiler_available() {
        eprintln!("no compiling tier on this machine");
        return;
    }
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(irvm::Tier::Jit);
    let module = Module::from_assembly(crate::jit::APPEND_LOOP, "lists.vmasm").expect("assembles");
    ctx.register_module(module).expect("links");
    ctx.set_deadline(Some(Instant::now() + Duration::from_secs(3600)));
    let f = ctx.function("lists.append").expect("export");
    let r = ctx.invoke(&f, &[Value::I32(100_000)]).expect("runs");
    assert_eq!(format!("{r:?}"), "[I32(50000), I32(50001)]");
    // The entry, and one after each of the two bulk resizes.
    let entries = ctx.compiled_entries();
    assert!(entries <= 4, "{entries} entries into compiled code");
}

#[test]
fn a_list_of_values_is_charged_its_elements_own_size() {
    // 1 Mi elements: 4 MiB of i32s, 1 MiB of i8s, 8 MiB of f64s (before,
    // 24 MiB each, whatever the type), held by the returned list.
    for (ty, bytes) in [("i32", 4u64), ("i8", 1), ("f64", 8)] {
        let text = format!(
            "vm.module @m version 0\nvm.type {ty}\nvm.type !vm.list<{ty}>\n\
             vm.export @make\nvm.func @make(%i0: i32) -> (!vm.list<{ty}>) {{\n^bb0:\n  \
             %r0 = vm.list.alloc %i0 : !vm.list<{ty}>\n  vm.list.resize %r0, %i0\n  \
             vm.return %r0\n}}\n"
        );
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_module(Module::from_assembly(&text, "m.vmasm").expect("assembles"))
            .expect("links");
        let f = ctx.function("m.make").expect("export");
        // A first call grows the register stacks (charged too).
        drop(ctx.invoke(&f, &[Value::I32(0)]).expect("runs"));
        let before = ctx.memory_in_use();
        let list = ctx.invoke(&f, &[Value::I32(1 << 20)]).expect("runs");
        let held = ctx.memory_in_use() - before;
        assert!(
            held >= bytes << 20 && held < (bytes << 20) + 4096,
            "{ty}: {held} bytes held for 1 Mi elements"
        );
        drop(list);
        assert_eq!(ctx.memory_in_use(), before, "{ty}");
    }
}

#[test]
fn the_fuel_of_a_list_resize_counts_the_elements_own_bytes() {
    // 1,000,000 i32 elements are 4,000,000 bytes of bulk work (before, the
    // message counted 16 bytes an element while the budget charged 24).
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("grow.vmasm");
    std::fs::write(
        &source,
        "vm.module @grow version 0\nvm.type i32\nvm.type !vm.list<i32>\n\n\
         vm.export @grow\nvm.func @grow(%i0: i32) -> (i32) {\n^bb0:\n  \
         %i1 = vm.const.i32.zero\n  %r0 = vm.list.alloc %i1 : !vm.list<i32>\n  \
         vm.list.resize %r0, %i0\n  %i2 = vm.list.size %r0\n  vm.return %i2\n}\n",
    )
    .unwrap();
    let m = format!("--module={}", source.display());
    let (_, err, code) = irvm(&["run", &m, "--input=1000000", "--fuel=1000"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("a bulk operation of 4000000 bytes costs 62500"),
        "{err}"
    );
}

#[test]
fn a_module_held_in_memory_is_charged_to_the_budget() {
    // The same module from a Vec (heap bytes: charged while registered)
    // and from &'static bytes (the program image: not charged).
    let text =
        "vm.module @held version 0\nvm.export @f\nvm.func @f() -> () {\n^bb0:\n  vm.return\n}\n";
    let bytes = irvm::asm::assemble(text, "held.vmasm").expect("assembles");
    let len = bytes.len() as u64;
    let registry = TypeRegistry::new();
    let mut heap = Context::new(&registry);
    let before = heap.memory_in_use();
    heap.register_module(Module::from_bytes(bytes.clone()).expect("loads"))
        .expect("links");
    assert_eq!(heap.memory_in_use() - before, len, "the Vec's bytes");

    let leaked: &'static [u8] = Box::leak(bytes.clone().into_boxed_slice());
    let mut image = Context::new(&registry);
    let before = image.memory_in_use();
    image
        .register_module(Module::from_bytes(leaked).expect("loads"))
        .expect("links");
    assert_eq!(
        image.memory_in_use(),
        before,
        "static bytes are not charged"
    );

    // A budget smaller than the module refuses it, naming it.
    let mut small = Context::with_limits(
        &registry,
        Limits {
            max_memory_bytes: len - 1,
            ..Limits::default()
        },
    );
    let err = small
        .register_module(Module::from_bytes(bytes).expect("loads"))
        .expect_err("the module does not fit");
    let message = err.to_string();
    assert!(
        message.starts_with("module 'held' does not fit the memory budget: RESOURCE_EXHAUSTED")
            && message.contains(&format!("needs {len} more bytes")),
        "{message}"
    );
}

#[test]
fn a_negative_list_count_is_refused_in_every_engine_whatever_the_limits() {
    // IREE's dispatch reads the count of `vm.list.alloc`, `vm.list.reserve`
    // and `vm.list.resize` as unsigned: -1 asks for 4,294,967,295 elements
    // (iree-run-module allocates and zeroes 16 GiB for a `!vm.list<i32>` of
    // them, and `vm.list.size` then reads -1). A count is a size, refused
    // when negative as a buffer's length is, by the interpreter and by
    // compiled code (which leaves the refusal to it), with the list limit
    // and without (before: the limit's RESOURCE_EXHAUSTED, then the memory
    // budget's, or 16 GiB). docs/COMPATIBILITY.md.
    let dir = tempfile::tempdir().unwrap();
    let bodies = [
        (
            "alloc",
            "capacity",
            "  %r0 = vm.list.alloc %i0 : !vm.list<i32>\n",
        ),
        (
            "reserve",
            "capacity",
            "  %i1 = vm.const.i32.zero\n  %r0 = vm.list.alloc %i1 : !vm.list<i32>\n  \
             vm.list.reserve %r0, %i0\n",
        ),
        (
            "resize",
            "size",
            "  %i1 = vm.const.i32.zero\n  %r0 = vm.list.alloc %i1 : !vm.list<i32>\n  \
             vm.list.resize %r0, %i0\n",
        ),
    ];
    for (op, what, body) in bodies {
        let source = dir.path().join(format!("{op}.vmasm"));
        std::fs::write(
            &source,
            format!(
                "vm.module @m version 0\nvm.type i32\nvm.type !vm.list<i32>\n\n\
                 vm.export @f\nvm.func @f(%i0: i32) -> (i32) {{\n^bb0:\n{body}  \
                 %i9 = vm.list.size %r0\n  vm.return %i9\n}}\n"
            ),
        )
        .unwrap();
        let m = format!("--module={}", source.display());
        for engine in ["--engine=interp", "--engine=auto", "--engine=jit"] {
            for limit in ["--max-list-elements=1000", "--max-list-elements=4294967295"] {
                for count in ["-1", "-2147483648"] {
                    let input = format!("--input={count}");
                    let (_, err, code) = irvm(&["run", &m, &input, engine, limit]);
                    assert_eq!(code, 1, "{op} {engine} {limit}: {err}");
                    let want = format!("INVALID_ARGUMENT; list {what} {count} is negative");
                    assert!(err.contains(&want), "{op} {engine} {limit}: {err}");
                }
            }
            // Counts up to the limit are untouched.
            let (out, err, code) = irvm(&["run", &m, "--input=3", engine]);
            let want = if op == "resize" { 3 } else { 0 };
            assert_eq!(
                (out, code),
                (format!("EXEC @f\nresult[0]: i32={want}\n"), 0),
                "{op} {engine}: {err}"
            );
        }
    }
}
