//! The differential tester: random valid programs generated from the ISA
//! table, run through every engine available, which must print the same.
//!
//! Each program is VM assembly (`vm.module @p`) whose functions compute
//! through random instructions chosen from `irvm::bytecode::isa::INSTRUCTIONS` (every
//! instruction whose operands are i32/i64/f32/f64 registers or constants:
//! arithmetic, bitwise, shifts, compares, selects, casts, math), threaded
//! with structured pieces that cover the rest of the table: counted loops
//! carrying values in block arguments, `br_table`, `break`/`cond_break`, a
//! rarely taken `vm.fail`, calls to a generated helper, yields (in `@main`
//! and in `@yielder`, reached by `call.yieldable`), direct and indirect
//! globals of every type, buffers (alloc, store, load, fill, copy, compare,
//! hash, length), rodata, ref globals, `cast.any.ref`, `discard.refs`,
//! switches of every type, `print`/`trace`, `import.resolved` and, in every
//! third program, hal calls (variadic and variadic yieldable) returning a
//! buffer view, and lists (typed and variant, returned so their printing
//! is compared too). Integer divisors are made non-zero and positive
//! (division by zero and `INT_MIN / -1` crash the reference:
//! docs/COMPATIBILITY.md). Floats are returned both as values (`%g`) and as
//! bits. Every program runs with ordinary, special (NaN, ±inf, -0,
//! denormals, INT_MIN) and random inputs.
//!
//! The reference never resumes a yielded entry function and iree-as-module
//! cannot spell `switch.ref`, so such lines carry a twin (`TWIN`,
//! `ASM_TWIN`): yields become branches, `switch.ref` a `br_table`. irvm
//! must print the same for the program and its twin.
//!
//! Engines: `irvm run` on the text (plain loop, `--engine=interp`), with
//! `--fuel` (the fueled loop), compiled (`--engine=jit`: every function
//! compiled at its first run) and on the twin, always; with the reference tools installed also
//! `iree-as-module` + `iree-run-module` on the twin, irvm on the
//! reference's `.vmfb`, and the assembler mode: `irvm as`'s `.vmfb` of the
//! twin and of the program with only its yields rewritten under
//! `iree-run-module` (both assemblers must accept the text and their
//! outputs run the same). Programs with hal calls are compared with the
//! reference through irvm on iree-as-module's output only: neither
//! assembler records module dependencies, so iree-run-module registers no
//! hal for them.
//!
//! Fuel is exact across engines: the hooked loop (`--print_statistics`
//! observes every instruction and reports the fuel left) measures what a
//! run costs, then the run is repeated with one unit less than that (it
//! must run out, at the same instruction everywhere), exactly that (it
//! must not) and less again, in the hooked loop, the fueled interpreter,
//! compiled code (`--engine=jit`) and the default tier: all print the same.
//!
//! `cargo test --test all random_differential` runs a fixed-seed slice (CI);
//! `IRVM_DIFF_SECONDS=1200 IRVM_DIFF_SEED=7 cargo test --release --test all
//! random_differential::long_run -- --ignored --nocapture` runs a long one
//! and prints its tally (recorded in docs/COMPATIBILITY.md).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use irvm::bytecode::isa::{Access, Bank, Field, InstrInfo, Opcode, OpcodeSet, INSTRUCTIONS};

use crate::common;
use crate::common::instruction_text::instruction_line;

/// A small deterministic generator (xorshift64*), so a seed names a program.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const I32_CONSTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    7,
    31,
    32,
    33,
    255,
    -128,
    65535,
    0x7FFF_FFFF,
    -0x8000_0000,
    1000,
    -77,
];
const I64_CONSTS: &[i64] = &[
    0,
    1,
    -1,
    63,
    64,
    65,
    0xFFFF_FFFF,
    0x1_0000_0000,
    i64::MAX,
    i64::MIN,
    -12345,
    1 << 53,
];
/// Float constants normal in both widths (iree-as-module refuses literals
/// that overflow or underflow: tests/all/asm.rs and `asm::text`).
const F_CONSTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.5",
    "-2.5",
    "1.5",
    "3.25",
    "1e30",
    "-1e-30",
    "65504",
    "1.17549435e-38",
    "100",
    "-0.75",
    "2.5",
    "3.4e38",
    "-0",
];

/// Registers of each value bank the function has defined so far.
#[derive(Default)]
struct Pools {
    i32s: Vec<u32>,
    i64s: Vec<u32>,
    f32s: Vec<u32>,
    f64s: Vec<u32>,
    next: u32,
}

impl Pools {
    fn of(&mut self, bank: Bank) -> &mut Vec<u32> {
        match bank {
            Bank::I32 => &mut self.i32s,
            Bank::I64 => &mut self.i64s,
            Bank::F32 => &mut self.f32s,
            Bank::F64 => &mut self.f64s,
            Bank::Ref => unreachable!("no ref pool"),
        }
    }
    fn fresh(&mut self, bank: Bank) -> u32 {
        if bank.slots() == 2 && self.next % 2 == 1 {
            self.next += 1;
        }
        let r = self.next;
        self.next += bank.slots() as u32;
        r
    }
    /// A register to read (one exists for every bank: the arguments).
    fn read(&mut self, rng: &mut Rng, bank: Bank) -> String {
        let pool = self.of(bank).clone();
        name(bank, *rng.pick(&pool))
    }
    /// A register to write: a new one, or one of the bank's already defined.
    fn write(&mut self, rng: &mut Rng, bank: Bank) -> String {
        let existing = self.of(bank).clone();
        let r = if existing.len() > 2 && rng.chance(40) {
            // Never overwrite the arguments (kept for the loops' bounds).
            existing[1 + rng.below(existing.len() - 1)]
        } else {
            let r = self.fresh(bank);
            self.of(bank).push(r);
            r
        };
        name(bank, r)
    }
}

fn name(bank: Bank, r: u32) -> String {
    match bank {
        Bank::I64 | Bank::F64 => format!("%i{}:{}", r, r + 1),
        Bank::Ref => format!("%r{r}"),
        _ => format!("%i{r}"),
    }
}

/// Whether every field is a value register or a constant (the instructions
/// the generator composes freely), with at least one result.
/// Instructions of the table the generator leaves out, with why: the
/// programs are compared with what the reference's own assembler makes of
/// them, and iree-as-module 3.13 cannot spell these. Their semantics are
/// checked against iree-compile's output instead (`tests/mlir/fpowi.mlir`,
/// `semantics::fpowi_matches_the_reference_bit_for_bit`).
const NOT_GENERATED: &[(&str, &str)] = &[
    (
        "fpowi.f32",
        "iree-as-module reads its i64 exponent as a scalar register and refuses the pair",
    ),
    (
        "fpowi.f64",
        "iree-as-module reads its i64 exponent as a scalar register and refuses the pair",
    ),
];

fn is_generated(mnemonic: &str) -> bool {
    !NOT_GENERATED.iter().any(|(m, _)| *m == mnemonic)
}

fn is_value_instruction(info: &InstrInfo) -> bool {
    info.set != OpcodeSet::Internal
        && is_generated(info.mnemonic)
        && !info.mnemonic.starts_with("global.")
        && info.fields.iter().all(|f| match f {
            Field::Reg(b, _) => *b != Bank::Ref,
            Field::Const(_) => true,
            _ => false,
        })
        && info
            .fields
            .iter()
            .any(|f| matches!(f, Field::Reg(_, Access::Write)))
}

/// Integer divisions whose divisor must be made non-zero and positive.
fn is_division(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::DivI32S
            | Opcode::DivI32U
            | Opcode::RemI32S
            | Opcode::RemI32U
            | Opcode::DivI64S
            | Opcode::DivI64U
            | Opcode::RemI64S
            | Opcode::RemI64U
    )
}

/// A generated program and the mnemonics it uses.
struct Program {
    text: String,
    /// The program with its twin lines (`twin_of`): what the reference
    /// assembles and runs.
    twin: String,
    /// The program with only its yields rewritten: what the reference
    /// runs from `irvm as`'s bytecode (it never resumes a yielded entry
    /// function, and iree-as-module cannot spell `switch.ref`).
    runnable: String,
    used: BTreeSet<&'static str>,
}

struct FuncGen<'a> {
    rng: &'a mut Rng,
    pools: Pools,
    body: String,
    blocks: u32,
    refs: u32,
    used: BTreeSet<&'static str>,
}

