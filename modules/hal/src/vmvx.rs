//! The `vmvx` host module: the microkernels vmvx executables import when
//! compiled with `--iree-vmvx-enable-microkernels` (IREE's
//! `modules/vmvx/exports.inl`, 32 exports). The 2-D elementwise, copy and
//! fill kernels follow IREE's element-wise semantics (C's `expf`/`logf`
//! via the platform libm, x86 shift masking, trap on integer division by
//! zero instead of a crash); `pack`, `mmt4d` (f32 and s8s8s32) and
//! `unpack` implement data tiling (`--iree-opt-data-tiling`), and
//! `query_tile_sizes.2d` answers the generic tile sizes.
//!
//! A kernel reads its inputs into a scratch vector before writing its
//! output, so inputs and outputs may alias (bindings are views of one
//! allocation). Kernels reach the bytes only through the raw pointers
//! [`Buffer::with_raw_parts`] lends ([`Raw`]), reading and writing exactly
//! the elements they address and never forming a slice of a buffer: the
//! workgroups of a dispatch run at once on a `local-task` device's workers
//! (`vmvx_grid.rs`), and their kernels write disjoint parts of one output.
//!
//! A kernel over a large tile is one host call: it polls the calling
//! program's stop word ([`StopPoll`]) as it goes, so an interrupt (Ctrl-C)
//! or a deadline stops it within milliseconds, not at its end.

use irvm::{
    Buffer, ContextResources, NativeModule, RawBytes, Ref, StatusCode, StopCheck, Trap, Value,
};

/// Work between two looks at the stop word: elements read or written, or
/// multiply-adds (tens of microseconds of kernel time in a release build,
/// a few milliseconds in a debug build; a look is an atomic load and, with
/// a deadline, a clock read).
const POLL_WORK: u64 = 1 << 14;

/// Elements a region kernel reads, writes or addresses between two counts
/// of its work (a small region is counted once).
const CHUNK: usize = 4096;

/// Looks at the calling program's interrupt flag and deadline every
/// [`POLL_WORK`] units of work a kernel reports; a kernel with less work
/// never looks (its stop word is not even fetched).
struct StopPoll<'a> {
    resources: &'a ContextResources,
    check: Option<StopCheck>,
    left: u64,
}

impl<'a> StopPoll<'a> {
    fn new(resources: &'a ContextResources) -> StopPoll<'a> {
        StopPoll {
            resources,
            check: None,
            left: POLL_WORK,
        }
    }

    /// Counts `work` done; CANCELLED or DEADLINE_EXCEEDED when the program
    /// was stopped.
    #[inline]
    fn tick(&mut self, work: u64) -> Result<(), Trap> {
        if work < self.left {
            self.left -= work;
            return Ok(());
        }
        self.left = POLL_WORK;
        self.look()
    }

    #[cold]
    fn look(&mut self) -> Result<(), Trap> {
        let resources = self.resources;
        self.check
            .get_or_insert_with(|| resources.stop_check())
            .check()
    }
}

/// A buffer's bytes as [`Buffer::with_raw_parts`] lends them to a kernel:
/// element reads and writes, each checked against the length, through the
/// raw pointer (no slice of the bytes is ever formed).
#[derive(Clone, Copy)]
struct Raw(RawBytes);

impl Raw {
    /// The `n <= 8` bytes at byte `at`, little-endian, zero-extended;
    /// `None` past the end.
    #[inline]
    fn get(self, at: usize, n: usize) -> Option<u64> {
        let end = at.checked_add(n)?;
        if end > self.0.len || n > 8 {
            return None;
        }
        let mut word = [0u8; 8];
        // SAFETY: `at + n <= len` and `n <= 8` (checked above). The
        // pointer and length come from `Buffer::with_raw_parts`, whose
        // closure is still running (a `Raw` is only made inside it and not
        // kept), so the bytes are alive and lent; other threads access the
        // buffer meanwhile only as workers of the same region, which read
        // no byte another writes (the dispatch contract the hal promises
        // in `RegionLease::adopt`).
        unsafe { std::ptr::copy_nonoverlapping(self.0.ptr.add(at), word.as_mut_ptr(), n) };
        Some(u64::from_le_bytes(word))
    }

