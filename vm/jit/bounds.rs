//! How large a function the compiling tier takes on, decided before any
//! compiling starts, and what compiling it may cost.
//!
//! Cranelift's time and memory grow with more than a function's length:
//! - the register allocator's work with the values live at each
//!   instruction, at most the variables the translator declares (one per
//!   register view: `translate.rs`'s `S`, `F`, `W`, `D`, and three per
//!   buffer register);
//! - SSA construction with the blocks where control flow merges times the
//!   variables live there, which become block parameters (every block is
//!   an entry with `Tier::Jit`, so there every variable is a parameter of
//!   every block);
//! - the write-backs with the exits times the registers stored at each;
//! - the e-graph optimizer (`opt_level=speed`) with the pure instructions
//!   it rewrites: up to about half a millisecond and 50 KiB each, in
//!   chains of additions, whatever the registers.
//!
//! So the measure is [`Size::units`]: (instructions + exits + 2 × blocks)
//! × (variables + 64). Functions above [`MAX_UNITS`] are left to the
//! interpreter; below it, those of at most [`MAX_OPTIMIZED_INSTRUCTIONS`]
//! instructions are optimized, the others compiled without the e-graph
//! optimizer. The figures behind the weights and limits are in
//! docs/HOSTILE_INPUT.md ("Compiling"). Measured on the 2-core
//! development machine (a busy one: times vary by up to 2×), for 412
//! compiles of generated functions (straight-line additions, mixed
//! arithmetic, divisions that may trap, branchy loops, blocks of three
//! instructions; 8 to 2,000 registers; 25 to 10,000 instructions; both
//! tiers):
//!
//! | functions | units | slowest compile | most heap |
//! | --- | --- | --- | --- |
//! | every real kernel and benchmark function compiled (tests/models, corpus, vm_bench, vmvx benchmarks; both tiers) | at most 24,178 (conv2d) | 29 ms | 1.8 MB |
//! | generated, at most 150,000 units, unoptimized | | 74 ms | 14 MB |
//! | generated, at most 200 instructions, optimized | | 79 ms (additions) | 4.7 MB |
//! | generated, 150,000 to 600,000 units, unoptimized (refused) | | 740 ms | 158 MB |
//! | hostile: 100,000 additions over 2,000 registers (now refused) | 206 M | before: 38 to 53 s, then a panic in Cranelift | 1.8 to 3.3 GB (two such modules) |
//!
//! A compile runs on the calling thread when the function has at most
//! [`MAX_FOREGROUND_UNITS`] (every real kernel), else, with `Tier::Auto`,
//! on a background thread (`background.rs`) while the interpreter runs on.

use std::sync::OnceLock;

use cranelift_codegen::isa::OwnedTargetIsa;

use crate::bytecode::isa::{Bank, Field, Opcode, REF_BANK_BIT, REF_INDEX_MASK};
use crate::program::Function;

use super::translate::{edges, first_half, translated};
use super::CompileRefusal;

/// Above this many [`Size::units`] a function is left to the interpreter:
/// six times the largest real kernel; no generated function below it took
/// more than 80 ms or 14 MB to compile.
pub(crate) const MAX_UNITS: u64 = 150_000;

/// Functions of more instructions than this are compiled without the
/// e-graph optimizer (`opt_level=none`), whose cost per instruction can
/// reach half a millisecond: the largest real kernel has 125.
pub(crate) const MAX_OPTIMIZED_INSTRUCTIONS: u64 = 200;

/// At most this many units compile on the calling thread (every real
/// kernel: at most 30 ms; the slowest generated function, additions the
/// optimizer rewrites, 80 ms); with `Tier::Auto`, larger functions compile
/// in the background.
pub(crate) const MAX_FOREGROUND_UNITS: u64 = 25_000;

/// Bytes of heap a compile is charged per unit: the most measured was
/// 200 (unoptimized, many exits).
const BYTES_PER_UNIT: u64 = 256;

/// Bytes of heap the optimizer is charged per instruction: the most
/// measured was 46 KiB (chains of additions).
const BYTES_PER_OPTIMIZED_INSTRUCTION: u64 = 64 << 10;

/// Bytes every compile is charged whatever its size (the code generator's
/// tables, the code buffer). With the two above, the charge was at least
/// twice the heap every measured compile took.
const BYTES_PER_COMPILE: u64 = 1 << 20;

/// Weights of the measure: a block costs as much as two instructions, and
/// every instruction as much as 64 variables would (the cost of an
/// instruction that does not depend on them).
const BLOCK_WEIGHT: u64 = 2;
const BASE_VARIABLES: u64 = 64;