impl FuncGen<'_> {
    /// Records mnemonics a structured piece wrote itself.
    fn uses(&mut self, mnemonics: &[&'static str]) {
        self.used.extend(mnemonics.iter().copied());
    }

    fn line(&mut self, mnemonic: &'static str, text: String) {
        self.used.insert(mnemonic);
        self.body.push_str(&text);
    }

    fn value_instruction(&mut self, info: &'static InstrInfo) {
        let mut texts = vec![String::new(); info.fields.len()];
        // Reads first (so an instruction may overwrite its own operand).
        for (i, f) in info.fields.iter().enumerate() {
            match *f {
                Field::Reg(bank, Access::Read) => {
                    texts[i] = self.pools.read(self.rng, bank);
                }
                Field::Const(bank) => {
                    texts[i] = match bank {
                        Bank::I32 => self.rng.pick(I32_CONSTS).to_string(),
                        Bank::I64 => self.rng.pick(I64_CONSTS).to_string(),
                        _ => self.rng.pick(F_CONSTS).to_string(),
                    }
                }
                _ => {}
            }
        }
        if is_division(info.op) {
            // divisor = (x & 127) | 1
            let bank = if info.mnemonic.contains("i64") {
                Bank::I64
            } else {
                Bank::I32
            };
            let suffix = if bank == Bank::I64 { "i64" } else { "i32" };
            let mask = self.pools.fresh(bank);
            let d = self.pools.fresh(bank);
            let (mask, d) = (name(bank, mask), name(bank, d));
            let x = texts[1].clone();
            self.body.push_str(&format!(
                "  {mask} = vm.const.{suffix} 127\n  {d} = vm.and.{suffix} {x}, {mask}\n"
            ));
            self.body.push_str(&format!(
                "  {mask} = vm.const.{suffix} 1\n  {d} = vm.or.{suffix} {d}, {mask}\n"
            ));
            texts[1] = d;
        }
        for (i, f) in info.fields.iter().enumerate() {
            if let Field::Reg(bank, Access::Write) = *f {
                texts[i] = self.pools.write(self.rng, bank);
            }
        }
        let text = format!("  {}\n", instruction_line(info, &texts));
        self.line(info.mnemonic, text);
    }

    fn label(&mut self) -> String {
        self.blocks += 1;
        format!("^bb{}", self.blocks)
    }

    /// A counted loop: `acc` (a block argument) goes through a random i32
    /// operation each iteration.
    fn counted_loop(&mut self) {
        let n = 1 + self.rng.below(12);
        let c = name(Bank::I32, self.pools.fresh(Bank::I32));
        let one = name(Bank::I32, self.pools.fresh(Bank::I32));
        let bound = name(Bank::I32, self.pools.fresh(Bank::I32));
        let t = name(Bank::I32, self.pools.fresh(Bank::I32));
        let f = name(Bank::I32, self.pools.fresh(Bank::I32));
        let acc_r = self.pools.fresh(Bank::I32);
        let acc = name(Bank::I32, acc_r);
        let p = self.pools.read(self.rng, Bank::I32);
        let op = *self.rng.pick(&["add", "xor", "mul", "sub", "or"]);
        let head = self.label();
        let exit = self.label();
        let mut s = String::new();
        let _ = writeln!(s, "  {c} = vm.const.i32.zero");
        let _ = writeln!(s, "  {one} = vm.const.i32 1");
        let _ = writeln!(s, "  {bound} = vm.const.i32 {n}");
        let _ = writeln!(s, "  vm.br {head}({p}->{acc})");
        let _ = writeln!(s, "{head}:");
        let _ = writeln!(s, "  {t} = vm.{op}.i32 {acc}, {p}");
        let _ = writeln!(s, "  {c} = vm.add.i32 {c}, {one}");
        let _ = writeln!(s, "  {f} = vm.cmp.lt.i32.s {c}, {bound}");
        let _ = writeln!(
            s,
            "  vm.cond_br {f}, {head}({t}->{acc}), {exit}({t}->{acc})"
        );
        let _ = writeln!(s, "{exit}:");
        self.body.push_str(&s);
        self.uses(&[
            "br",
            "cond_br",
            "const.i32.zero",
            "const.i32",
            "cmp.lt.i32.s",
            "add.i32",
        ]);
        self.pools.i32s.push(acc_r);
    }

    /// `vm.switch.<type> %index[%a, %b, ...] else %default` for a random
    /// value bank, indexed by a pool i32 (usually out of range, sometimes in).
    fn switch(&mut self) {
        // Not switch.i64/f64: the reference truncates their values to 32
        // bits (docs/COMPATIBILITY.md; tests/all/compatibility.rs covers them).
        let (bank, suffix) = *self.rng.pick(&[(Bank::I32, "i32"), (Bank::F32, "f32")]);
        let index = if self.rng.chance(50) {
            let r = name(Bank::I32, self.pools.fresh(Bank::I32));
            self.body
                .push_str(&format!("  {r} = vm.const.i32 {}\n", self.rng.below(4)));
            r
        } else {
            self.pools.read(self.rng, Bank::I32)
        };
        let n = 1 + self.rng.below(3);
        let cases: Vec<String> = (0..n).map(|_| self.pools.read(self.rng, bank)).collect();
        let default = self.pools.read(self.rng, bank);
        let out = self.pools.write(self.rng, bank);
        let text = format!(
            "  {out} = vm.switch.{suffix} {index}[{}] else {default}\n",
            cases.join(", ")
        );
        self.line(
            match bank {
                Bank::I32 => "switch.i32",
                Bank::I64 => "switch.i64",
                Bank::F32 => "switch.f32",
                _ => "switch.f64",
            },
            text,
        );
    }

    /// Values through globals, direct (`.rwdata[N]`) and indirect.
    fn globals(&mut self) {
        let v32 = self.pools.read(self.rng, Bank::I32);
        let v64 = self.pools.read(self.rng, Bank::I64);
        let vf = self.pools.read(self.rng, Bank::F32);
        let vd = self.pools.read(self.rng, Bank::F64);
        let off = name(Bank::I32, self.pools.fresh(Bank::I32));
        let mut s = String::new();
        let _ = writeln!(s, "  vm.global.store.i32 {v32}, .rwdata[0]");
        let _ = writeln!(s, "  vm.global.store.i64 {v64}, .rwdata[8]");
        let _ = writeln!(s, "  vm.global.store.f32 {vf}, .rwdata[16]");
        let _ = writeln!(s, "  vm.global.store.f64 {vd}, .rwdata[24]");
        let _ = writeln!(s, "  {off} = vm.const.i32 4");
        let _ = writeln!(s, "  vm.global.store.indirect.i32 {off}, {v32}");
        let a = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {a} = vm.global.load.indirect.i32 {off}");
        let b = self.pools.write(self.rng, Bank::I64);
        let _ = writeln!(s, "  {b} = vm.global.load.i64 .rwdata[8]");
        let c = self.pools.write(self.rng, Bank::F32);
        let _ = writeln!(s, "  {c} = vm.global.load.f32 .rwdata[16]");
        let d = self.pools.write(self.rng, Bank::F64);
        let _ = writeln!(s, "  {d} = vm.global.load.f64 .rwdata[24]");
        let e = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {e} = vm.global.load.i32 .rwdata[0]");
        self.body.push_str(&s);
        self.uses(&[
            "global.store.i32",
            "global.store.i64",
            "global.store.f32",
            "global.store.f64",
            "global.store.indirect.i32",
            "global.load.indirect.i32",
            "global.load.i64",
            "global.load.f32",
            "global.load.f64",
            "global.load.i32",
        ]);
    }

    /// A 64-byte buffer: stores, loads, fill, copy, compare, length.
    fn buffer(&mut self) {
        let r = self.refs;
        self.refs += 2;
        let (buf, copy) = (format!("%r{r}"), format!("%r{}", r + 1));
        let len = name(Bank::I64, self.pools.fresh(Bank::I64));
        let align = name(Bank::I32, self.pools.fresh(Bank::I32));
        let off = name(Bank::I64, self.pools.fresh(Bank::I64));
        let zero = name(Bank::I64, self.pools.fresh(Bank::I64));
        let v32 = self.pools.read(self.rng, Bank::I32);
        let v64 = self.pools.read(self.rng, Bank::I64);
        let vf = self.pools.read(self.rng, Bank::F32);
        let k = self.rng.below(4);
        let mut s = String::new();
        let _ = writeln!(s, "  {len} = vm.const.i64 64");
        let _ = writeln!(s, "  {align} = vm.const.i32 16");
        let _ = writeln!(s, "  {buf} = vm.buffer.alloc {len}, {align}");
        let _ = writeln!(s, "  {off} = vm.const.i64 {k}");
        let _ = writeln!(s, "  {zero} = vm.const.i64.zero");
        let _ = writeln!(s, "  vm.buffer.fill.i8 {buf}, {zero}, {len}, {v32}");
        let _ = writeln!(s, "  vm.buffer.store.i32 {v32}, {buf}, {off}");
        let _ = writeln!(s, "  vm.buffer.store.i64 {v64}, {buf}, {off}");
        let _ = writeln!(s, "  vm.buffer.store.f32 {vf}, {buf}, {zero}");
        let _ = writeln!(
            s,
            "  {copy} = vm.buffer.clone {buf}, {zero}, {len}, {align}"
        );
        let a = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {a} = vm.buffer.load.i32 {buf}, {off}");
        let b = self.pools.write(self.rng, Bank::I64);
        let _ = writeln!(s, "  {b} = vm.buffer.load.i64 {copy}, {off}");
        let c = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {c} = vm.buffer.load.i8.s {buf}, {off}");
        let d = self.pools.write(self.rng, Bank::F32);
        let _ = writeln!(s, "  {d} = vm.buffer.load.f32 {copy}, {zero}");
        let e = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(
            s,
            "  {e} = vm.buffer.compare {buf}, {zero}, {copy}, {zero}, {len}"
        );
        let f = self.pools.write(self.rng, Bank::I64);
        let _ = writeln!(s, "  {f} = vm.buffer.length {copy}");
        let vd = self.pools.read(self.rng, Bank::F64);
        let v16 = self.pools.read(self.rng, Bank::I32);
        let eight = name(Bank::I64, self.pools.fresh(Bank::I64));
        let _ = writeln!(s, "  {eight} = vm.const.i64 8");
        let _ = writeln!(s, "  vm.buffer.store.i8 {v16}, {buf}, {off}");
        let _ = writeln!(s, "  vm.buffer.store.i16 {v16}, {copy}, {off}");
        let _ = writeln!(s, "  vm.buffer.store.f64 {vd}, {copy}, {off}");
        let _ = writeln!(s, "  vm.buffer.fill.i16 {copy}, {eight}, {eight}, {v16}");
        let _ = writeln!(s, "  vm.buffer.fill.i32 {buf}, {eight}, {eight}, {v32}");
        let _ = writeln!(s, "  vm.buffer.fill.i64 {buf}, {off}, {zero}, {v64}");
        let _ = writeln!(s, "  vm.buffer.fill.f32 {copy}, {off}, {eight}, {vf}");
        let _ = writeln!(s, "  vm.buffer.fill.f64 {buf}, {zero}, {eight}, {vd}");
        let _ = writeln!(
            s,
            "  vm.buffer.copy {buf}, {zero}, {copy}, {eight}, {eight}"
        );
        let g = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {g} = vm.buffer.load.i8.u {copy}, {off}");
        let h = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {h} = vm.buffer.load.i16.s {copy}, {off}");
        let i = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {i} = vm.buffer.load.i16.u {buf}, {off}");
        let j = self.pools.write(self.rng, Bank::F64);
        let _ = writeln!(s, "  {j} = vm.buffer.load.f64 {copy}, {off}");
        let k = self.pools.write(self.rng, Bank::I64);
        let _ = writeln!(s, "  {k} = vm.buffer.hash {copy}, {zero}, {len}");
        self.uses(&[
            "buffer.store.i8",
            "buffer.store.i16",
            "buffer.store.f64",
            "buffer.fill.i16",
            "buffer.fill.i32",
            "buffer.fill.i64",
            "buffer.fill.f32",
            "buffer.fill.f64",
            "buffer.copy",
            "buffer.load.i8.u",
            "buffer.load.i16.s",
            "buffer.load.i16.u",
            "buffer.load.f64",
            "buffer.hash",
        ]);
        self.body.push_str(&s);
        self.uses(&[
            "buffer.alloc",
            "buffer.fill.i8",
            "buffer.store.i32",
            "buffer.store.i64",
            "buffer.store.f32",
            "buffer.clone",
            "buffer.load.i32",
            "buffer.load.i64",
            "buffer.load.i8.s",
            "buffer.load.f32",
            "buffer.compare",
            "buffer.length",
            "const.i64",
            "const.i64.zero",
        ]);
    }

    /// A typed i32 list and a variant list holding an i64, an f32 and the
    /// i32 list; returns the variant list's register.
    fn lists(&mut self) -> String {
        let r = self.refs;
        self.refs += 2;
        let (l, v) = (format!("%r{r}"), format!("%r{}", r + 1));
        let n = name(Bank::I32, self.pools.fresh(Bank::I32));
        let idx = name(Bank::I32, self.pools.fresh(Bank::I32));
        let v32 = self.pools.read(self.rng, Bank::I32);
        let v64 = self.pools.read(self.rng, Bank::I64);
        let vf = self.pools.read(self.rng, Bank::F32);
        let size = 1 + self.rng.below(3);
        let mut s = String::new();
        let _ = writeln!(s, "  {n} = vm.const.i32 {size}");
        let _ = writeln!(s, "  {l} = vm.list.alloc {n} : !vm.list<i32>");
        let _ = writeln!(s, "  vm.list.resize {l}, {n}");
        let _ = writeln!(s, "  {idx} = vm.const.i32 {}", self.rng.below(size));
        let _ = writeln!(s, "  vm.list.set.i32 {l}, {idx}, {v32}");
        let a = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {a} = vm.list.get.i32 {l}, {idx}");
        let _ = writeln!(s, "  {n} = vm.const.i32 4");
        let _ = writeln!(s, "  {v} = vm.list.alloc {n} : !vm.list<!vm.opaque>");
        let _ = writeln!(s, "  vm.list.resize {v}, {n}");
        let _ = writeln!(s, "  {idx} = vm.const.i32 0");
        let _ = writeln!(s, "  vm.list.set.i64 {v}, {idx}, {v64}");
        let _ = writeln!(s, "  {idx} = vm.const.i32 1");
        let _ = writeln!(s, "  vm.list.set.f32 {v}, {idx}, {vf}");
        let _ = writeln!(s, "  {idx} = vm.const.i32 2");
        let _ = writeln!(s, "  vm.list.set.ref {v}, {idx}, {l}");
        let b = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {b} = vm.list.size {v}");
        let _ = writeln!(s, "  {idx} = vm.const.i32 0");
        let c = self.pools.write(self.rng, Bank::I64);
        let _ = writeln!(s, "  {c} = vm.list.get.i64 {v}, {idx}");
        let _ = writeln!(s, "  {idx} = vm.const.i32 1");
        let d = self.pools.write(self.rng, Bank::F32);
        let _ = writeln!(s, "  {d} = vm.list.get.f32 {v}, {idx}");
        let e = self.pools.write(self.rng, Bank::F64);
        let _ = writeln!(s, "  {e} = vm.list.get.f64 {v}, {idx}");
        let vd = self.pools.read(self.rng, Bank::F64);
        let _ = writeln!(s, "  {idx} = vm.const.i32 3");
        let _ = writeln!(s, "  vm.list.set.f64 {v}, {idx}, {vd}");
        let _ = writeln!(s, "  vm.list.reserve {v}, {n}");
        // Ref values: compares, select and moves over the lists.
        let r0 = self.refs;
        self.refs += 4;
        let (z, g, sel, asg) = (
            format!("%r{r0}"),
            format!("%r{}", r0 + 1),
            format!("%r{}", r0 + 2),
            format!("%r{}", r0 + 3),
        );
        let _ = writeln!(s, "  {z} = vm.const.ref.zero");
        let _ = writeln!(s, "  {idx} = vm.const.i32 2");
        let _ = writeln!(s, "  {g} = vm.list.get.ref {v}, {idx} : !vm.list<i32>");
        let eq = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {eq} = vm.cmp.eq.ref {g}, {l}");
        let ne = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {ne} = vm.cmp.ne.ref {z}, {g}");
        let nz = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {nz} = vm.cmp.nz.ref {z}");
        let c = self.pools.read(self.rng, Bank::I32);
        let _ = writeln!(
            s,
            "  {sel} = vm.select.ref {c} ? {g} : {z} -> !vm.list<i32>"
        );
        let _ = writeln!(s, "  {asg} = vm.assign.ref {sel}");
        let nz2 = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {nz2} = vm.cmp.nz.ref {asg}");
        self.uses(&[
            "const.ref.zero",
            "list.get.ref",
            "cmp.eq.ref",
            "cmp.ne.ref",
            "cmp.nz.ref",
            "select.ref",
            "assign.ref",
        ]);
        self.uses(&[
            "list.get.i64",
            "list.get.f32",
            "list.get.f64",
            "list.set.f64",
            "list.reserve",
        ]);
        self.body.push_str(&s);
        self.uses(&[
            "list.alloc",
            "list.resize",
            "list.set.i32",
            "list.get.i32",
            "list.set.i64",
            "list.set.f32",
            "list.set.ref",
            "list.size",
        ]);
        v
    }
}

