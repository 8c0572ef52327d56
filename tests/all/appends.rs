//! Appends to lists (`vm.list.size`, `vm.add.i32`, `vm.list.resize`,
//! `vm.list.set.*`), which the pre-decoder fuses into one
//! `ListSizeThenAppend` (`program::fuse::fuse_appends`): the interpreter
//! runs a list its register alone holds, grown within its capacity, in one
//! dispatch, and compiled code calls one helper for all four. Every engine
//! here (the hooked interpreter, which runs the four apart, the plain
//! interpreter, compiled code, `Auto`) must leave the list a model of the
//! loop says, or trap where it says, with the same message.

use irvm::{Context, Control, ExecView, Limits, Module, Observer, Ref, Tier, TypeRegistry, Value};

/// Sees every instruction: forces the hooked loop, which runs an append's
/// four instructions one by one (the reference the fused paths must meet).
struct Watch;

impl Observer for Watch {
    fn before_instruction(&mut self, _: &ExecView<'_>) -> Control {
        Control::Continue
    }
}

/// `@append(n, capacity, delta)`: a list of `ty` (i32, i64, f32, f64) with
/// room for `capacity`, then `n` passes of `vm.list.size -> %s`,
/// `vm.add.i32 %s, delta -> %t`, `vm.list.resize %t`, `vm.list.set %s,
/// value(i)` (value(i): `3i`, plus 2^32 for i64, converted for floats),
/// through a second register that holds the list too when `shared` is
/// nonzero (the list sits in a list of lists as well). Returns the list.
fn source(ty: &str) -> String {
    // The value's register (`%i14`, or `%i14:15` for 64 bits) and how it is
    // made from `%i9` (3i, i32) and `%i12:13` (3i + 2^32, i64).
    let (value, make) = match ty {
        "i32" => ("%i9", ""),
        "i64" => ("%i12:13", ""),
        "f32" => ("%i14", "  %i14 = vm.cast.si32.f32 %i9\n"),
        _ => ("%i14:15", "  %i14:15 = vm.cast.si64.f64 %i12:13\n"),
    };
    format!(
        "vm.module @appends version 0
vm.type i32
vm.type !vm.list<{ty}>
vm.type !vm.list<!vm.list<{ty}>>
vm.export @append
vm.func @append(%i0: i32, %i1: i32, %i2: i32, %i3: i32) -> (!vm.list<{ty}>) {{
^bb0:
  %r0 = vm.list.alloc %i1 : !vm.list<{ty}>
  %i4 = vm.const.i32.zero
  %i5 = vm.const.i32 1
  %i10 = vm.const.i32 3
  %i16:17 = vm.const.i64 4294967296
  %r1 = vm.list.alloc %i5 : !vm.list<!vm.list<{ty}>>
  vm.cond_br %i3, ^bb4(), ^bb5()
^bb4:
  vm.list.resize %r1, %i5
  vm.list.set.ref %r1, %i4, %r0
  %r2 = vm.list.get.ref %r1, %i4 : !vm.list<{ty}>
  vm.br ^bb1(%i4->%i6)
^bb5:
  vm.br ^bb1(%i4->%i6)
^bb1:
  %i7 = vm.cmp.lt.i32.s %i6, %i0
  vm.cond_br %i7, ^bb2(), ^bb3()
^bb2:
  %i9 = vm.mul.i32 %i6, %i10
  %i12:13 = vm.ext.i32.i64.s %i9
  %i12:13 = vm.add.i64 %i12:13, %i16:17
{make}  vm.cond_br %i3, ^bb6(), ^bb7()
^bb6:
  %i18 = vm.list.size %r2
  %i19 = vm.add.i32 %i18, %i2
  vm.list.resize %r2, %i19
  vm.list.set.{ty} %r2, %i18, {value}
  %i6 = vm.add.i32 %i6, %i5
  vm.br ^bb1()
^bb7:
  %i18 = vm.list.size %r0
  %i19 = vm.add.i32 %i2, %i18
  vm.list.resize %r0, %i19
  vm.list.set.{ty} %r0, %i18, {value}
  %i6 = vm.add.i32 %i6, %i5
  vm.br ^bb1()
^bb3:
  vm.return %r0
}}
"
    )
}

/// The list `@append` leaves, as i64s (floats converted back), by the
/// loop's own rules: pass `i` resizes to the length plus `delta` and sets
/// element (old length) to value(i).
fn model(ty: &str, n: i32, delta: i32) -> Result<Vec<i64>, String> {
    let mut list: Vec<i64> = Vec::new();
    for i in 0..n {
        let len = list.len() as i32;
        let size = len.wrapping_add(delta);
        if size < 0 {
            return Err(format!("negative size {size}"));
        }
        list.resize(size as usize, 0);
        let v = match ty {
            "i32" | "f32" => i64::from(3 * i),
            _ => i64::from(3 * i) + (1 << 32),
        };
        match list.get_mut(len as usize) {
            Some(e) => *e = v,
            None => return Err(format!("index {len} out of bounds ({size})")),
        }
    }
    Ok(list)
}

