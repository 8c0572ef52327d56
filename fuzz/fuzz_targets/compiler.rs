//! The compiling tier on generated hot functions. Two kinds of input:
//! - valid programs from `gen_program.rs` (two linked modules, lists,
//!   yields, calls), run on the interpreter and on `Tier::Jit`, which
//!   compiles every function the first time it runs;
//! - one wide function: a loop whose body is up to 4,096 instructions
//!   (arithmetic, comparisons, conversions and selects picked from the ISA
//!   table, and now and then a diamond of branches) over up to 4,096 i32
//!   registers, so that sizes on both sides of the compiling tier's limit
//!   (`vm/jit/bounds.rs`) come up: run on `Tier::Jit`, and, when the body
//!   is short enough to run 20,000 times, on `Tier::Auto` too, which then
//!   finds the loop hot and compiles it, in the background when it is
//!   large.
//!
//! The programs run once more on `Tier::Jit` in a context made from the
//! same modules after the first is dropped, which links the code the
//! first compiled instead of compiling it.
//!
//! Every tier must end each call the same way (the same results or the
//! same trap), and no compile may fail: a panic inside the code generator
//! is caught and the function interpreted, so the results would agree, but
//! it is a bug, reported by `Context::functions_left_to_interpreter`.
#![no_main]

mod gen_program;

use irvm::bytecode::isa::{Access, Bank, Field, OpcodeSet, INSTRUCTIONS};
use irvm::{CompileRefusal, Context, Module, Ref, Tier, TypeRegistry, Value};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

use gen_program::instruction_text::instruction_line;

fn load(bytes: &[u8]) -> Module {
    Module::from_bytes(bytes.to_vec())
        .unwrap_or_else(|e| panic!("generated module does not load: {e}"))
}

fn context(modules: &[&[u8]], tier: Tier) -> Context {
    let modules: Vec<Module> = modules.iter().map(|b| load(b)).collect();
    context_of(&modules, tier)
}

/// A context of `tier` with `modules` registered (clones of one `Module`
/// share its compiled code between contexts).
fn context_of(modules: &[Module], tier: Tier) -> Context {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.set_tier(tier);
    for module in modules {
        ctx.register_module(module.clone())
            .unwrap_or_else(|e| panic!("generated module does not register: {e}"));
    }
    ctx
}

/// An outcome as comparable text.
fn outcome(r: &std::result::Result<Vec<Value>, irvm::Trap>) -> String {
    match r {
        Ok(v) => v.iter().map(|v| format!("{v}; ")).collect(),
        Err(t) => format!("trap {t}"),
    }
}

/// Panics when a compile in `ctx` failed.
fn assert_no_compiler_failure(ctx: &Context, text: &str) {
    for left in ctx.functions_left_to_interpreter() {
        assert!(
            !matches!(left.reason, CompileRefusal::CompilerFailed { .. }),
            "{}.{}: {}\n{text}",
            left.module,
            left.function,
            left.reason
        );
    }
}

fn assemble(text: &str, file: &str) -> Vec<u8> {
    irvm::asm::assemble(text, file)
        .unwrap_or_else(|e| panic!("generated program does not assemble:\n{e}\n{text}"))
}

/// Runs `gen_program`'s program on the interpreter and on `Tier::Jit`,
/// then once more on `Tier::Jit` in a context made after the first is
/// dropped, from the same modules: it links the code the first compiled
/// (`jit::SharedCode`) with its own callees' addresses.
fn program(u: &mut Unstructured<'_>) -> Result<()> {
    let program = gen_program::generate(u, false)?;
    let text = format!("{}\n{}", program.lib, program.app);
    let lib = assemble(&program.lib, "lib.vmasm");
    let app = assemble(&program.app, "app.vmasm");
    let mut interp = context(&[&lib, &app], Tier::Interp);
    let shared = [load(&lib), load(&app)];
    let mut jit = context_of(&shared, Tier::Jit);
    let calls: Vec<(String, Vec<Value>)> = program
        .app_exports
        .iter()
        .map(|(name, sig)| {
            let mut args: Vec<Value> = (0..sig.i32_args)
                .map(|k| Value::I32(k as i32 * 3 - 1))
                .collect();
            args.extend((0..sig.ref_args).map(|_| Value::Ref(Ref::Null)));
            (format!("app.{name}"), args)
        })
        .collect();
    let mut wants = Vec::with_capacity(calls.len());
    for (name, args) in &calls {
        let f = interp.function(name).expect("export");
        let want = outcome(&interp.invoke(&f, args));
        let f = jit.function(name).expect("export");
        let got = jit.invoke(&f, args);
        assert_eq!(want, outcome(&got), "{name} on jit\n{text}");
        wants.push(want);
    }
    assert_no_compiler_failure(&jit, &text);
    drop(jit);
    let mut linked = context_of(&shared, Tier::Jit);
    for ((name, args), want) in calls.iter().zip(&wants) {
        let f = linked.function(name).expect("export");
        let got = linked.invoke(&f, args);
        assert_eq!(*want, outcome(&got), "{name} on jit, linked code\n{text}");
    }
    assert_no_compiler_failure(&linked, &text);
    Ok(())
}

