//! Valid multi-module programs from fuzz input, for the `programs` and
//! `dbg` targets.
//!
//! The input drives choices, never bytes of the module: every program is
//! VM assembly text that must assemble, load and register. Two modules,
//! `lib` and `app`; `app` imports every function of `lib`. Functions take
//! i32 and ref arguments and return an i32 (and maybe a ref). Bodies are
//! blocks of straight-line instructions picked from the ISA table
//! (`irvm::bytecode::isa::INSTRUCTIONS`: every instruction whose fields are registers,
//! constants, types and globals), ended by a forward branch, a conditional
//! branch, a `vm.yield`, a `vm.call.yieldable`, a counted loop back edge or
//! a return. Calls go only to later functions (and from `app` into `lib`),
//! and a function with a loop makes no calls, so every program terminates
//! and the plain loop (no fuel) can run it.

use irvm::bytecode::isa::{Access, Bank, Field, ListKind, Opcode, OpcodeSet, INSTRUCTIONS};
use libfuzzer_sys::arbitrary::Unstructured;

/// Instruction lines in the canonical syntax, printed as the tests'
/// generators print theirs.
#[path = "../../tests/common/instruction_text.rs"]
pub mod instruction_text;
use instruction_text::instruction_line;

/// Writable i32 registers (f32 values live here too).
const I32_POOL: u16 = 12;
/// Loop counter, the constant one and the constant zero (never written by
/// random instructions).
const COUNTER: u16 = 12;
const ONE: u16 = 13;
const ZERO: u16 = 14;
const SCRATCH: u16 = 15;
/// i64/f64 pairs: %i16:17 ..= %i22:23.
const I64_BASE: u16 = 16;
const I64_POOL: u16 = 4;
const REF_POOL: u16 = 6;

/// Element types for `vm.list.alloc`.
const LIST_ELEMENTS: &[&str] = &["i8", "i16", "i32", "i64", "f32", "!vm.opaque", "!vm.buffer"];
/// Ref types for typed ref results.
const REF_TYPES: &[&str] = &[
    "!vm.buffer",
    "!vm.list<i32>",
    "!vm.list<!vm.opaque>",
    "!vm.list<!vm.buffer>",
    "!vm.opaque",
];

/// A generated function's signature.
#[derive(Clone, Debug)]
pub struct Sig {
    /// i32 arguments (in %i0, %i1, ...).
    pub i32_args: usize,
    /// ref arguments (in %r0, ...).
    pub ref_args: usize,
    /// Returns a ref after its i32.
    pub ref_result: bool,
}

impl Sig {
    fn cconv(&self) -> String {
        let mut s = String::from("0");
        s.push_str(&"i".repeat(self.i32_args));
        s.push_str(&"r".repeat(self.ref_args));
        if self.i32_args + self.ref_args == 0 {
            s.push('v');
        }
        s.push_str("_i");
        if self.ref_result {
            s.push('r');
        }
        s
    }
}

/// A generated program.
pub struct Program {
    /// Assembly text of `lib` and of `app`.
    pub lib: String,
    pub app: String,
    /// The signatures of `app`'s exported functions, by name.
    pub app_exports: Vec<(String, Sig)>,
    /// Source lines of `app` that carry code (for breakpoints).
    #[expect(
        clippy::allow_attributes,
        reason = "the allow below cannot be an `expect`: the `dbg` target reads the field"
    )]
    #[allow(
        dead_code,
        reason = "the `programs` target, which includes this file too, never reads it"
    )]
    pub lines: u32,
}