/// A line that runs differently on the reference carries its twin after
/// `// twin: ` (lines separated by ` ;; `); `twin_of` rewrites a program
/// into the twin the reference can assemble and run. Both assemblers skip
/// the comment.
const TWIN: &str = "  // twin: ";
/// Like `TWIN` for a line only iree-as-module cannot spell (the reference
/// runs `irvm as`'s bytecode for it).
const ASM_TWIN: &str = "  // asm twin: ";

fn twin_of(text: &str, markers: &[&str]) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let found = markers.iter().find_map(|m| line.split_once(m));
        match found {
            Some((_, twin)) => {
                for piece in twin.split(" ;; ") {
                    if !piece.starts_with('^') {
                        out.push_str("  ");
                    }
                    out.push_str(piece);
                    out.push('\n');
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The rest of the structured pieces: control flow the reference runs
/// (`br_table`, `break`/`cond_break`, `fail`), control flow it cannot run
/// (yields, with twins), debugging output, refs through globals, rodata,
/// casts and switches, imports, and the hal calls.
impl FuncGen<'_> {
    fn i32_const(&mut self, value: i64) -> String {
        let r = name(Bank::I32, self.pools.fresh(Bank::I32));
        self.line("const.i32", format!("  {r} = vm.const.i32 {value}\n"));
        r
    }

    fn fresh_ref(&mut self) -> String {
        let r = format!("%r{}", self.refs);
        self.refs += 1;
        r
    }

    /// `vm.yield` to the next block, sometimes carrying a value; the twin
    /// branches instead (the reference never resumes a yielded entry).
    fn yield_point(&mut self) {
        let next = self.label();
        let remap = if self.rng.chance(50) {
            let a = self.pools.read(self.rng, Bank::I32);
            let b = self.pools.write(self.rng, Bank::I32);
            format!("{a}->{b}")
        } else {
            String::new()
        };
        self.line(
            "yield",
            format!("  vm.yield {next}({remap}){TWIN}vm.br {next}({remap})\n{next}:\n"),
        );
        self.used.insert("block");
    }

    /// `vm.br_table` over three targets that leave different values in one
    /// register, then meet.
    fn br_table(&mut self) {
        let index = if self.rng.chance(40) {
            {
                let k = self.rng.below(4) as i64 - 1;
                self.i32_const(k)
            }
        } else {
            self.pools.read(self.rng, Bank::I32)
        };
        let (a, b) = (
            self.pools.read(self.rng, Bank::I32),
            self.pools.read(self.rng, Bank::I32),
        );
        let x = name(Bank::I32, self.pools.fresh(Bank::I32));
        let (t0, t1, t2, join) = (self.label(), self.label(), self.label(), self.label());
        let mut s = String::new();
        let _ = writeln!(
            s,
            "  vm.br_table {index} {{ default: {t0}({a}->{x}), 0: {t1}({b}->{x}), 1: {t2}() }}"
        );
        let _ = writeln!(s, "{t0}:\n  {x} = vm.add.i32 {x}, {a}\n  vm.br {join}()");
        let _ = writeln!(s, "{t1}:\n  vm.br {join}({x}->{x})");
        let _ = writeln!(s, "{t2}:\n  {x} = vm.xor.i32 {a}, {b}\n  vm.br {join}()");
        let _ = writeln!(s, "{join}:");
        self.body.push_str(&s);
        self.uses(&["br_table", "add.i32", "xor.i32", "br", "block"]);
        let r: u32 = x[2..].parse().unwrap();
        self.pools.i32s.push(r);
    }

    /// `vm.break` and `vm.cond_break` (branches while no debugger is
    /// attached) carrying values.
    fn breaks(&mut self) {
        let (first, second) = (self.label(), self.label());
        let a = self.pools.read(self.rng, Bank::I64);
        let b = self.pools.write(self.rng, Bank::I64);
        let c = self.pools.read(self.rng, Bank::I32);
        let d = self.pools.read(self.rng, Bank::F32);
        let e = self.pools.write(self.rng, Bank::F32);
        self.line("break", format!("  vm.break {first}({a}->{b})\n{first}:\n"));
        self.line(
            "cond_break",
            format!("  vm.cond_break {c}, {second}({d}->{e})\n{second}:\n"),
        );
        self.used.insert("block");
    }

    /// A `vm.fail` taken about one time in sixteen, with a status code
    /// from the program's values (the reference keeps its low 5 bits).
    fn maybe_fail(&mut self) {
        let x = self.pools.read(self.rng, Bank::I32);
        // A code whose low 5 bits are 17 (DEFERRED) hangs the reference
        // (docs/COMPATIBILITY.md); such a code has its low bit flipped.
        let raw = self.pools.read(self.rng, Bank::I32);
        let low = self.i32_const(31);
        let deferred = self.i32_const(17);
        let one = self.i32_const(1);
        let (t0, t1, code) = (
            name(Bank::I32, self.pools.fresh(Bank::I32)),
            name(Bank::I32, self.pools.fresh(Bank::I32)),
            name(Bank::I32, self.pools.fresh(Bank::I32)),
        );
        let _ = writeln!(self.body, "  {t0} = vm.and.i32 {raw}, {low}");
        let _ = writeln!(self.body, "  {t0} = vm.cmp.eq.i32 {t0}, {deferred}");
        let _ = writeln!(self.body, "  {t1} = vm.xor.i32 {raw}, {one}");
        let _ = writeln!(self.body, "  {code} = vm.select.i32 {t0} ? {t1} : {raw}");
        self.used.insert("select.i32");
        let mask = self.i32_const(15);
        let t = name(Bank::I32, self.pools.fresh(Bank::I32));
        let (fail, ok) = (self.label(), self.label());
        let mut s = String::new();
        let _ = writeln!(s, "  {t} = vm.and.i32 {x}, {mask}");
        let _ = writeln!(s, "  {t} = vm.cmp.eq.i32 {t}, {mask}");
        let _ = writeln!(s, "  vm.cond_br {t}, {fail}(), {ok}()");
        let _ = writeln!(s, "{fail}:");
        let _ = writeln!(s, "  vm.fail {code}, \"generated failure\"");
        let _ = writeln!(s, "{ok}:");
        self.body.push_str(&s);
        self.uses(&["and.i32", "cmp.eq.i32", "cond_br", "fail", "block"]);
    }

    /// `vm.print` and `vm.trace` of values of every bank (no output on
    /// either side: the reference's are no-ops).
    fn print_trace(&mut self) {
        let mut operands = Vec::new();
        for _ in 0..self.rng.below(4) {
            let bank = *self.rng.pick(&[Bank::I32, Bank::I64, Bank::F32, Bank::F64]);
            operands.push(self.pools.read(self.rng, bank));
        }
        let list: String = operands.iter().map(|o| format!(", {o}")).collect();
        self.line("print", format!("  vm.print \"values\"{list}\n"));
        self.line("trace", format!("  vm.trace \"event\"{list}\n"));
    }

    /// Refs through the module's rodata, ref globals (direct and
    /// indirect), `cast.any.ref`, `switch.ref` (its twin a `br_table`:
    /// iree-as-module cannot spell `switch.ref`) and `discard.refs`.
    fn refs(&mut self) {
        let ro = self.fresh_ref();
        let g = self.fresh_ref();
        let ind = self.fresh_ref();
        let cast = self.fresh_ref();
        let zero = self.fresh_ref();
        let sel = self.fresh_ref();
        let slot = self.i32_const(0);
        let off = name(Bank::I64, self.pools.fresh(Bank::I64));
        let mut s = String::new();
        let _ = writeln!(s, "  {ro} = vm.const.ref.rodata 0");
        let _ = writeln!(s, "  vm.global.store.ref {ro}, .refs[0] : !vm.buffer");
        let _ = writeln!(s, "  {g} = vm.global.load.ref .refs[0] : !vm.buffer");
        let _ = writeln!(s, "  vm.global.store.indirect.ref {slot} : !vm.buffer, {g}");
        let _ = writeln!(
            s,
            "  {ind} = vm.global.load.indirect.ref {slot} : !vm.buffer"
        );
        let _ = writeln!(
            s,
            "  {cast} = vm.cast.any.ref {ind} : !vm.ref<?> -> !vm.buffer"
        );
        let _ = writeln!(s, "  {off} = vm.const.i64 {}", self.rng.below(4));
        self.body.push_str(&s);
        let loaded = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(self.body, "  {loaded} = vm.buffer.load.i32 {cast}, {off}");
        let same = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(self.body, "  {same} = vm.cmp.eq.ref {ro}, {cast}");
        let _ = writeln!(self.body, "  {zero} = vm.const.ref.zero");
        let index = self.pools.read(self.rng, Bank::I32);
        let join = self.label();
        let _ = writeln!(
            self.body,
            "  {sel} = vm.switch.ref {index}[{zero}, {cast}] else {g}{ASM_TWIN}vm.br_table {index} {{ default: {join}({g}->{sel}), 0: {join}({zero}->{sel}), 1: {join}({cast}->{sel}) }} ;; {join}:"
        );
        let nz = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(self.body, "  {nz} = vm.cmp.nz.ref {sel}");
        let _ = writeln!(self.body, "  vm.discard.refs {g}, {ind}");
        let gone = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(self.body, "  {gone} = vm.cmp.nz.ref {g}");
        self.uses(&[
            "const.ref.rodata",
            "global.store.ref",
            "global.load.ref",
            "global.store.indirect.ref",
            "global.load.indirect.ref",
            "cast.any.ref",
            "const.i64",
            "buffer.load.i32",
            "cmp.eq.ref",
            "const.ref.zero",
            "switch.ref",
            "cmp.nz.ref",
            "discard.refs",
        ]);
    }

    /// Indirect i64/f32/f64 globals at the offsets the direct ones use.
    fn indirect_globals(&mut self) {
        let mut s = String::new();
        // A direct access sizes the module's rwdata to cover the offsets.
        let last = self.pools.read(self.rng, Bank::F64);
        let _ = writeln!(s, "  vm.global.store.f64 {last}, .rwdata[24]");
        self.used.insert("global.store.f64");
        for (bank, suffix, offset) in [
            (Bank::I64, "i64", 8),
            (Bank::F32, "f32", 16),
            (Bank::F64, "f64", 24),
        ] {
            let off = name(Bank::I32, self.pools.fresh(Bank::I32));
            let v = self.pools.read(self.rng, bank);
            let _ = writeln!(s, "  {off} = vm.const.i32 {offset}");
            let _ = writeln!(s, "  vm.global.store.indirect.{suffix} {off}, {v}");
            let out = self.pools.write(self.rng, bank);
            let _ = writeln!(s, "  {out} = vm.global.load.indirect.{suffix} {off}");
        }
        self.body.push_str(&s);
        self.uses(&[
            "const.i32",
            "global.store.indirect.i64",
            "global.load.indirect.i64",
            "global.store.indirect.f32",
            "global.load.indirect.f32",
            "global.store.indirect.f64",
            "global.load.indirect.f64",
        ]);
    }

    /// `vm.switch.i64` over sign-extended i32 cases (the reference reads
    /// only the low word of a case: docs/COMPATIBILITY.md) and
    /// `vm.switch.f64`.
    fn wide_switch(&mut self) {
        let index = self.pools.read(self.rng, Bank::I32);
        let mut cases = Vec::new();
        for _ in 0..1 + self.rng.below(3) {
            let v = self.pools.read(self.rng, Bank::I32);
            let w = self.pools.write(self.rng, Bank::I64);
            let _ = writeln!(self.body, "  {w} = vm.ext.i32.i64.s {v}");
            cases.push(w);
        }
        let default = self.pools.read(self.rng, Bank::I64);
        let out = self.pools.write(self.rng, Bank::I64);
        let _ = writeln!(
            self.body,
            "  {out} = vm.switch.i64 {index}[{}] else {default}",
            cases.join(", ")
        );
        let fcases: Vec<String> = (0..1 + self.rng.below(3))
            .map(|_| self.pools.read(self.rng, Bank::F64))
            .collect();
        let fdefault = self.pools.read(self.rng, Bank::F64);
        let fout = self.pools.write(self.rng, Bank::F64);
        let _ = writeln!(
            self.body,
            "  {fout} = vm.switch.f64 {index}[{}] else {fdefault}",
            fcases.join(", ")
        );
        self.uses(&["ext.i32.i64.s", "switch.i64", "switch.f64"]);
    }

    /// `vm.import.resolved` of the optional import nobody provides (0) and,
    /// with the hal, of a hal import (1).
    fn import_resolved(&mut self, hal: bool) {
        let r = self.pools.write(self.rng, Bank::I32);
        let import = if hal && self.rng.chance(50) {
            "@hal.devices.count"
        } else {
            "@reserved.optional"
        };
        self.line(
            "import.resolved",
            format!("  {r} = vm.import.resolved {import}\n"),
        );
    }

    /// `vm.call.yieldable` of `@yielder`, which yields; the twin calls it
    /// plainly (with its yields made branches).
    fn yieldable_call(&mut self) {
        let (a, b, c, d) = (
            self.pools.read(self.rng, Bank::I32),
            self.pools.read(self.rng, Bank::F32),
            self.pools.read(self.rng, Bank::I64),
            self.pools.read(self.rng, Bank::F64),
        );
        let (x, y) = (
            self.pools.write(self.rng, Bank::I32),
            self.pools.write(self.rng, Bank::I64),
        );
        let next = self.label();
        self.line(
            "call.yieldable",
            format!(
                "  vm.call.yieldable @yielder({a}, {b}, {c}, {d}) -> {next}({x}, {y}){TWIN}{x}, {y} = vm.call @yielder({a}, {b}, {c}, {d}) ;; vm.br {next}()\n{next}:\n"
            ),
        );
        self.used.insert("block");
    }

    /// The hal: a device's allocator, a 16-byte buffer written and read
    /// through `hal.buffer.store/load`, a `4xi32` buffer view made by a
    /// variadic call (shape 4, 2x2 or 1x4), its rank and dims, and fences
    /// (created, signalled or not, joined) awaited by a variadic yieldable
    /// call with a zero timeout. Returns the buffer view's register.
    fn hal(&mut self) -> String {
        let (dev, alloc, buf, view, f1, f2, joined) = (
            self.fresh_ref(),
            self.fresh_ref(),
            self.fresh_ref(),
            self.fresh_ref(),
            self.fresh_ref(),
            self.fresh_ref(),
            self.fresh_ref(),
        );
        let zero = self.i32_const(0);
        let c48 = self.i32_const(48);
        let usage = self.i32_const(3075);
        let elem = self.i32_const(268435488);
        let one = self.i32_const(1);
        let l = |g: &mut Self| name(Bank::I64, g.pools.fresh(Bank::I64));
        let (minus1, len, z64) = (l(self), l(self), l(self));
        let mut s = String::new();
        let _ = writeln!(s, "  {minus1} = vm.const.i64 -1");
        let _ = writeln!(s, "  {len} = vm.const.i64 16");
        let _ = writeln!(s, "  {z64} = vm.const.i64.zero");
        let _ = writeln!(s, "  {dev} = vm.call @hal.devices.get({zero})");
        let _ = writeln!(s, "  {alloc} = vm.call @hal.device.allocator({dev})");
        let _ = writeln!(
            s,
            "  {buf} = vm.call @hal.allocator.allocate({alloc}, {minus1}, {c48}, {usage}, {len})"
        );
        let four = self.i32_const(4);
        for k in 0..4 {
            let v = self.pools.read(self.rng, Bank::I32);
            let off = l(self);
            let _ = writeln!(s, "  {off} = vm.const.i64 {}", k * 4);
            let _ = writeln!(s, "  vm.call @hal.buffer.store({v}, {buf}, {off}, {four})");
        }
        let back = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(
            s,
            "  {back} = vm.call @hal.buffer.load({buf}, {z64}, {four})"
        );
        let shapes: [&[i64]; 3] = [&[4], &[2, 2], &[1, 4]];
        let shape = *self.rng.pick(&shapes);
        let mut dims = Vec::new();
        for d in shape {
            let r = l(self);
            let _ = writeln!(s, "  {r} = vm.const.i64 {d}");
            dims.push(r);
        }
        let segments = "65535, 65535, 65535, 65535, 65535";
        let _ = writeln!(
            s,
            "  {view} = vm.call.variadic @hal.buffer_view.create segments[{segments}, {}]({buf}, {z64}, {len}, {elem}, {one}, {})",
            dims.len(),
            dims.join(", ")
        );
        let rank = self.pools.write(self.rng, Bank::I32);
        let _ = writeln!(s, "  {rank} = vm.call @hal.buffer_view.rank({view})");
        let dim = self.pools.write(self.rng, Bank::I64);
        let _ = writeln!(s, "  {dim} = vm.call @hal.buffer_view.dim({view}, {zero})");
        let _ = writeln!(s, "  {f1} = vm.call @hal.fence.create({dev}, {z64})");
        let _ = writeln!(s, "  {f2} = vm.call @hal.fence.create({dev}, {z64})");
        let signal_both = self.rng.chance(70);
        let _ = writeln!(s, "  vm.call @hal.fence.signal({f1})");
        if signal_both {
            let _ = writeln!(s, "  vm.call @hal.fence.signal({f2})");
        }
        let _ = writeln!(
            s,
            "  {joined} = vm.call.variadic @hal.fence.join segments[65535, 2]({z64}, {f1}, {f2})"
        );
        let status = self.pools.write(self.rng, Bank::I32);
        let next = self.label();
        let _ = writeln!(
            s,
            "  vm.call.variadic.yieldable @hal.fence.await segments[65535, 65535, 1]({zero}, {z64}, {joined}) -> {next}({status})"
        );
        let _ = writeln!(s, "{next}:");
        self.body.push_str(&s);
        self.uses(&[
            "const.i64",
            "const.i64.zero",
            "call",
            "call.variadic",
            "call.variadic.yieldable",
            "block",
        ]);
        view
    }
}

/// The imports of a program that uses the hal.
const HAL_IMPORTS: &str = "vm.type !hal.allocator
vm.type !hal.buffer
vm.type !hal.buffer_view
vm.type !hal.device
vm.type !hal.fence
vm.import @hal.allocator.allocate cconv \"0rIiiI_r\"
vm.import @hal.buffer.load cconv \"0rIi_i\"
vm.import @hal.buffer.store cconv \"0irIi_v\"
vm.import @hal.buffer_view.create cconv \"0rIIiiCID_r\"
vm.import @hal.buffer_view.dim cconv \"0ri_I\"
vm.import @hal.buffer_view.rank cconv \"0r_i\"
vm.import @hal.device.allocator cconv \"0r_r\"
vm.import @hal.devices.count cconv \"0v_i\"
vm.import @hal.devices.get cconv \"0i_r\"
vm.import @hal.fence.await cconv \"0iICrD_i\"
vm.import @hal.fence.create cconv \"0rI_r\"
vm.import @hal.fence.join cconv \"0ICrD_r\"
vm.import @hal.fence.signal cconv \"0r_v\"
";

/// Arguments of every generated function: (i32, f32, i64, f64).
const PARAMS: &str = "%i0: i32, %i1: f32, %i2:3: i64, %i4:5: f64";

fn new_func(rng: &mut Rng) -> FuncGen<'_> {
    FuncGen {
        rng,
        pools: Pools {
            i32s: vec![0],
            f32s: vec![1],
            i64s: vec![2],
            f64s: vec![4],
            next: 6,
        },
        body: String::new(),
        blocks: 0,
        refs: 0,
        used: BTreeSet::new(),
    }
}

/// A program of three functions: `@helper` (value instructions only),
/// `@yielder` (value instructions with yields between them) and `@main`,
/// which mixes value instructions with every structured piece and returns
/// i32/i64 values, f32/f64 values and their bits, a list and, in every
/// third program, a hal buffer view.
fn generate(seed: u64, length: usize) -> Program {
    let mut rng = Rng::new(seed);
    let values: Vec<&'static InstrInfo> = INSTRUCTIONS
        .iter()
        .filter(|i| is_value_instruction(i))
        .collect();
    let mut used = BTreeSet::new();
    let with_hal = seed % 3 == 0;

    // The helper.
    let mut h = new_func(&mut rng);
    for _ in 0..length / 3 {
        let info = *h.rng.pick(&values);
        h.value_instruction(info);
    }
    let (hi, hl) = (
        h.pools.read(h.rng, Bank::I32),
        h.pools.read(h.rng, Bank::I64),
    );
    let helper = format!(
        "vm.func @helper({PARAMS}) -> (i32, i64) {{\n^bb0:\n{}  vm.return {hi}, {hl}\n}}\n",
        h.body
    );
    used.extend(h.used.iter().copied());

    // The yielder.
    let mut y = new_func(&mut rng);
    for _ in 0..length / 8 + 1 {
        let info = *y.rng.pick(&values);
        y.value_instruction(info);
        if y.rng.chance(50) {
            y.yield_point();
        }
    }
    y.yield_point();
    let (yi, yl) = (
        y.pools.read(y.rng, Bank::I32),
        y.pools.read(y.rng, Bank::I64),
    );
    let yielder = format!(
        "vm.func @yielder({PARAMS}) -> (i32, i64) {{\n^bb0:\n{}  vm.return {yi}, {yl}\n}}\n",
        y.body
    );
    used.extend(y.used.iter().copied());

    let mut m = new_func(&mut rng);
    let mut list = None;
    let view = with_hal.then(|| m.hal());
    // Pieces every program has once, at random points.
    let mut once: Vec<usize> = (0..8).map(|_| m.rng.below(length)).collect();
    for step in 0..length {
        for (piece, at) in once.iter_mut().enumerate() {
            if *at != step {
                continue;
            }
            *at = usize::MAX;
            match piece {
                0 => m.refs(),
                1 => m.indirect_globals(),
                2 => m.wide_switch(),
                3 => m.import_resolved(with_hal),
                4 => m.yieldable_call(),
                5 => m.breaks(),
                6 => m.print_trace(),
                _ => m.yield_point(),
            }
        }
        let roll = m.rng.below(100);
        if roll < 6 {
            m.counted_loop();
        } else if roll < 9 {
            let (a, b, c, d) = (
                m.pools.read(m.rng, Bank::I32),
                m.pools.read(m.rng, Bank::F32),
                m.pools.read(m.rng, Bank::I64),
                m.pools.read(m.rng, Bank::F64),
            );
            let (x, y) = (
                m.pools.write(m.rng, Bank::I32),
                m.pools.write(m.rng, Bank::I64),
            );
            m.line(
                "call",
                format!("  {x}, {y} = vm.call @helper({a}, {b}, {c}, {d})\n"),
            );
        } else if roll < 11 {
            m.globals();
        } else if roll < 13 && m.refs < 6 {
            m.buffer();
        } else if roll < 17 {
            m.switch();
        } else if roll < 19 {
            m.br_table();
        } else if roll < 20 {
            m.maybe_fail();
        } else if step > length / 2 && list.is_none() {
            list = Some(m.lists());
        } else {
            let info = *m.rng.pick(&values);
            m.value_instruction(info);
        }
    }
    for (piece, at) in once.iter().enumerate() {
        if *at != usize::MAX {
            unreachable!("piece {piece} placed at step {at} of {length}");
        }
    }
    let list = list.unwrap_or_else(|| m.lists());
    let mut tail = String::new();
    let (i1, i2) = (
        m.pools.read(m.rng, Bank::I32),
        m.pools.read(m.rng, Bank::I32),
    );
    let l1 = m.pools.read(m.rng, Bank::I64);
    let f1 = m.pools.read(m.rng, Bank::F32);
    let d1 = m.pools.read(m.rng, Bank::F64);
    let fb = name(Bank::I32, m.pools.fresh(Bank::I32));
    let db = name(Bank::I64, m.pools.fresh(Bank::I64));
    let _ = writeln!(tail, "  {fb} = vm.bitcast.f32.i32 {f1}");
    let _ = writeln!(tail, "  {db} = vm.bitcast.f64.i64 {d1}");
    let (view_result, view_type) = match &view {
        Some(v) => (format!(", {v}"), ", !hal.buffer_view"),
        None => (String::new(), ""),
    };
    let _ = writeln!(
        tail,
        "  vm.return {i1}, {i2}, {l1}, {f1}, {d1}, {fb}, {db}, {list}{view_result}"
    );
    m.used.insert("bitcast.f32.i32");
    m.used.insert("bitcast.f64.i64");
    m.used.insert("return");
    // Every function starts with a block, which both assemblers mark.
    m.used.insert("block");
    used.extend(m.used.iter().copied());
    let main = format!(
        "vm.export @main\nvm.func @main({PARAMS}) -> (i32, i32, i64, f32, f64, i32, i64, !vm.list<!vm.opaque>{view_type}) {{\n^bb0:\n{}{}}}\n",
        m.body, tail
    );
    let rodata: String = (0..16)
        .map(|_| format!("{:02X}", rng.next() as u8))
        .collect();
    let hal_imports = if with_hal { HAL_IMPORTS } else { "" };
    let text = format!(
        "vm.module @p version 0\nvm.type i32\nvm.type !vm.buffer\nvm.type !vm.list<i32>\nvm.type !vm.list<!vm.opaque>\n{hal_imports}vm.import optional @reserved.optional cconv \"0i_i\"\nvm.rodata[0] = {rodata}\n\n{helper}\n{yielder}\n{main}"
    );
    Program {
        twin: twin_of(&text, &[TWIN, ASM_TWIN]),
        runnable: twin_of(&text, &[TWIN]),
        text,
        used,
    }
}

/// Input sets: ordinary, special and random values for (i32, f32, i64, f64).
fn input_sets(seed: u64) -> Vec<[String; 4]> {
    let mut rng = Rng::new(seed ^ 0xABCD);
    let specials_f = [
        "nan", "-inf", "inf", "-0", "1e-45", "0x1p-149", "-nan", "3.4e38",
    ];
    let specials_d = [
        "nan", "-inf", "-0", "4.9e-324", "1e308", "-nan", "0.5", "-2.5",
    ];
    let specials_i = ["-2147483648", "2147483647", "0", "-1"];
    let specials_l = ["-9223372036854775808", "9223372036854775807", "0", "-1"];
    vec![
        ["7".into(), "1.5".into(), "100".into(), "-2.25".into()],
        [
            rng.pick(&specials_i).to_string(),
            rng.pick(&specials_f).to_string(),
            rng.pick(&specials_l).to_string(),
            rng.pick(&specials_d).to_string(),
        ],
        [
            (rng.next() as i32).to_string(),
            format!("{:e}", f32::from_bits(rng.next() as u32 & 0x7F7F_FFFF)),
            (rng.next() as i64).to_string(),
            format!("{:e}", (rng.next() % 2_000_000) as f64 / 7.0 - 100_000.0),
        ],
    ]
}

/// The reference tools: the native binaries behind the Python wrappers
/// when they can be found (10x faster to start), else the wrappers.
struct Reference {
    run: PathBuf,
    assemble: PathBuf,
}

fn reference() -> Option<Reference> {
    let bin = common::peer_bin(&["iree-run-module", "iree-as-module"])?;
    let native = bin.join("../lib/python3.11/site-packages/iree/_runtime_libs");
    let pick = |tool: &str| {
        let n = native.join(tool);
        if n.exists() {
            n
        } else {
            bin.join(tool)
        }
    };
    Some(Reference {
        run: pick("iree-run-module"),
        assemble: pick("iree-as-module"),
    })
}

/// stdout and exit code; a run still going after 30 s is killed and
/// reported as `TIMEOUT` (the reference hangs on some programs:
/// docs/COMPATIBILITY.md).
fn run(program: &Path, pre: &[&str], module: &Path, inputs: &[String; 4]) -> (String, i32) {
    run_capturing(program, pre, module, inputs, false)
}

/// [`run`], with stderr after stdout when `stderr` is set (the
/// statistics block left out).
fn run_capturing(
    program: &Path,
    pre: &[&str],
    module: &Path,
    inputs: &[String; 4],
    stderr: bool,
) -> (String, i32) {
    let mut cmd = Command::new(program);
    cmd.args(pre)
        .arg(format!("--module={}", module.display()))
        .arg("--function=main")
        .stdout(std::process::Stdio::piped())
        .stderr(if stderr {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        });
    for i in inputs {
        cmd.arg(format!("--input={i}"));
    }
    let mut child = cmd.spawn().expect("run");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut text);
        text
    });
    let err_reader = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = std::io::Read::read_to_end(&mut e, &mut text);
            text
        })
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let mut text = String::from_utf8_lossy(&reader.join().expect("reader")).into_owned();
    if let Some(r) = err_reader {
        let err = String::from_utf8_lossy(&r.join().expect("reader")).into_owned();
        text.push_str("--- stderr\n");
        let mut in_statistics = false;
        for line in err.lines() {
            if line.starts_with("[[ irvm statistics ]]") {
                in_statistics = true;
                continue;
            }
            if in_statistics && line.starts_with("  ") {
                continue;
            }
            in_statistics = false;
            text.push_str(line);
            text.push('\n');
        }
    }
    match status {
        Some(status) => (text, status.code().unwrap_or(-1)),
        None => (format!("{text}TIMEOUT"), -2),
    }
}