    /// Writes `bytes` at byte `at`; false past the end. The caller checked
    /// that the buffer is mutable.
    #[inline]
    fn put(self, at: usize, bytes: &[u8]) -> bool {
        match at.checked_add(bytes.len()) {
            Some(end) if end <= self.0.len => {
                // SAFETY: in bounds (checked above), alive and lent as in
                // `get`; the buffer is mutable (the caller checked,
                // `writable`), and no other thread writes or reads these
                // bytes meanwhile (the dispatch contract, as in `get`);
                // `bytes` is a separate allocation.
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.0.ptr.add(at), bytes.len())
                };
                true
            }
            _ => false,
        }
    }
}

/// Runs `f` over raw access to `buffers` (views of one allocation may
/// repeat: they are lent once).
fn with_raw<R>(buffers: &[&Buffer], f: impl FnOnce(&[Raw]) -> R) -> Result<R, Trap> {
    Buffer::with_raw_parts(buffers, |parts| {
        let raws: Vec<Raw> = parts.iter().copied().map(Raw).collect();
        f(&raws)
    })
}

/// The output buffer `what` of `kernel`, refused when read-only.
fn writable<'a>(r: &'a Ref, kernel: &str, what: &'static str) -> Result<&'a Buffer, Trap> {
    let b = r.buffer(what)?;
    if b.is_mutable() {
        Ok(b)
    } else {
        Err(Trap::new(
            StatusCode::PermissionDenied,
            format!("vmvx.{kernel}: {what} buffer is read-only"),
        ))
    }
}

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
    fn byte_offsets(
        &self,
        kernel: &str,
        what: &'static str,
        poll: &mut StopPoll<'_>,
    ) -> Result<Vec<usize>, Trap> {
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
        // Whole rows, about CHUNK elements at a time (a small region at once).
        let rows = if count <= CHUNK as u64 {
            self.size0
        } else {
            (CHUNK as u64 / self.size1).max(1)
        };
        let mut first = 0;
        while first < self.size0 {
            let end = (first + rows).min(self.size0);
            poll.tick((end - first) * self.size1)?;
            for i in first..end {
                for j in 0..self.size1 {
                    out.push(((self.offset + i * self.stride0 + j * self.stride1) * e) as usize);
                }
            }
            first = end;
        }
        Ok(out)
    }

    /// The elements, row by row.
    fn read(
        &self,
        kernel: &str,
        what: &'static str,
        poll: &mut StopPoll<'_>,
    ) -> Result<Vec<u64>, Trap> {
        let offsets = self.byte_offsets(kernel, what, poll)?;
        let n = self.element;
        with_raw(&[self.buffer.buffer(what)?], |raw| {
            let mut out = Vec::with_capacity(offsets.len());
            for chunk in offsets.chunks(CHUNK) {
                poll.tick(chunk.len() as u64)?;
                for &o in chunk {
                    // In range: `byte_offsets` checked the whole region.
                    out.push(raw[0].get(o, n).ok_or_else(|| past_end(kernel, what))?);
                }
            }
            Ok(out)
        })?
    }

    /// Writes `values` (row by row) into the region.
    fn write(
        &self,
        kernel: &str,
        what: &'static str,
        values: &[u64],
        poll: &mut StopPoll<'_>,
    ) -> Result<(), Trap> {
        let offsets = self.byte_offsets(kernel, what, poll)?;
        let n = self.element;
        with_raw(&[writable(self.buffer, kernel, what)?], |raw| {
            for (chunk, chunk_values) in offsets.chunks(CHUNK).zip(values.chunks(CHUNK)) {
                poll.tick(chunk.len() as u64)?;
                for (&o, v) in chunk.iter().zip(chunk_values) {
                    if !raw[0].put(o, &v.to_le_bytes()[..n]) {
                        return Err(past_end(kernel, what));
                    }
                }
            }
            Ok(())
        })?
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

/// Kernels irvm links but does not implement yet (none left).
pub const UNIMPLEMENTED_KERNELS: &[(&str, &str)] = &[];

/// `query_tile_sizes.2d`: the tile sizes of one matmul operand for a
/// runtime-chosen encoding. irvm answers with the ukernel library's
/// generic sizes (M=8, K=4, N=8) for every matmul type; the reference
/// answers per CPU, which changes the data layout between pack, mmt4d and
/// unpack but not the results.
fn run_query_tile_sizes(args: &[Value]) -> Result<Vec<Value>, Trap> {
    let kernel = "query_tile_sizes.2d";
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let (_size0, _size1) = (r.i64()?, r.i64()?);
    let flags = r.i32()? as u32;
    if !(0x0100..=0x0600).contains(&(flags & 0xFF00)) {
        return Err(kernel_error(kernel, "not a matmul operation"));
    }
    let (m, k, n) = (8i64, 4i64, 8i64);
    let (t0, t1) = match flags & 0xFF {
        0x01 => (m, k),
        0x02 => (n, k),
        0x03 => (m, n),
        _ => return Err(kernel_error(kernel, "unknown operand role")),
    };
    Ok(vec![Value::I64(t0), Value::I64(t1)])
}

fn past_end(kernel: &str, what: &str) -> Trap {
    kernel_error(
        kernel,
        &format!("{what} element past the end of its buffer"),
    )
}

/// Writes `(byte offset, bytes)` pairs through `out`, each checked.
fn write_all(kernel: &str, out: Raw, writes: &[(usize, Vec<u8>)]) -> Result<(), Trap> {
    for (o, v) in writes {
        if !out.put(*o, v) {
            return Err(kernel_error(
                kernel,
                "output element past the end of its buffer",
            ));
        }
    }
    Ok(())
}

/// Element `index` (of `size` bytes) read through `raw`.
fn element_at(kernel: &str, raw: Raw, index: u64, size: usize) -> Result<u64, Trap> {
    let o = usize::try_from(index)
        .ok()
        .and_then(|i| i.checked_mul(size))
        .ok_or_else(|| kernel_error(kernel, "index overflow"))?;
    raw.get(o, size)
        .ok_or_else(|| kernel_error(kernel, "input element past the end of its buffer"))
}

/// `mmt4d`: `out[i][j] (+)= lhs[i][k] * rhs[j][k]ᵀ` over tiles, f32 (each
/// product rounded, then added, in k order: what iree.runtime 3.13's vmvx
/// module computes; a fused multiply-add differed from it in the last bit
/// on `tests/models/vmvx_tiles` with python/tests' recorded random input)
/// or s8s8s32.
fn run_mmt4d(args: &[Value], poll: &mut StopPoll<'_>) -> Result<Vec<Value>, Trap> {
    let kernel = "mmt4d";
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let (lhs, lhs_offset, lhs_stride) = (r.buffer()?, r.u64()?, r.u64()?);
    let (rhs, rhs_offset, rhs_stride) = (r.buffer()?, r.u64()?, r.u64()?);
    let (out, out_offset, out_stride) = (r.buffer()?, r.u64()?, r.u64()?);
    let (m, n, k) = (r.u64()?, r.u64()?, r.u64()?);
    let (m0, n0, k0) = (r.i32()?, r.i32()?, r.i32()?);
    let flags = r.i32()? as u32;
    let (m0, n0, k0) = (
        u64::try_from(m0).map_err(|_| kernel_error(kernel, "negative M0"))?,
        u64::try_from(n0).map_err(|_| kernel_error(kernel, "negative N0"))?,
        u64::try_from(k0).map_err(|_| kernel_error(kernel, "negative K0"))?,
    );
    let float = match flags & 0xFF {
        0x01 => true,
        0x02 => false,
        _ => return Err(kernel_error(kernel, "unhandled flags")),
    };
    let accumulate = flags & 0x100 != 0;
    if m == 0 || n == 0 || (k == 0 && accumulate) {
        return Ok(Vec::new());
    }
    let in_size = if float { 4 } else { 1 };
    let lent = [
        lhs.buffer("lhs")?,
        rhs.buffer("rhs")?,
        writable(out, kernel, "out")?,
    ];
    with_raw(&lent, |raw| {
        let [a, b, c] = [raw[0], raw[1], raw[2]];
        let work = m
            .checked_mul(n)
            .and_then(|x| x.checked_mul(m0 * n0))
            .and_then(|x| x.checked_mul(k.max(1) * k0.max(1)))
            .filter(|&w| w <= 1 << 36)
            .ok_or_else(|| kernel_error(kernel, "problem too large"))?;
        let _ = work;
        let mut writes = Vec::new();
        for i in 0..m {
            for j in 0..n {
                let out_tile = out_offset + i * out_stride + j * m0 * n0;
                for x in 0..m0 {
                    for y in 0..n0 {
                        let at = out_tile + x * n0 + y;
                        let init = if accumulate {
                            element_at(kernel, c, at, 4)? as u32
                        } else {
                            0
                        };
                        let mut acc_f = f32::from_bits(init);
                        let mut acc_i = init as i32;
                        poll.tick(k * k0)?;
                        for kk in 0..k {
                            let lhs_tile = lhs_offset + i * lhs_stride + kk * m0 * k0;
                            let rhs_tile = rhs_offset + j * rhs_stride + kk * n0 * k0;
                            for z in 0..k0 {
                                let p = element_at(kernel, a, lhs_tile + x * k0 + z, in_size)?;
                                let q = element_at(kernel, b, rhs_tile + y * k0 + z, in_size)?;
                                if float {
                                    acc_f += f32::from_bits(p as u32) * f32::from_bits(q as u32);
                                } else {
                                    acc_i = acc_i.wrapping_add(
                                        (p as u8 as i8 as i32) * (q as u8 as i8 as i32),
                                    );
                                }
                            }
                        }
                        let value = if float { acc_f.to_bits() } else { acc_i as u32 };
                        let o = usize::try_from(at * 4)
                            .map_err(|_| kernel_error(kernel, "index overflow"))?;
                        writes.push((o, value.to_le_bytes().to_vec()));
                    }
                }
            }
        }
        // Every input read before any output is written: they may alias.
        write_all(kernel, c, &writes)
    })??;
    Ok(Vec::new())
}

fn pack_element_size(kernel: &str, flags: u32, unpack: bool) -> Result<usize, Trap> {
    match flags & 0xFF {
        0x01 | 0x03 => Ok(4),
        0x02 if !unpack => Ok(1),
        0x04 | 0x05 => Ok(2),
        _ => Err(kernel_error(kernel, "unhandled flags")),
    }
}

/// `pack` (and, with `unpack`, its inverse): a 2-D array to/from tiles.
/// Tile `(p, q)` element `(a, b)` of the 2-D side is 2-D element
/// `(p*T0 + a, q*T1 + b)`; on the tiled side it sits at outer `(p, q)`
/// (swapped by TRANSPOSE_OUTER) and inner `(a, b)` (swapped by
/// TRANSPOSE_INNER). Packing pads past the 2-D bounds with the padding
/// value; unpacking drops those elements.
fn run_pack(args: &[Value], unpack: bool, poll: &mut StopPoll<'_>) -> Result<Vec<Value>, Trap> {
    let kernel = if unpack { "unpack" } else { "pack" };
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let (input, in_offset, in_stride0, in_stride1) = (r.buffer()?, r.u64()?, r.u64()?, r.u64()?);
    let (output, out_offset, out_stride0, out_stride1) =
        (r.buffer()?, r.u64()?, r.u64()?, r.u64()?);
    let mut sizes = [0u64; 6];
    for s in sizes.iter_mut() {
        *s = r.u64()?;
    }
    let padding = if unpack { 0 } else { r.i64()? as u64 };
    let flags = r.i32()? as u32;
    let size = pack_element_size(kernel, flags, unpack)?;
    // Tiled side: outer0 x outer1 tiles of t0 x t1 (as stored).
    let (flat0, flat1, outer0, outer1, t0, t1) = if unpack {
        (sizes[4], sizes[5], sizes[0], sizes[1], sizes[2], sizes[3])
    } else {
        (sizes[0], sizes[1], sizes[2], sizes[3], sizes[4], sizes[5])
    };
    let (tiled_stride0, tiled_stride1, tiled_offset, flat_stride0, flat_stride1, flat_offset) =
        if unpack {
            (
                in_stride0,
                in_stride1,
                in_offset,
                out_stride0,
                out_stride1,
                out_offset,
            )
        } else {
            (
                out_stride0,
                out_stride1,
                out_offset,
                in_stride0,
                in_stride1,
                in_offset,
            )
        };
    let transpose_inner = flags & 0x100 != 0;
    let transpose_outer = flags & 0x200 != 0;
    if outer0 == 0 || outer1 == 0 || t0 == 0 || t1 == 0 || (unpack && (flat0 == 0 || flat1 == 0)) {
        return Ok(Vec::new());
    }
    // Tile and outer sizes in the 2-D side's orientation.
    let (p_count, q_count) = if transpose_outer {
        (outer1, outer0)
    } else {
        (outer0, outer1)
    };
    let (a_count, b_count) = if transpose_inner { (t1, t0) } else { (t0, t1) };
    let total = p_count
        .checked_mul(q_count)
        .and_then(|x| x.checked_mul(a_count * b_count))
        .filter(|&x| x <= 1 << 32)
        .ok_or_else(|| kernel_error(kernel, "problem too large"))?;
    let _ = total;
    let lent = [input.buffer("in")?, writable(output, kernel, "out")?];
    with_raw(&lent, |raw| {
        let (src_bytes, dst) = (raw[0], raw[1]);
        let mut writes = Vec::new();
        for p in 0..p_count {
            for q in 0..q_count {
                let (i, j) = if transpose_outer { (q, p) } else { (p, q) };
                for a in 0..a_count {
                    poll.tick(b_count)?;
                    for b in 0..b_count {
                        let (x, y) = if transpose_inner { (b, a) } else { (a, b) };
                        let tiled =
                            tiled_offset + i * tiled_stride0 + j * tiled_stride1 + x * t1 + y;
                        let (r0, r1) = (p * a_count + a, q * b_count + b);
                        let inside = r0 < flat0 && r1 < flat1;
                        let flat = flat_offset + r0 * flat_stride0 + r1 * flat_stride1;
                        let (from, to) = if unpack { (tiled, flat) } else { (flat, tiled) };
                        if unpack && !inside {
                            continue;
                        }
                        let value = if inside {
                            element_at(kernel, src_bytes, from, size)?
                        } else {
                            padding
                        };
                        let o = usize::try_from(to)
                            .ok()
                            .and_then(|t| t.checked_mul(size))
                            .ok_or_else(|| kernel_error(kernel, "index overflow"))?;
                        writes.push((o, value.to_le_bytes()[..size].to_vec()));
                    }
                }
            }
        }
        // Every input read before any output is written: they may alias.
        write_all(kernel, dst, &writes)
    })??;
    Ok(Vec::new())
}

fn kernel_error(kernel: &str, why: &str) -> Trap {
    Trap::new(StatusCode::InvalidArgument, format!("vmvx.{kernel}: {why}"))
}

fn run_unary(
    kernel: &'static str,
    op: Unary,
    args: &[Value],
    poll: &mut StopPoll<'_>,
) -> Result<Vec<Value>, Trap> {
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let mut input = r.region(4)?;
    let mut output = r.region(4)?;
    let (size0, size1) = (r.u64()?, r.u64()?);
    (input.size0, input.size1, output.size0, output.size1) = (size0, size1, size0, size1);
    let values = input.read(kernel, "in", poll)?;
    poll.tick(values.len() as u64)?;
    let results = values
        .iter()
        .map(|&x| op(x as u32).map(u64::from))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| kernel_error(kernel, why))?;
    output.write(kernel, "out", &results, poll)?;
    Ok(Vec::new())
}

