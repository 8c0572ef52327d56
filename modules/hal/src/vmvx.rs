//! The `vmvx` host module: the microkernels vmvx executables import when
//! compiled with `--iree-vmvx-enable-microkernels` (IREE's
//! `modules/vmvx/exports.inl`, 32 exports). The 2-D elementwise, copy and
//! fill kernels are implemented with IREE's element-wise semantics (C's
//! `expf`/`logf` via the platform libm, x86 shift masking, trap on integer
//! division by zero instead of a crash); `mmt4d`, `pack`, `unpack` and
//! `query_tile_sizes.2d` (data-tiling) link and fail with UNIMPLEMENTED.
//!
//! A kernel reads its inputs into a scratch vector before writing its
//! output, so inputs and outputs may alias (bindings are views of one
//! allocation) without overlapping Rust borrows.

use irvm::{NativeModule, Ref, StatusCode, Trap, Value};

/// A 2-D strided region of a `!vm.buffer`: elements
/// `offset + i*stride0 + j*stride1` for `i < size0`, `j < size1`.
struct Region<'a> {
    buffer: &'a Ref,
    element: usize,
    offset: u64,
    stride0: u64,
    stride1: u64,
    size0: u64,
    size1: u64,
}

impl Region<'_> {
    /// The byte offsets of every element, row by row, after checking the
    /// region lies inside the buffer.
    fn byte_offsets(&self, kernel: &str, what: &'static str) -> Result<Vec<usize>, Trap> {
        let len = self.buffer.buffer(what)?.len() as u64;
        if self.size0 == 0 || self.size1 == 0 {
            return Ok(Vec::new());
        }
        let overflow = || {
            Trap::new(
                StatusCode::InvalidArgument,
                format!("vmvx.{kernel}: buffer overflow for {what}"),
            )
        };
        let e = self.element as u64;
        let last = (self.size0 - 1)
            .checked_mul(self.stride0)
            .and_then(|a| (self.size1 - 1).checked_mul(self.stride1).map(|b| (a, b)))
            .and_then(|(a, b)| a.checked_add(b))
            .and_then(|x| x.checked_add(self.offset))
            .and_then(|x| x.checked_add(1))
            .and_then(|x| x.checked_mul(e))
            .ok_or_else(overflow)?;
        if last > len {
            return Err(Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "vmvx.{kernel}: {what} region ends at byte {last}, past the buffer's {len} bytes"
                ),
            ));
        }
        let count = self.size0.checked_mul(self.size1).ok_or_else(overflow)?;
        let mut out = Vec::with_capacity(usize::try_from(count).map_err(|_| overflow())?);
        for i in 0..self.size0 {
            for j in 0..self.size1 {
                out.push(((self.offset + i * self.stride0 + j * self.stride1) * e) as usize);
            }
        }
        Ok(out)
    }

    fn read(&self, kernel: &str, what: &'static str) -> Result<Vec<u64>, Trap> {
        let offsets = self.byte_offsets(kernel, what)?;
        let n = self.element;
        Ok(self.buffer.buffer(what)?.with_bytes(|bytes| {
            offsets
                .iter()
                .map(|&o| {
                    let mut word = [0u8; 8];
                    word[..n].copy_from_slice(&bytes[o..o + n]);
                    u64::from_le_bytes(word)
                })
                .collect()
        }))
    }

    fn write(&self, kernel: &str, what: &'static str, values: &[u64]) -> Result<(), Trap> {
        let offsets = self.byte_offsets(kernel, what)?;
        let n = self.element;
        self.buffer.buffer(what)?.with_bytes_mut(|bytes| {
            for (&o, v) in offsets.iter().zip(values) {
                bytes[o..o + n].copy_from_slice(&v.to_le_bytes()[..n]);
            }
        })
    }
}

/// Reads the arguments of one kernel call in order.
struct Reader<'a> {
    kernel: &'static str,
    values: &'a [Value],
    next: usize,
}

impl<'a> Reader<'a> {
    fn bad(&self, k: usize, why: &str) -> Trap {
        Trap::new(
            StatusCode::InvalidArgument,
            format!("vmvx.{}: argument {k}: {why}", self.kernel),
        )
    }

    fn buffer(&mut self) -> Result<&'a Ref, Trap> {
        let k = self.next;
        self.next += 1;
        match self.values.get(k) {
            Some(Value::Ref(r @ Ref::Buffer(_))) => Ok(r),
            _ => Err(self.bad(k, "expected a !vm.buffer")),
        }
    }

    fn i64(&mut self) -> Result<i64, Trap> {
        let k = self.next;
        self.next += 1;
        match self.values.get(k) {
            Some(Value::I64(v)) => Ok(*v),
            _ => Err(self.bad(k, "expected an i64")),
        }
    }

    fn u64(&mut self) -> Result<u64, Trap> {
        let k = self.next;
        let v = self.i64()?;
        u64::try_from(v).map_err(|_| self.bad(k, "negative size, offset or stride"))
    }

    fn i32(&mut self) -> Result<i32, Trap> {
        let k = self.next;
        self.next += 1;
        match self.values.get(k) {
            Some(Value::I32(v)) => Ok(*v),
            _ => Err(self.bad(k, "expected an i32")),
        }
    }

    /// `buffer, offset, stride0, stride1` (the sizes come later).
    fn region(&mut self, element: usize) -> Result<Region<'a>, Trap> {
        Ok(Region {
            buffer: self.buffer()?,
            element,
            offset: self.u64()?,
            stride0: self.u64()?,
            stride1: self.u64()?,
            size0: 0,
            size1: 0,
        })
    }
}