/// A function's size, as the compiling tier measures it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Size {
    /// Instructions of the body (before the guard).
    pub instructions: u64,
    /// Blocks: the entry and every branch target.
    pub blocks: u64,
    /// Instructions where compiled code may leave: those it does not
    /// translate, and those that may trap.
    pub exits: u64,
    /// Cranelift variables: one per view of each i32 slot the translated
    /// instructions touch, three per buffer register they access.
    pub variables: u64,
}

impl Size {
    /// The measure the limits apply to: (instructions + exits + 2 ×
    /// blocks) × (variables + 64).
    pub fn units(&self) -> u64 {
        self.instructions
            .saturating_add(self.exits)
            .saturating_add(self.blocks.saturating_mul(BLOCK_WEIGHT))
            .saturating_mul(self.variables.saturating_add(BASE_VARIABLES))
    }
}

/// Measures `func`, in time linear in its length and register count.
pub(crate) fn measure(func: &Function) -> Size {
    let guard = (func.guard as usize).min(func.code.len());
    let code = &func.code[..];
    let n32 = func.i32_count as usize;
    // The views of each i32 slot, as `translate::slot_views` marks them.
    let mut views = vec![0u8; n32 + 1];
    let mut mark = |slot: u16, bank: Bank| {
        let s = slot as usize;
        let (bits, wide) = match bank {
            Bank::I32 => (1, false),
            Bank::F32 => (1 | 2, false),
            Bank::I64 => (1 | 4, true),
            Bank::F64 => (1 | 4 | 8, true),
            Bank::Ref => return,
        };
        if s < n32 {
            views[s] |= bits;
            if wide && s + 1 < n32 {
                views[s + 1] |= 1;
            }
        }
    };
    let mut target = vec![false; guard];
    let mut exits = 0u64;
    let mut buffers = vec![false; func.ref_count as usize + 1];
    for k in 0..guard {
        let i = &code[k];
        let op = first_half(i.op);
        if !translated(op) {
            exits += 1;
            continue;
        }
        if may_leave(op) {
            exits += 1;
        }
        let banks = op.info().fields.iter().filter_map(|f| match f {
            Field::Reg(bank, _) => Some(*bank),
            Field::RefMove(_) => Some(Bank::Ref),
            _ => None,
        });
        for (bank, r) in banks.zip([i.a, i.b, i.c, i.d]) {
            mark(r, bank);
        }
        let m = op.info().mnemonic;
        if m.starts_with("buffer.load.") || m.starts_with("buffer.store.") {
            let r = (i.a & REF_INDEX_MASK) as usize;
            if let Some(b) = buffers.get_mut(r) {
                *b = true;
            }
        }
        for e in edges(code, k).unwrap_or_default() {
            if let Some(t) = target.get_mut(e.to) {
                *t = true;
            }
            for (s, d) in e.remap.unwrap_or_default() {
                if s & REF_BANK_BIT == 0 {
                    mark(s, Bank::I32);
                    mark(d, Bank::I32);
                }
            }
        }
    }
    let variables: u64 = views.iter().map(|v| u64::from(v.count_ones())).sum::<u64>()
        + 3 * buffers.iter().filter(|&&b| b).count() as u64;
    let blocks = 1 + target.iter().skip(1).filter(|&&t| t).count() as u64;
    Size {
        instructions: guard as u64,
        blocks,
        exits,
        variables,
    }
}

/// Whether compiled code may leave at translated instruction `op` (after
/// [`first_half`]) for the interpreter to trap: a zero divisor, a buffer,
/// list or global access out of range. Each such instruction ends a block
/// and has an exit block of its own.
fn may_leave(op: Opcode) -> bool {
    let m = op.info().mnemonic;
    ["div.i", "rem.i", "buffer.", "list.", "global."]
        .iter()
        .any(|p| m.starts_with(p))
}

/// How a function that is within the limits is compiled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// Whether the e-graph optimizer runs.
    pub optimize: bool,
    /// Whether it compiles on the background thread (else on the calling
    /// thread).
    pub background: bool,
    /// The most heap the compile is expected to take, charged to the
    /// context's memory budget while it runs.
    pub memory: u64,
}

impl Plan {
    /// The code generator for this plan.
    pub fn isa(&self) -> Option<&'static OwnedTargetIsa> {
        if self.optimize {
            super::translate::isa()
        } else {
            unoptimizing_isa()
        }
    }
}