fn run_binary(
    kernel: &'static str,
    op: Binary,
    args: &[Value],
    poll: &mut StopPoll<'_>,
) -> Result<Vec<Value>, Trap> {
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
    let a = lhs.read(kernel, "lhs", poll)?;
    let b = rhs.read(kernel, "rhs", poll)?;
    poll.tick(a.len() as u64)?;
    let results = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| op(x as u32, y as u32).map(u64::from))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| kernel_error(kernel, why))?;
    out.write(kernel, "out", &results, poll)?;
    Ok(Vec::new())
}

fn run_copy(
    kernel: &'static str,
    element: usize,
    args: &[Value],
    poll: &mut StopPoll<'_>,
) -> Result<Vec<Value>, Trap> {
    let mut r = Reader {
        kernel,
        values: args,
        next: 0,
    };
    let mut input = r.region(element)?;
    let mut output = r.region(element)?;
    let (size0, size1) = (r.u64()?, r.u64()?);
    (input.size0, input.size1, output.size0, output.size1) = (size0, size1, size0, size1);
    let values = input.read(kernel, "in", poll)?;
    output.write(kernel, "out", &values, poll)?;
    Ok(Vec::new())
}

fn run_fill(args: &[Value], poll: &mut StopPoll<'_>) -> Result<Vec<Value>, Trap> {
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
    let count = out.byte_offsets(kernel, "out", poll)?.len();
    out.write(kernel, "out", &vec![u64::from(value); count], poll)?;
    Ok(Vec::new())
}