type Unary = fn(u32) -> Result<u32, &'static str>;
type Binary = fn(u32, u32) -> Result<u32, &'static str>;

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn ok(x: f32) -> Result<u32, &'static str> {
    Ok(x.to_bits())
}

const UNARY: &[(&str, Unary)] = &[
    ("abs.2d.f32", |x| ok(f(x).abs())),
    ("ceil.2d.f32", |x| ok(f(x).ceil())),
    ("ctlz.2d.i32", |x| Ok(x.leading_zeros())),
    ("exp.2d.f32", |x| ok(f(x).exp())),
    ("floor.2d.f32", |x| ok(f(x).floor())),
    ("log.2d.f32", |x| ok(f(x).ln())),
    ("neg.2d.f32", |x| ok(-f(x))),
    ("rsqrt.2d.f32", |x| ok(1.0 / f(x).sqrt())),
];

const BINARY: &[(&str, Binary)] = &[
    ("add.2d.f32", |a, b| ok(f(a) + f(b))),
    ("add.2d.i32", |a, b| Ok(a.wrapping_add(b))),
    ("and.2d.i32", |a, b| Ok(a & b)),
    ("div.2d.f32", |a, b| ok(f(a) / f(b))),
    ("divs.2d.i32", |a, b| {
        if b == 0 {
            return Err("integer division by zero");
        }
        Ok((a as i32).wrapping_div(b as i32) as u32)
    }),
    ("divu.2d.i32", |a, b| {
        a.checked_div(b).ok_or("integer division by zero")
    }),
    ("mul.2d.f32", |a, b| ok(f(a) * f(b))),
    ("mul.2d.i32", |a, b| Ok(a.wrapping_mul(b))),
    ("or.2d.i32", |a, b| Ok(a | b)),
    ("shl.2d.i32", |a, b| Ok(a.wrapping_shl(b))),
    ("shrs.2d.i32", |a, b| Ok((a as i32).wrapping_shr(b) as u32)),
    ("shru.2d.i32", |a, b| Ok(a.wrapping_shr(b))),
    ("sub.2d.f32", |a, b| ok(f(a) - f(b))),
    ("sub.2d.i32", |a, b| Ok(a.wrapping_sub(b))),
    ("xor.2d.i32", |a, b| Ok(a ^ b)),
];

const COPIES: &[(&str, usize)] = &[
    ("copy.2d.x16", 2),
    ("copy.2d.x32", 4),
    ("copy.2d.x64", 8),
    ("copy.2d.x8", 1),
];

/// Data-tiling kernels irvm links but does not implement yet.
pub const UNIMPLEMENTED_KERNELS: &[(&str, &str)] = &[
    ("mmt4d", "0rIIrIIrIIIIIiiii_v"),
    ("pack", "0rIIIrIIIIIIIIIIi_v"),
    ("query_tile_sizes.2d", "0IIi_II"),
    ("unpack", "0rIIIrIIIIIIIIIi_v"),
];

fn kernel_error(kernel: &str, why: &str) -> Trap {
    Trap::new(StatusCode::InvalidArgument, format!("vmvx.{kernel}: {why}"))
}

fn run_unary(kernel: &'static str, op: Unary, args: &[Value]) -> Result<Vec<Value>, Trap> {
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let mut input = r.region(4)?;
    let mut output = r.region(4)?;
    let (size0, size1) = (r.u64()?, r.u64()?);
    (input.size0, input.size1, output.size0, output.size1) = (size0, size1, size0, size1);
    let values = input.read(kernel, "in")?;
    let results = values
        .iter()
        .map(|&x| op(x as u32).map(u64::from))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| kernel_error(kernel, why))?;
    output.write(kernel, "out", &results)?;
    Ok(Vec::new())
}

fn run_binary(kernel: &'static str, op: Binary, args: &[Value]) -> Result<Vec<Value>, Trap> {
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let mut lhs = r.region(4)?;
    let mut rhs = r.region(4)?;
    let mut out = r.region(4)?;
    let (size0, size1) = (r.u64()?, r.u64()?);
    for region in [&mut lhs, &mut rhs, &mut out] {
        (region.size0, region.size1) = (size0, size1);
    }
    let a = lhs.read(kernel, "lhs")?;
    let b = rhs.read(kernel, "rhs")?;
    let results = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| op(x as u32, y as u32).map(u64::from))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| kernel_error(kernel, why))?;
    out.write(kernel, "out", &results)?;
    Ok(Vec::new())
}