/// The engines, with the hooked interpreter (`None`) first.
const ENGINES: [Option<Tier>; 4] = [None, Some(Tier::Interp), Some(Tier::Jit), Some(Tier::Auto)];

fn context(ty: &str, engine: Option<Tier>, limits: Limits) -> Context {
    let bytes = irvm::asm::assemble(&source(ty), "appends.vmasm").expect("assembles");
    let module = Module::from_bytes(bytes).expect("loads");
    let mut ctx = Context::with_limits(&TypeRegistry::new(), limits);
    ctx.set_tier(engine.unwrap_or(Tier::Interp));
    if engine.is_none() {
        ctx.set_observer(Some(Box::new(Watch)));
    }
    ctx.register_module(module).expect("registers");
    ctx
}

/// `@append(n, capacity, delta, shared)` on `engine`: the list's elements
/// as i64s, or the trap's message.
fn run(ty: &str, engine: Option<Tier>, limits: Limits, args: [i32; 4]) -> Result<Vec<i64>, String> {
    let mut ctx = context(ty, engine, limits);
    let f = ctx.function("append").expect("exported");
    let args: Vec<Value> = args.into_iter().map(Value::I32).collect();
    let got = ctx.invoke(&f, &args).map_err(|t| t.to_string())?;
    let [Value::Ref(Ref::List(list))] = &got[..] else {
        panic!("a list: {got:?}");
    };
    let n = list.len() as u32;
    (0..n)
        .map(|k| {
            Ok(match ty {
                "i32" => i64::from(list.get_i32(k).map_err(|t| t.to_string())?),
                "i64" => list.get_i64(k).map_err(|t| t.to_string())?,
                "f32" => list.get_f32(k).map_err(|t| t.to_string())? as i64,
                _ => list.get_f64(k).map_err(|t| t.to_string())? as i64,
            })
        })
        .collect()
}

#[test]
fn appends_of_every_type_leave_the_list_the_model_says_on_every_engine() {
    // 3,000 passes: `Auto` compiles the loop; capacities from none (the
    // charged, doubling growth) to exactly the length (every append
    // within it, the last at exactly the capacity) and one short of it
    // (the last one past it).
    for ty in ["i32", "i64", "f32", "f64"] {
        for (n, capacity) in [(0, 0), (1, 0), (3_000, 0), (3_000, 3_000), (3_000, 2_999)] {
            for shared in [0, 1] {
                let want = model(ty, n, 1).expect("appends");
                for engine in ENGINES {
                    let got = run(ty, engine, Limits::default(), [n, capacity, 1, shared]);
                    assert_eq!(
                        got.as_ref(),
                        Ok(&want),
                        "{ty} n {n} capacity {capacity} shared {shared} on {engine:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_resize_by_other_than_one_is_the_separate_instructions_work() {
    // By two (a zero left between the values), by none (the set at the
    // length traps on the first pass), by minus one (a negative size
    // traps): the same list or the same trap everywhere.
    for (delta, traps) in [(2, None), (0, Some("out of bounds")), (-1, Some(""))] {
        for shared in [0, 1] {
            let want = run(
                "i32",
                None,
                Limits::default(),
                [3_000, 8_000, delta, shared],
            );
            match (traps, &want) {
                (None, Ok(list)) => assert_eq!(list, &model("i32", 3_000, delta).unwrap()),
                (Some(words), Err(e)) => assert!(e.contains(words), "{e}"),
                _ => panic!("delta {delta}: {want:?}"),
            }
            for engine in ENGINES {
                let got = run(
                    "i32",
                    engine,
                    Limits::default(),
                    [3_000, 8_000, delta, shared],
                );
                assert_eq!(got, want, "delta {delta} shared {shared} on {engine:?}");
            }
        }
    }
}

#[test]
fn the_list_limit_and_the_memory_budget_stop_an_append_at_the_same_element() {
    // The doubling growth leaves room for 1,024 elements: the append
    // within that room that passes the limit must trap as the resize does
    // (element 1,001).
    let list_limit = Limits {
        max_list_elements: 1_000,
        ..Limits::default()
    };
    // A budget the doubling growth passes at some append.
    let memory = Limits {
        max_memory_bytes: 256 << 10,
        ..Limits::default()
    };
    for (what, limits) in [("list limit", list_limit), ("memory", memory)] {
        for shared in [0, 1] {
            let args = [100_000, 0, 1, shared];
            let want = run("i32", None, limits, args).expect_err("a trap");
            let words = match what {
                "list limit" => "list of 1001 elements exceeds",
                _ => "memory",
            };
            assert!(want.contains(words), "{want}");
            for engine in ENGINES {
                let got = run("i32", engine, limits, args);
                assert_eq!(
                    got.as_ref(),
                    Err(&want),
                    "{what} shared {shared} on {engine:?}"
                );
            }
        }
    }
}