#[derive(Default, Debug)]
struct Tally {
    programs: usize,
    runs: usize,
    /// Runs of the program (plain loop) that returned rather than trapped.
    completed: usize,
    divergences: Vec<String>,
    used: BTreeSet<&'static str>,
}

/// Generates and runs program `seed` through every engine; divergences are
/// recorded with the program text.
///
/// irvm runs the program on both loops and its twin on the plain one. The
/// reference assembles the twin with iree-as-module and runs it; it also
/// runs `irvm as`'s bytecode of the twin and of the runnable variant
/// (`switch.ref` kept), and irvm runs iree-as-module's bytecode. All agree.
fn check(seed: u64, length: usize, reference: Option<&Reference>, dir: &Path, tally: &mut Tally) {
    let program = generate(seed, length);
    tally.programs += 1;
    tally.used.extend(program.used.iter().copied());
    let write = |suffix: &str, text: &str| {
        let path = dir.join(format!("p{seed}.{suffix}.vmasm"));
        std::fs::write(&path, text).unwrap();
        path
    };
    let source = write("full", &program.text);
    let twin = write("twin", &program.twin);
    let runnable = write("runnable", &program.runnable);
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let uses_hal = program.text.contains("@hal.");
    let mut diverged = |what: String| {
        tally
            .divergences
            .push(format!("seed {seed}: {what}\n{}", program.text));
    };
    let theirs = dir.join(format!("p{seed}.ref.vmfb"));
    let ours = dir.join(format!("p{seed}.irvm.vmfb"));
    let ours_runnable = dir.join(format!("p{seed}.runnable.vmfb"));
    let irvm_as = |out: &Path, src: &Path| {
        Command::new(irvm)
            .args(["as", "-o"])
            .arg(out)
            .arg(src)
            .output()
            .unwrap()
            .status
            .success()
    };
    let assembled = reference.map(|r| {
        let theirs_ok = Command::new(&r.assemble)
            .arg(format!("--output={}", theirs.display()))
            .arg(&twin)
            .output()
            .unwrap()
            .status
            .success();
        (
            theirs_ok,
            irvm_as(&ours, &twin),
            irvm_as(&ours_runnable, &runnable),
        )
    });
    if let Some((theirs_ok, ours_ok, runnable_ok)) = assembled {
        if theirs_ok != ours_ok || !runnable_ok {
            diverged(format!(
                "assemblers disagree: iree-as-module {theirs_ok}, irvm as {ours_ok} (runnable variant {runnable_ok})"
            ));
            return;
        }
    }
    for (n, inputs) in input_sets(seed).into_iter().enumerate() {
        if n < 2 {
            for d in fuel_divergences(irvm, &source, &inputs, seed) {
                diverged(format!("fuel: {d}"));
            }
        }
        let plain = run(irvm, &["run", "--engine=interp"], &source, &inputs);
        let hooked = run(irvm, &["run", "--fuel=100000000"], &source, &inputs);
        let compiled = run(irvm, &["run", "--engine=jit"], &source, &inputs);
        let twin_run = run(irvm, &["run"], &twin, &inputs);
        tally.runs += 4;
        tally.completed += usize::from(plain.1 == 0);
        if hooked != plain {
            diverged(format!(
                "{inputs:?}: hooked loop\n{hooked:?}\nplain loop\n{plain:?}"
            ));
        }
        if compiled != plain {
            diverged(format!(
                "{inputs:?}: compiled (--engine=jit)\n{compiled:?}\nplain loop\n{plain:?}"
            ));
        }
        if twin_run != plain {
            diverged(format!(
                "{inputs:?}: the twin (yields as branches)\n{twin_run:?}\nthe program\n{plain:?}"
            ));
        }
        if let (Some(_), Some((true, true, true)), true) = (reference, assembled, uses_hal) {
            // Neither assembler records module dependencies, so
            // iree-run-module registers no hal for these programs; irvm
            // runs iree-as-module's bytecode (the hal calls meet the
            // reference in tests/all/models.rs, on iree-compile's output).
            let irvm_on_theirs = run(irvm, &["run"], &theirs, &inputs);
            tally.runs += 1;
            if irvm_on_theirs != plain {
                diverged(format!(
                    "{inputs:?}: irvm on iree-as-module's output\n{irvm_on_theirs:?}\nirvm on the text\n{plain:?}"
                ));
            }
        } else if let (Some(r), Some((true, true, true))) = (reference, assembled) {
            let expected = run(&r.run, &[], &theirs, &inputs);
            let on_ours = run(&r.run, &[], &ours, &inputs);
            let on_runnable = run(&r.run, &[], &ours_runnable, &inputs);
            let irvm_on_theirs = run(irvm, &["run"], &theirs, &inputs);
            tally.runs += 4;
            for (what, got) in [
                ("irvm", &plain),
                ("iree-run-module on irvm as's output", &on_ours),
                (
                    "iree-run-module on irvm as's output of the runnable variant",
                    &on_runnable,
                ),
                ("irvm on iree-as-module's output", &irvm_on_theirs),
            ] {
                if *got != expected {
                    diverged(format!(
                        "{inputs:?}: {what}\n{got:?}\niree-run-module on iree-as-module's output\n{expected:?}"
                    ));
                }
            }
        }
    }
}