fn run_copy(kernel: &'static str, element: usize, args: &[Value]) -> Result<Vec<Value>, Trap> {
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let mut input = r.region(element)?;
    let mut output = r.region(element)?;
    let (size0, size1) = (r.u64()?, r.u64()?);
    (input.size0, input.size1, output.size0, output.size1) = (size0, size1, size0, size1);
    let values = input.read(kernel, "in")?;
    output.write(kernel, "out", &values)?;
    Ok(Vec::new())
}

fn run_fill(args: &[Value]) -> Result<Vec<Value>, Trap> {
    let kernel = "fill.2d.x32";
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let value = r.i32()? as u32;
    let buffer = r.buffer()?;
    let offset = r.u64()?;
    let stride0 = r.u64()?;
    let (size0, size1) = (r.u64()?, r.u64()?);
    let out = Region {
        buffer,
        element: 4,
        offset,
        stride0,
        stride1: 1,
        size0,
        size1,
    };
    let count = out.byte_offsets(kernel, "out")?.len();
    out.write(kernel, "out", &vec![u64::from(value); count])?;
    Ok(Vec::new())
}

/// The `vmvx` module (version 0) with its 32 exports.
pub fn vmvx_module() -> Result<NativeModule, irvm::modules::AbiError> {
    let mut entries: Vec<(&'static str, &'static str, Kernel)> = Vec::new();
    for &(name, op) in UNARY {
        entries.push((name, "0rIIIrIIIII_v", Kernel::Unary(op)));
    }
    for &(name, op) in BINARY {
        entries.push((name, "0rIIIrIIIrIIIII_v", Kernel::Binary(op)));
    }
    for &(name, size) in COPIES {
        entries.push((name, "0rIIIrIIIII_v", Kernel::Copy(size)));
    }
    entries.push(("fill.2d.x32", "0irIIII_v", Kernel::Fill));
    for &(name, cconv) in UNIMPLEMENTED_KERNELS {
        entries.push((name, cconv, Kernel::Unimplemented));
    }
    entries.sort_by_key(|e| e.0);
    let mut module = NativeModule::new("vmvx", 0);
    for (name, cconv, kernel) in entries {
        module = module.func(name, cconv, move |args: &[Value]| match kernel {
            Kernel::Unary(op) => run_unary(name, op, args),
            Kernel::Binary(op) => run_binary(name, op, args),
            Kernel::Copy(size) => run_copy(name, size, args),
            Kernel::Fill => run_fill(args),
            Kernel::Unimplemented => Err(Trap::new(
                StatusCode::Unimplemented,
                format!("vmvx.{name} (a data-tiling microkernel) is not implemented by irvm yet"),
            )),
        })?;
    }
    Ok(module)
}

#[derive(Clone, Copy)]
enum Kernel {
    Unary(Unary),
    Binary(Binary),
    Copy(usize),
    Fill,
    Unimplemented,
}

#[cfg(test)]
mod tests {
    use super::*;
    use irvm::Buffer;

    fn buf(words: &[u32]) -> Ref {
        Ref::from(Buffer::from_vec(
            words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        ))
    }

    fn words(r: &Ref) -> Vec<u32> {
        r.buffer("t")
            .unwrap()
            .to_vec()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    #[test]
    fn thirty_two_exports() {
        let m = vmvx_module().unwrap();
        assert_eq!(
            UNARY.len() + BINARY.len() + COPIES.len() + 1 + UNIMPLEMENTED_KERNELS.len(),
            32
        );
        assert_eq!(m.signature("mmt4d"), Some("0rIIrIIrIIIIIiiii_v"));
    }

    #[test]
    fn strided_binary_kernel_in_place() {
        // out = lhs + rhs over a 2x2 window of a 2x3 row-major buffer,
        // writing into lhs itself.
        let a = buf(&[1, 2, 3, 4, 5, 6]);
        let b = buf(&[10, 20, 30, 40]);
        let i = |v: i64| Value::I64(v);
        let args = [
            Value::Ref(a.clone()),
            i(1),
            i(3),
            i(1),
            Value::Ref(b.clone()),
            i(0),
            i(2),
            i(1),
            Value::Ref(a.clone()),
            i(1),
            i(3),
            i(1),
            i(2),
            i(2),
        ];
        run_binary("add.2d.i32", BINARY[1].1, &args).unwrap();
        assert_eq!(words(&a), vec![1, 12, 23, 4, 35, 46]);
        let mut past_end = args.clone();
        past_end[12] = i(3);
        assert!(run_binary("add.2d.i32", BINARY[1].1, &past_end).is_err());
    }

    #[test]
    fn integer_division_by_zero_traps() {
        let (_, divs) = BINARY.iter().find(|e| e.0 == "divs.2d.i32").unwrap();
        assert!(divs(7, 0).is_err());
        assert_eq!(divs(i32::MIN as u32, u32::MAX).unwrap(), i32::MIN as u32);
    }
}