/// The `vmvx` module (version 0) with its 32 exports.
pub fn vmvx_module() -> Result<NativeModule<ContextResources>, irvm::loader::AbiError> {
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
    entries.push(("mmt4d", "0rIIrIIrIIIIIiiii_v", Kernel::Mmt4d));
    entries.push(("pack", "0rIIIrIIIIIIIIIIi_v", Kernel::Pack));
    entries.push(("unpack", "0rIIIrIIIIIIIIIi_v", Kernel::Unpack));
    entries.push(("query_tile_sizes.2d", "0IIi_II", Kernel::QueryTileSizes));
    for &(name, cconv) in UNIMPLEMENTED_KERNELS {
        entries.push((name, cconv, Kernel::Unimplemented));
    }
    entries.sort_by_key(|e| e.0);
    // The state is the context's resources: while the hal runs the
    // executable for a program, they answer with that program's stop word.
    let mut module = NativeModule::with_context_state("vmvx", 0, ContextResources::clone);
    for (name, cconv, kernel) in entries {
        module = module.func_with_state(name, cconv, move |resources, args| {
            let poll = &mut StopPoll::new(resources);
            match kernel {
                Kernel::Unary(op) => run_unary(name, op, args, poll),
                Kernel::Binary(op) => run_binary(name, op, args, poll),
                Kernel::Copy(size) => run_copy(name, size, args, poll),
                Kernel::Fill => run_fill(args, poll),
                Kernel::Mmt4d => run_mmt4d(args, poll),
                Kernel::Pack => run_pack(args, false, poll),
                Kernel::Unpack => run_pack(args, true, poll),
                Kernel::QueryTileSizes => run_query_tile_sizes(args),
                Kernel::Unimplemented => Err(Trap::new(
                    StatusCode::Unimplemented,
                    format!("vmvx.{name} is not implemented by irvm yet"),
                )),
            }
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
    Mmt4d,
    Pack,
    Unpack,
    QueryTileSizes,
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
        use irvm::HostModule;
        let m = vmvx_module().unwrap();
        assert_eq!(m.functions().len(), 32);
        assert!(UNIMPLEMENTED_KERNELS.is_empty());
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
        let resources = ContextResources::detached();
        let poll = &mut StopPoll::new(&resources);
        run_binary("add.2d.i32", BINARY[1].1, &args, poll).unwrap();
        assert_eq!(words(&a), vec![1, 12, 23, 4, 35, 46]);
        let mut past_end = args.clone();
        past_end[12] = i(3);
        assert!(run_binary("add.2d.i32", BINARY[1].1, &past_end, poll).is_err());
    }

    #[test]
    fn integer_division_by_zero_traps() {
        let (_, divs) = BINARY.iter().find(|e| e.0 == "divs.2d.i32").unwrap();
        assert!(divs(7, 0).is_err());
        assert_eq!(divs(i32::MIN as u32, u32::MAX).unwrap(), i32::MIN as u32);
    }
}