/// The fuel a run of `source` costs, from the hooked loop's statistics.
fn fuel_cost(irvm: &Path, source: &Path, inputs: &[String; 4]) -> Option<u64> {
    const BUDGET: u64 = 1 << 40;
    let mut cmd = Command::new(irvm);
    cmd.arg("run")
        .arg(format!("--fuel={BUDGET}"))
        .arg("--print_statistics")
        .arg(format!("--module={}", source.display()))
        .arg("--function=main");
    for i in inputs {
        cmd.arg(format!("--input={i}"));
    }
    let out = cmd.output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    let left = err
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("fuel left:"))?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(BUDGET - left)
}

/// Runs `source` with fuel just below, at and well below what it costs in
/// every engine; returns the disagreements.
fn fuel_divergences(irvm: &Path, source: &Path, inputs: &[String; 4], seed: u64) -> Vec<String> {
    let Some(cost) = fuel_cost(irvm, source, inputs) else {
        return vec!["the hooked loop reported no fuel left".into()];
    };
    let mut found = Vec::new();
    let mut rng = Rng::new(seed ^ cost);
    let below = rng.below(cost.max(1) as usize) as u64;
    for fuel in [cost.saturating_sub(1), cost, below] {
        let fuel_arg = format!("--fuel={fuel}");
        let hooked = run_capturing(
            irvm,
            &["run", &fuel_arg, "--print_statistics"],
            source,
            inputs,
            true,
        );
        for engine in ["--engine=interp", "--engine=jit", "--engine=auto"] {
            let got = run_capturing(irvm, &["run", &fuel_arg, engine], source, inputs, true);
            if got != hooked {
                found.push(format!(
                    "{inputs:?} with --fuel={fuel} (the run costs {cost}): {engine}\n{got:?}\nthe hooked loop\n{hooked:?}"
                ));
            }
        }
    }
    found
}

