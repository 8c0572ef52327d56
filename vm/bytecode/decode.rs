//! A table-driven decoder: walks a function's bytecode and yields typed
//! instructions with their offsets. Malformed bytecode is an error, never a
//! panic. Used by the disassembler, verifier, assembler tests and debugger;
//! the interpreter pre-decodes from the same [`Instruction`] values.
//! Public for tools outside the library (debuggers, analyzers) that read
//! bytecode themselves.
//!
//! ```
//! use irvm::bytecode::decode::{decode_at, Operand};
//!
//! // `%i2 = vm.const.i32 7`: opcode 0x0D, the constant, the result register.
//! let code = [0x0D, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00];
//! let inst = decode_at(&code, 0)?;
//! assert_eq!(inst.op.info().mnemonic, "const.i32");
//! assert!(matches!(inst.operands[..], [Operand::I32(7), Operand::Reg(2)]));
//! # Ok::<(), irvm::bytecode::decode::DecodeError>(())
//! ```

use crate::bytecode::isa::{Field, Opcode, OpcodeSet, PREFIX_EXT_F32, PREFIX_EXT_F64};

/// What went wrong while decoding bytecode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytecode ends inside an instruction.
    #[error("instruction at offset {offset} is truncated (needs {needed} more bytes at {at})")]
    Truncated {
        /// Offset of the instruction.
        offset: usize,
        /// Where the missing bytes start.
        at: usize,
        /// How many bytes were needed.
        needed: usize,
    },
    /// An opcode byte that names no instruction.
    #[error("unknown opcode 0x{code:02X} in {set:?} opcode set at offset {offset}")]
    UnknownOpcode {
        /// Offset of the instruction.
        offset: usize,
        /// The opcode set searched.
        set: OpcodeSet,
        /// The unknown byte.
        code: u8,
    },
}

/// A register list or segment-size list as encoded: `count` little-endian
/// u16 values, borrowed from the bytecode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct U16List<'a> {
    bytes: &'a [u8],
}

impl<'a> U16List<'a> {
    /// Iterates the entries.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u16> + 'a {
        self.bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
    }
}

/// Branch operand remapping: (source register, destination register) pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemapList<'a> {
    bytes: &'a [u8],
}

impl<'a> RemapList<'a> {
    /// Iterates the (source, destination) ordinals.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u16, u16)> + 'a {
        self.bytes.chunks_exact(4).map(|c| {
            (
                u16::from_le_bytes([c[0], c[1]]),
                u16::from_le_bytes([c[2], c[3]]),
            )
        })
    }
}

/// One decoded field value, matching the [`Field`] at the same position.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand<'a> {
    /// A register ordinal as encoded (ref ordinals keep their bank/move bits).
    Reg(u16),
    /// An immediate u16.
    I16(u16),
    /// An immediate 32-bit value (i32 constant or f32 bits).
    I32(u32),
    /// An immediate 64-bit value (i64 constant or f64 bits).
    I64(u64),
    /// A global byte offset or global ref ordinal.
    Global(u32),
    /// A function ordinal (bit 31 marks imports).
    Func(u32),
    /// A rodata segment ordinal.
    Rodata(u32),
    /// A type ordinal.
    Type(u32),
    /// A string attribute: bytes, UTF-8 or not (IREE's strings are byte
    /// spans; iree-compile writes what the source held).
    Str(&'a [u8]),
    /// A register list (operands or results).
    Regs(U16List<'a>),
    /// Variadic segment sizes.
    Sizes(U16List<'a>),
    /// A branch destination (bytecode offset).
    Target(u32),
    /// Branch operand remapping.
    Remap(RemapList<'a>),
    /// Branch table cases: destination and remapping per case.
    Cases(Vec<(u32, RemapList<'a>)>),
}

/// A decoded instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction<'a> {
    /// Which instruction.
    pub op: Opcode,
    /// Offset of its first byte (the prefix byte for extension ops).
    pub offset: usize,
    /// Offset just past its last byte.
    pub end: usize,
    /// One value per field of `op.info().fields`.
    pub operands: Vec<Operand<'a>>,
}

struct Reader<'a> {
    code: &'a [u8],
    pc: usize,
    start: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pc.checked_add(n).filter(|&e| e <= self.code.len());
        match end {
            Some(end) => {
                let s = &self.code[self.pc..end];
                self.pc = end;
                Ok(s)
            }
            None => Err(DecodeError::Truncated {
                offset: self.start,
                at: self.pc,
                needed: n,
            }),
        }
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn align2(&mut self) -> Result<(), DecodeError> {
        if self.pc % 2 == 1 {
            self.take(1)?;
        }
        Ok(())
    }
    fn list(&mut self, entry_bytes: usize) -> Result<&'a [u8], DecodeError> {
        self.align2()?;
        let n = self.u16()? as usize;
        self.take(n * entry_bytes)
    }
}

/// Decodes the instruction starting at `pc` in `code` (a function's bytecode
/// or the module's whole `bytecode_data`; offsets are relative to `code`).
///
/// Register-list padding aligns to even offsets of `code`, so `code` must
/// start where the function's offsets start (IREE aligns function bodies).
pub fn decode_at(code: &[u8], pc: usize) -> Result<Instruction<'_>, DecodeError> {
    let mut r = Reader {
        code,
        pc,
        start: pc,
    };
    let first = r.u8()?;
    let (set, byte) = match first {
        PREFIX_EXT_F32 => (OpcodeSet::ExtF32, r.u8()?),
        PREFIX_EXT_F64 => (OpcodeSet::ExtF64, r.u8()?),
        b => (OpcodeSet::Core, b),
    };
    let op = Opcode::from_code(set, byte).ok_or(DecodeError::UnknownOpcode {
        offset: pc,
        set,
        code: byte,
    })?;
    let fields = op.info().fields;
    let mut operands = Vec::with_capacity(fields.len());
    let mut table_size = 0usize;
    for field in fields {
        let v = match field {
            Field::Reg(..) | Field::RefMove(_) => Operand::Reg(r.u16()?),
            Field::ConstI16 => {
                let v = r.u16()?;
                table_size = v as usize;
                Operand::I16(v)
            }
            Field::Const(bank) => match bank.slots() {
                2 => Operand::I64(r.u64()?),
                _ => Operand::I32(r.u32()?),
            },
            Field::GlobalAttr => Operand::Global(r.u32()?),
            Field::FuncAttr => Operand::Func(r.u32()?),
            Field::RodataAttr => Operand::Rodata(r.u32()?),
            Field::TypeId => Operand::Type(r.u32()?),
            Field::StringAttr => {
                let n = r.u16()? as usize;
                let bytes = r.take(n)?;
                Operand::Str(bytes)
            }
            Field::Operands(_) | Field::Results(_) => Operand::Regs(U16List { bytes: r.list(2)? }),
            Field::SegmentSizes => Operand::Sizes(U16List { bytes: r.list(2)? }),
            Field::BranchTarget => Operand::Target(r.u32()?),
            Field::BranchOperands => Operand::Remap(RemapList { bytes: r.list(4)? }),
            Field::BranchTableCases => {
                let mut cases = Vec::with_capacity(table_size.min(1024));
                for _ in 0..table_size {
                    let target = r.u32()?;
                    let remap = RemapList { bytes: r.list(4)? };
                    cases.push((target, remap));
                }
                Operand::Cases(cases)
            }
        };
        operands.push(v);
    }
    Ok(Instruction {
        op,
        offset: pc,
        end: r.pc,
        operands,
    })
}

/// Iterates the instructions of `code[start..end]`, stopping at the first
/// error (which is yielded once).
pub struct Decoder<'a> {
    code: &'a [u8],
    pc: usize,
    end: usize,
    failed: bool,
}