/// The instructions a wide body picks from: every one whose fields are
/// registers and constants of the number banks.
fn arithmetic() -> Vec<&'static irvm::bytecode::isa::InstrInfo> {
    INSTRUCTIONS
        .iter()
        .filter(|i| i.set != OpcodeSet::Internal)
        .filter(|i| !i.fields.is_empty())
        .filter(|i| {
            i.fields.iter().all(|f| match f {
                Field::Reg(b, _) | Field::Const(b) => *b != Bank::Ref,
                _ => false,
            })
        })
        .collect()
}

/// A module with one function `f(n)`: `n` passes through a loop whose body
/// is `body` instructions over `regs` i32 registers, then returns one of
/// them. Registers 0..3 are the loop's: the count, the constant 1, the
/// condition.
fn wide_function(u: &mut Unstructured<'_>, body: usize, regs: u16) -> Result<String> {
    let table = arithmetic();
    let reg = |u: &mut Unstructured<'_>, bank: Bank, access: Access| -> Result<String> {
        let wide = matches!(bank, Bank::I64 | Bank::F64);
        let lo = if access == Access::Write { 3u16 } else { 0 };
        let hi = if wide { regs - 2 } else { regs - 1 };
        let mut r = u.int_in_range(lo..=hi)?;
        if wide {
            r = (r & !1).max(4);
            return Ok(format!("%i{}:{}", r, r + 1));
        }
        Ok(format!("%i{r}"))
    };
    let mut out = String::from(
        "vm.module @m version 0\n\nvm.export @f\nvm.func @f(%i0: i32) -> (i32) {\n^bb0:\n  \
         %i1 = vm.const.i32 1\n  vm.br ^bb1()\n^bb1:\n",
    );
    let mut block = 1;
    for k in 0..body {
        // Now and then a diamond: a branch around the next instructions.
        if k % 64 == 63 && u.ratio(1, 2)? {
            let c = reg(u, Bank::I32, Access::Read)?;
            out.push_str(&format!(
                "  vm.cond_br {c}, ^bb{}(), ^bb{}()\n^bb{}:\n",
                block + 1,
                block + 2,
                block + 1
            ));
            out.push_str(&format!("  vm.br ^bb{}()\n^bb{}:\n", block + 2, block + 2));
            block += 2;
        }
        let info = *u.choose(&table)?;
        let mut texts = Vec::with_capacity(info.fields.len());
        for f in info.fields {
            texts.push(match *f {
                Field::Reg(bank, access) => reg(u, bank, access)?,
                Field::Const(Bank::F32) => {
                    format!("{:?}", u.int_in_range(-8i32..=8)? as f32 * 0.75)
                }
                Field::Const(Bank::F64) => {
                    format!("{:?}", u.int_in_range(-8i32..=8)? as f64 * 1.25)
                }
                Field::Const(_) => u.int_in_range(-2i32..=40)?.to_string(),
                _ => unreachable!("filtered out"),
            });
        }
        out.push_str("  ");
        out.push_str(&instruction_line(info, &texts));
        out.push('\n');
    }
    out.push_str(&format!(
        "  %i0 = vm.sub.i32 %i0, %i1\n  %i2 = vm.cmp.nz.i32 %i0\n  \
         vm.cond_br %i2, ^bb1(), ^bb{}()\n^bb{}:\n  vm.return %i{}\n}}\n",
        block + 1,
        block + 1,
        u.int_in_range(3..=regs - 1)?
    ));
    Ok(out)
}

/// Runs a wide function on every tier.
fn wide(u: &mut Unstructured<'_>) -> Result<()> {
    let body = 1 << u.int_in_range(0..=12u32)?;
    let body = u.int_in_range(body / 2..=body)?;
    let regs = 1u16 << u.int_in_range(3..=12u32)?;
    let regs = u.int_in_range(regs / 2 + 4..=regs)?;
    let text = wide_function(u, body, regs)?;
    let module = assemble(&text, "wide.vmasm");
    // Enough passes for Tier::Auto to find the loop hot (20,000 back
    // edges), not many more; a body too long to run that often (tens of
    // milliseconds) runs twice, on Tier::Jit only.
    let (passes, tiers): (i32, &[Tier]) = if body <= 1024 {
        (20_100, &[Tier::Auto, Tier::Jit])
    } else {
        (2, &[Tier::Jit])
    };
    let n = [Value::I32(passes)];
    let mut interp = context(&[&module], Tier::Interp);
    let f = interp.function("m.f").expect("export");
    let want = interp.invoke(&f, &n);
    for &tier in tiers {
        let mut ctx = context(&[&module], tier);
        let f = ctx.function("m.f").expect("export");
        let got = ctx.invoke(&f, &n);
        assert_eq!(outcome(&want), outcome(&got), "f on {tier}\n{text}");
        assert_no_compiler_failure(&ctx, &text);
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let _ = match u.arbitrary::<bool>() {
        Ok(true) => wide(&mut u),
        _ => program(&mut u),
    };
});