/// How to compile `func`, or why not to.
pub(crate) fn plan(func: &Function) -> Result<Plan, CompileRefusal> {
    let size = measure(func);
    let units = size.units();
    if units > MAX_UNITS {
        return Err(CompileRefusal::TooLarge {
            units,
            limit: MAX_UNITS,
        });
    }
    let optimize = size.instructions <= MAX_OPTIMIZED_INSTRUCTIONS;
    let optimizer = if optimize {
        size.instructions * BYTES_PER_OPTIMIZED_INSTRUCTION
    } else {
        0
    };
    Ok(Plan {
        optimize,
        background: units > MAX_FOREGROUND_UNITS,
        memory: BYTES_PER_COMPILE + units * BYTES_PER_UNIT + optimizer,
    })
}

/// The host's code generator without the e-graph optimizer (for functions
/// above [`MAX_OPTIMIZED_INSTRUCTIONS`]), built once.
fn unoptimizing_isa() -> Option<&'static OwnedTargetIsa> {
    static ISA: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    ISA.get_or_init(|| super::translate::host_isa("none"))
        .as_ref()
}

#[cfg(all(test, feature = "asm"))]
mod tests {
    use super::*;
    use crate::context::Registered;
    use crate::{Context, Module, TypeRegistry};

    /// The size of the first function of the module `source`.
    fn size_of(source: &str) -> Size {
        measure(&function(source))
    }

    /// A loop of `n` additions over `regs` registers.
    fn additions(n: usize, regs: usize) -> String {
        let mut s = String::from(
            "vm.module @m version 0\nvm.func @f(%i0: i32) -> (i32) {\n^bb0:\n  vm.br ^bb1()\n^bb1:\n",
        );
        for k in 0..n {
            s.push_str(&format!(
                "  %i{} = vm.add.i32 %i{}, %i0\n",
                1 + k % (regs - 1),
                1 + (k * 7) % (regs - 1)
            ));
        }
        s.push_str("  vm.cond_br %i1, ^bb1(), ^bb2()\n^bb2:\n  vm.return %i1\n}\n");
        s
    }

    #[test]
    fn the_measure_counts_instructions_exits_blocks_and_variables() {
        let size = size_of(
            "vm.module @m version 0\nvm.type !vm.buffer\n\
             vm.func @f(%i0: i32, %r0: !vm.buffer) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32 1\n  \
             %i2:3 = vm.const.i64.zero\n  vm.br ^bb1()\n^bb1:\n  \
             %i4 = vm.buffer.load.i32 %r0, %i2:3\n  %i5 = vm.div.i32.s %i4, %i1\n  \
             %i6 = vm.cmp.lt.i32.s %i5, %i0\n  vm.cond_br %i6, ^bb1(), ^bb2()\n^bb2:\n  \
             vm.return %i5\n}\n",
        );
        assert_eq!(
            size,
            Size {
                // const, const, br, load, div, cmp (fused with the branch),
                // cond_br, return.
                instructions: 8,
                // The entry, ^bb1, ^bb2.
                blocks: 3,
                // The load and the division may trap; the return is not
                // compiled.
                exits: 3,
                // %i0, %i1, %i2 (as an i64 and as an i32), %i3 (the i64's
                // upper half), %i4, %i5, %i6; and the buffer's three.
                variables: 11,
            }
        );
        assert_eq!(size.units(), (8 + 3 + 2 * 3) * (11 + 64));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "assembles thousands of instructions: too slow under Miri"
    )]
    fn plans_follow_the_limits() {
        // Small: optimized, on the calling thread.
        let small = plan(&function(&additions(20, 8))).expect("compiled");
        assert!(small.optimize && !small.background);
        assert!(small.memory > BYTES_PER_COMPILE + 20 * BYTES_PER_OPTIMIZED_INSTRUCTION);
        // More instructions than the optimizer takes, in the background.
        let long = plan(&function(&additions(600, 64))).expect("compiled");
        assert!(!long.optimize && long.background);
        // Too large.
        let size = size_of(&additions(3000, 256));
        assert!(size.units() > MAX_UNITS);
        assert_eq!(
            plan(&function(&additions(3000, 256))).unwrap_err(),
            CompileRefusal::TooLarge {
                units: size.units(),
                limit: MAX_UNITS
            }
        );
    }

    /// The first function of the module `source`.
    fn function(source: &str) -> Function {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_module(Module::from_assembly(source, "m.vmasm").expect("assembles"))
            .expect("registers");
        let Registered::Bytecode(b) = &ctx.modules[0] else {
            unreachable!("one bytecode module")
        };
        Function::clone(&b.funcs[0])
    }
}