fn report(tally: &Tally) -> String {
    let values: BTreeSet<&str> = INSTRUCTIONS
        .iter()
        .filter(|i| i.set != OpcodeSet::Internal && is_generated(i.mnemonic))
        .map(|i| i.mnemonic)
        .collect();
    let missing: Vec<&&str> = values.difference(&tally.used).collect();
    format!(
        "{} programs, {} runs, {} divergences; {} of {} inputs ran to completion; {} of {} mnemonics used; not generated: {:?}",
        tally.programs,
        tally.runs,
        tally.divergences.len(),
        tally.completed,
        tally.programs * 3,
        tally.used.intersection(&values).count(),
        values.len(),
        missing
    )
}

#[test]
fn generated_programs_assemble_in_both_spellings() {
    // Every generated program, its twin and its runnable variant are valid
    // for irvm's assembler and verifier.
    for seed in 0..50 {
        let program = generate(seed, 60);
        for text in [&program.text, &program.twin, &program.runnable] {
            let module = irvm::Module::from_assembly(text, "p.vmasm")
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
            let instance = irvm::TypeRegistry::new();
            let mut ctx = irvm::Context::new(&instance);
            if text.contains("@hal.") {
                ctx.register_host_module(&irvm_hal::hal_module().unwrap())
                    .unwrap();
            }
            ctx.register_module(module)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        }
    }
}