/// The straight-line instructions the generator may emit: those whose
/// fields it can fill.
fn straight_line() -> Vec<&'static irvm::bytecode::isa::InstrInfo> {
    INSTRUCTIONS
        .iter()
        .filter(|i| i.set != OpcodeSet::Internal)
        .filter(|i| {
            !matches!(
                i.op,
                Opcode::Block
                    | Opcode::Br
                    | Opcode::CondBr
                    | Opcode::Call
                    | Opcode::CallVariadic
                    | Opcode::CallYieldable
                    | Opcode::CallVariadicYieldable
                    | Opcode::Return
                    | Opcode::Fail
                    | Opcode::Yield
                    | Opcode::BrTable
                    | Opcode::CondBreak
                    | Opcode::Break
                    | Opcode::ImportResolved
                    | Opcode::Trace
                    | Opcode::Print
                    | Opcode::ConstRefRodata
            )
        })
        .filter(|i| {
            i.fields.iter().all(|f| {
                matches!(
                    f,
                    Field::Reg(..)
                        | Field::RefMove(_)
                        | Field::Const(_)
                        | Field::TypeId
                        | Field::GlobalAttr
                        | Field::Operands(ListKind::Of(_))
                        | Field::Operands(ListKind::Any)
                )
            })
        })
        .collect()
}

struct Gen<'a, 'b> {
    u: &'b mut Unstructured<'a>,
    table: Vec<&'static irvm::bytecode::isa::InstrInfo>,
    /// Line counter of the text being written (for `loc`).
    line: u32,
    with_locations: bool,
}

type R<T> = libfuzzer_sys::arbitrary::Result<T>;

impl Gen<'_, '_> {
    fn i32_reg(&mut self, write: bool) -> R<String> {
        let n = if write { I32_POOL } else { SCRATCH + 1 };
        Ok(format!("%i{}", self.u.int_in_range(0..=n - 1)?))
    }
    fn i64_reg(&mut self) -> R<String> {
        let k = I64_BASE + 2 * self.u.int_in_range(0..=I64_POOL - 1)?;
        Ok(format!("%i{}:{}", k, k + 1))
    }
    fn ref_reg(&mut self, allow_move: bool) -> R<String> {
        let r = self.u.int_in_range(0..=REF_POOL - 1)?;
        let moved = allow_move && self.u.ratio(1, 4)?;
        Ok(format!("%{}{}", if moved { 'R' } else { 'r' }, r))
    }
    fn reg(&mut self, bank: Bank, access: Access) -> R<String> {
        match bank {
            Bank::I32 | Bank::F32 => self.i32_reg(access == Access::Write),
            Bank::I64 | Bank::F64 => self.i64_reg(),
            Bank::Ref => self.ref_reg(false),
        }
    }
    fn constant(&mut self, bank: Bank) -> R<String> {
        Ok(match bank {
            Bank::I32 => {
                // Mostly small values: sizes, indices, offsets.
                let v: i32 = if self.u.ratio(3, 4)? {
                    self.u.int_in_range(-2..=40)?
                } else {
                    self.u.arbitrary()?
                };
                v.to_string()
            }
            Bank::I64 => {
                let v: i64 = if self.u.ratio(3, 4)? {
                    self.u.int_in_range(-2..=300)?
                } else {
                    self.u.arbitrary()?
                };
                v.to_string()
            }
            Bank::F32 => format!("{:?}", self.u.int_in_range(-8i32..=8)? as f32 * 0.75),
            Bank::F64 => format!("{:?}", self.u.int_in_range(-8i32..=8)? as f64 * 1.25),
            Bank::Ref => "0".into(),
        })
    }

    /// One straight-line instruction from the table, as text.
    fn instruction(&mut self) -> R<String> {
        let info = *self.u.choose(&self.table)?;
        let mut texts = Vec::with_capacity(info.fields.len());
        for f in info.fields {
            let t = match *f {
                Field::Reg(bank, access) => self.reg(bank, access)?,
                Field::RefMove(access) => self.ref_reg(access == Access::Read)?,
                Field::Const(bank) => self.constant(bank)?,
                Field::TypeId => {
                    if info.op == Opcode::ListAlloc {
                        (*self.u.choose(LIST_ELEMENTS)?).to_string()
                    } else {
                        (*self.u.choose(REF_TYPES)?).to_string()
                    }
                }
                Field::GlobalAttr => {
                    let slot: u32 = self.u.int_in_range(0..=7)?;
                    // The syntax template writes `.rwdata[..]`/`.refs[..]`.
                    if info.mnemonic.ends_with(".ref") {
                        slot.to_string()
                    } else {
                        (slot * 8).to_string()
                    }
                }
                Field::Operands(kind) => {
                    let n = if info.op == Opcode::DiscardRefs {
                        self.u.int_in_range(1..=2)?
                    } else {
                        self.u.int_in_range(1..=3)?
                    };
                    let mut regs = Vec::new();
                    for _ in 0..n {
                        regs.push(match kind {
                            ListKind::Of(b) => self.reg(b, Access::Read)?,
                            ListKind::Any => self.ref_reg(false)?,
                        });
                    }
                    regs.join(", ")
                }
                _ => unreachable!("filtered out"),
            };
            texts.push(t);
        }
        Ok(instruction_line(info, &texts))
    }