impl<'a> Decoder<'a> {
    /// Decodes the range `start..end` of `code`.
    pub fn new(code: &'a [u8], start: usize, end: usize) -> Self {
        Decoder {
            code: &code[..end.min(code.len())],
            pc: start,
            end: end.min(code.len()),
            failed: false,
        }
    }
}

impl<'a> Iterator for Decoder<'a> {
    type Item = Result<Instruction<'a>, DecodeError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pc >= self.end {
            return None;
        }
        match decode_at(self.code, self.pc) {
            Ok(i) => {
                self.pc = i.end;
                Some(Ok(i))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_add_and_lists() {
        // vm.add.i32 %i0, %i1 -> %i2 ; vm.return %i2
        let code = [0x22, 0, 0, 1, 0, 2, 0, 0x5A, 1, 0, 2, 0];
        let insts: Vec<_> = Decoder::new(&code, 0, code.len())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(insts.len(), 2);
        assert_eq!(insts[0].op, Opcode::AddI32);
        assert_eq!(
            insts[0].operands,
            vec![Operand::Reg(0), Operand::Reg(1), Operand::Reg(2)]
        );
        assert_eq!(insts[1].op, Opcode::Return);
        // the list is aligned to offset 8
        match &insts[1].operands[0] {
            Operand::Regs(l) => assert_eq!(l.iter().collect::<Vec<_>>(), vec![2]),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn extension_prefix_and_errors() {
        let code = [PREFIX_EXT_F32, 0x0A, 0, 0, 1, 0, 2, 0];
        let i = decode_at(&code, 0).unwrap();
        assert_eq!(i.op, Opcode::AddF32);
        assert_eq!(i.end, 8);
        assert!(matches!(
            decode_at(&code[..5], 0),
            Err(DecodeError::Truncated { .. })
        ));
        assert_eq!(decode_at(&[0x79], 0).unwrap().op, Opcode::Block);
        assert!(matches!(
            decode_at(&[0xFF], 0),
            Err(DecodeError::UnknownOpcode { code: 0xFF, .. })
        ));
        assert!(decode_at(&[], 0).is_err());
    }

    #[test]
    #[cfg_attr(miri, ignore = "100k decodes: too slow under Miri")]
    fn never_panics_on_arbitrary_bytes() {
        let mut x: u64 = 0x9E3779B97F4A7C15;
        for _ in 0..20000 {
            let mut buf = [0u8; 24];
            for b in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            let len = (x >> 40) as usize % 25;
            let _ = Decoder::new(&buf[..len], 0, len).count();
        }
    }
}