/// The generator produces every mnemonic of the ISA table over a fixed set
/// of seeds (`block` is the marker both assemblers put at each label).
#[test]
fn generator_covers_the_isa_table() {
    let mut used = BTreeSet::new();
    for seed in 1..=40 {
        used.extend(generate(seed, 80).used);
    }
    let table: BTreeSet<&str> = INSTRUCTIONS
        .iter()
        .filter(|i| i.set != OpcodeSet::Internal && is_generated(i.mnemonic))
        .map(|i| i.mnemonic)
        .collect();
    let missing: Vec<&&str> = table.difference(&used).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
    let unknown: Vec<&&str> = used.difference(&table).collect();
    assert!(unknown.is_empty(), "not in the ISA table: {unknown:?}");
}

/// The CI slice: a fixed set of seeds through every engine available.
#[test]
fn fixed_seed_slice_agrees_everywhere() {
    let reference = reference();
    if reference.is_none() {
        eprintln!("reference IREE tools not installed: comparing irvm's two loops only");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    for seed in 1..=40 {
        check(seed, 80, reference.as_ref(), dir.path(), &mut tally);
    }
    eprintln!("{}", report(&tally));
    assert!(
        tally.divergences.is_empty(),
        "{}\n{}",
        report(&tally),
        tally.divergences.join("\n\n")
    );
}

/// The long run: `IRVM_DIFF_SECONDS` (default 60) from seed `IRVM_DIFF_SEED`
/// (default 1000); prints the tally and the first divergences.
#[test]
#[ignore]
fn long_run() {
    let seconds: u64 = std::env::var("IRVM_DIFF_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let first: u64 = std::env::var("IRVM_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let reference = reference();
    let dir = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    let start = std::time::Instant::now();
    let mut seed = first;
    while start.elapsed().as_secs() < seconds {
        let length = 40 + (seed % 5) as usize * 40;
        check(seed, length, reference.as_ref(), dir.path(), &mut tally);
        seed += 1;
    }
    println!("seeds {first}..{seed}: {}", report(&tally));
    for d in tally.divergences.iter().take(5) {
        println!("{d}\n");
    }
    assert!(tally.divergences.is_empty(), "{}", report(&tally));
}

/// Writes program `IRVM_DIFF_DUMP` to stdout (for reproducing a seed).
#[test]
#[ignore]
fn dump_program() {
    let seed: u64 = std::env::var("IRVM_DIFF_DUMP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let length: usize = std::env::var("IRVM_DIFF_LENGTH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(80);
    print!("{}", generate(seed, length).text);
}