    fn emit(&mut self, out: &mut String, text: &str) {
        self.line += 1;
        out.push_str("  ");
        out.push_str(text);
        if self.with_locations {
            out.push_str(&format!(" loc(\"app.mlir\":{}:3)", self.line));
        }
        out.push('\n');
    }

    /// Arguments for a call of `sig` and the result registers.
    fn call_operands(&mut self, sig: &Sig) -> R<(String, String)> {
        let mut args = Vec::new();
        for _ in 0..sig.i32_args {
            args.push(self.i32_reg(false)?);
        }
        for _ in 0..sig.ref_args {
            args.push(self.ref_reg(true)?);
        }
        let mut results = vec![self.i32_reg(true)?];
        if sig.ref_result {
            results.push(self.ref_reg(false)?);
        }
        Ok((args.join(", "), results.join(", ")))
    }

    /// One function body. `callees` are (symbol, signature) pairs it may
    /// call.
    fn function(
        &mut self,
        out: &mut String,
        name: &str,
        sig: &Sig,
        callees: &[(String, Sig)],
    ) -> R<()> {
        let mut params = Vec::new();
        for k in 0..sig.i32_args {
            params.push(format!("%i{k}: i32"));
        }
        for k in 0..sig.ref_args {
            params.push(format!("%r{k}: !vm.opaque"));
        }
        let results = if sig.ref_result {
            "i32, !vm.opaque"
        } else {
            "i32"
        };
        out.push_str(&format!("vm.export @{name}\n"));
        out.push_str(&format!(
            "vm.func @{name}({}) -> ({results}) {{\n",
            params.join(", ")
        ));
        self.line += 2;
        let blocks: usize = self.u.int_in_range(1..=5)?;
        let looping = callees.is_empty() || self.u.ratio(1, 3)?;
        let mut calls_left = if looping { 0 } else { 2 };
        for b in 0..blocks {
            out.push_str(&format!("^bb{b}:\n"));
            self.line += 1;
            if b == 0 {
                let trips = self.u.int_in_range(0..=3)?;
                self.emit(out, &format!("%i{COUNTER} = vm.const.i32 {trips}"));
                self.emit(out, &format!("%i{ONE} = vm.const.i32 1"));
                self.emit(out, &format!("%i{ZERO} = vm.const.i32.zero"));
            }
            let n = self.u.int_in_range(0..=8)?;
            for _ in 0..n {
                let text = self.instruction()?;
                self.emit(out, &text);
            }
            // Plain calls in the middle of a block.
            if calls_left > 0 && !callees.is_empty() && self.u.ratio(1, 2)? {
                calls_left -= 1;
                let (callee, csig) = self.u.choose(callees)?.clone();
                let (args, res) = self.call_operands(&csig)?;
                self.emit(out, &format!("{res} = vm.call @{callee}({args})"));
            }
            if b + 1 == blocks {
                let mut ret = vec![self.i32_reg(false)?];
                if sig.ref_result {
                    ret.push(self.ref_reg(true)?);
                }
                self.emit(out, &format!("vm.return {}", ret.join(", ")));
                continue;
            }
            let later = |g: &mut Self| -> R<usize> { g.u.int_in_range(b + 1..=blocks - 1) };
            match self.u.int_in_range(0..=4)? {
                0 => {
                    let t = later(self)?;
                    self.emit(out, &format!("vm.br ^bb{t}()"));
                }
                1 => {
                    let (c, t, f) = (self.i32_reg(false)?, later(self)?, later(self)?);
                    self.emit(out, &format!("vm.cond_br {c}, ^bb{t}(), ^bb{f}()"));
                }
                2 => {
                    let t = later(self)?;
                    self.emit(out, &format!("vm.yield ^bb{t}()"));
                }
                3 if calls_left > 0 && !callees.is_empty() => {
                    calls_left -= 1;
                    let (callee, csig) = self.u.choose(callees)?.clone();
                    let (args, res) = self.call_operands(&csig)?;
                    let t = later(self)?;
                    self.emit(
                        out,
                        &format!("vm.call.yieldable @{callee}({args}) -> ^bb{t}({res})"),
                    );
                }
                // (Not in the entry block, which sets the counter.)
                _ if looping && b > 0 => {
                    // Counted back edge: at most `trips` passes in total.
                    self.emit(
                        out,
                        &format!("%i{COUNTER} = vm.sub.i32 %i{COUNTER}, %i{ONE}"),
                    );
                    self.emit(
                        out,
                        &format!("%i{SCRATCH} = vm.cmp.lt.i32.s %i{ZERO}, %i{COUNTER}"),
                    );
                    self.emit(
                        out,
                        &format!("vm.cond_br %i{SCRATCH}, ^bb{b}(), ^bb{}()", b + 1),
                    );
                }
                _ => {
                    self.emit(out, &format!("vm.br ^bb{}()", b + 1));
                }
            }
        }
        out.push_str("}\n\n");
        self.line += 2;
        Ok(())
    }

    fn signature(&mut self) -> R<Sig> {
        Ok(Sig {
            i32_args: self.u.int_in_range(0..=2)?,
            ref_args: self.u.int_in_range(0..=1)?,
            ref_result: self.u.ratio(1, 3)?,
        })
    }

    fn header(name: &str) -> String {
        let mut s = format!("vm.module @{name} version 0\n");
        for t in ["i32", "i64"].iter().chain(REF_TYPES) {
            s.push_str(&format!("vm.type {t}\n"));
        }
        s.push_str("vm.global.ref @g0 : !vm.opaque\n");
        s
    }
}

/// Generates a program; `with_locations` adds a `loc` to every `app`
/// instruction (one source line each).
pub fn generate(u: &mut Unstructured<'_>, with_locations: bool) -> R<Program> {
    let mut g = Gen {
        u,
        table: straight_line(),
        line: 0,
        with_locations: false,
    };
    // lib: functions call later lib functions.
    let lib_count = g.u.int_in_range(1..=3)?;
    let lib_sigs = (0..lib_count)
        .map(|_| g.signature())
        .collect::<R<Vec<_>>>()?;
    let mut lib = Gen::header("lib");
    for k in 0..lib_count {
        let callees: Vec<(String, Sig)> = (k + 1..lib_count)
            .map(|j| (format!("f{j}"), lib_sigs[j].clone()))
            .collect();
        g.function(&mut lib, &format!("f{k}"), &lib_sigs[k], &callees)?;
    }
    // app: imports every lib function; its functions call later app
    // functions and lib.
    g.with_locations = with_locations;
    g.line = 0;
    let mut app = Gen::header("app");
    for (k, s) in lib_sigs.iter().enumerate() {
        app.push_str(&format!("vm.import @lib.f{k} cconv \"{}\"\n", s.cconv()));
    }
    app.push('\n');
    g.line = app.lines().count() as u32;
    let app_count = g.u.int_in_range(1..=3)?;
    let app_sigs = (0..app_count)
        .map(|_| g.signature())
        .collect::<R<Vec<_>>>()?;
    let mut exports = Vec::new();
    for k in 0..app_count {
        let mut callees: Vec<(String, Sig)> = (k + 1..app_count)
            .map(|j| (format!("g{j}"), app_sigs[j].clone()))
            .collect();
        callees.extend(
            lib_sigs
                .iter()
                .enumerate()
                .map(|(j, s)| (format!("lib.f{j}"), s.clone())),
        );
        g.function(&mut app, &format!("g{k}"), &app_sigs[k], &callees)?;
        exports.push((format!("g{k}"), app_sigs[k].clone()));
    }
    Ok(Program {
        lines: g.line,
        lib,
        app,
        app_exports: exports,
    })
}
