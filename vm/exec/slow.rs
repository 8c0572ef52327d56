//! The interpreter's slow path: every instruction the hot loop
//! ([`super::dispatch`]) leaves out — globals, lists, calls and returns,
//! yields, failures, buffer allocation and bulk operations, ref casts,
//! switches, `br_table`, debug ops and the end-of-function guard. One call
//! executes one instruction against the top frame.

use std::sync::Arc;

use crate::budget::Charge;
use crate::bytecode::isa::{Opcode, IMPORT_ORDINAL_BIT, REF_INDEX_MASK, REF_MOVE_BIT};
use crate::context::{CallState, Context, HostInstance, ImportTarget, Limits, Registered};
use crate::host::HostStatus;
use crate::program::{aux_list, Inst, Signature, NONE};
use crate::trap::{StatusCode, Trap};
use crate::values::list::element_bytes;
use crate::values::{Buffer, List, Ref};

use super::hooks::Hooks;

use super::{bytecode, check_alignment, marshal_args, push_frame, write_host_results, Suspended};

/// Executes `i`, an instruction of the top frame that the hot loop does not
/// handle itself. The hot loop has saved the frame's pc (the instruction
/// after `i`); on return the top frame's saved pc says where to go on, and
/// `Some` ends the run (the entry frame returned or the program yielded).
#[inline(never)]
pub(super) fn step(ctx: &mut Context, i: Inst) -> Result<Option<CallState>, Trap> {
    let limits = &ctx.limits;
    let modules = &mut ctx.modules;
    let st = &mut ctx.stack;
    let hooks = &mut ctx.hooks;
    let memory = &ctx.memory;

    let top = st.frames.last().expect("a frame to run");
    let cur = top.module;
    let func = top.func.get();
    let (i32_base, ref_base) = (top.i32_base as usize, top.ref_base as usize);
    let code: *const Inst = func.code.as_ptr();
    // SAFETY: the saved pc is an instruction index of `func` (see the loop).
    let mut ip: *const Inst = unsafe { code.add(top.pc as usize) };
    // SAFETY: see `exec::regs`; the bases index the frame's windows. The
    // pointers are refreshed (`reload!`) after calls and returns.
    let regs: *mut u32 = unsafe { st.i32s.as_mut_ptr().add(i32_base) };
    // SAFETY: as above.
    let refs: *mut Ref = unsafe { st.refs.as_mut_ptr().add(ref_base) };
    register_macros!($, regs, refs);
    value_macros!($, regs, refs);

    macro_rules! jump {
        ($t:expr) => {{
            let t = $t as usize;
            // SAFETY: branch targets were verified to be instruction indices
            // of this function.
            ip = unsafe { code.add(t) };
        }};
    }
    macro_rules! save_pc {
        () => {
            if let Some(f) = st.frames.last_mut() {
                // SAFETY: `ip` points into `func.code` (one past the current
                // instruction at most).
                f.pc = unsafe { ip.offset_from(code) } as u32;
            }
        };
    }
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => {
                    save_pc!();
                    return Err(e);
                }
            }
        };
    }
    macro_rules! remap {
        ($at:expr) => {{
            let at = $at as usize;
            let n = func.aux[at] as usize;
            for k in 0..n {
                let w = func.aux[at + 1 + k];
                let (s, d) = (w as u16, (w >> 16) as u16);
                if s & 0x8000 != 0 {
                    let v = take_ref!(s);
                    wref!(d, v);
                } else {
                    wi!(d, ri!(s));
                }
            }
        }};
    }
    macro_rules! state {
        () => {
            bytecode(modules, cur)
        };
    }
    macro_rules! buffer {
        ($r:expr, $what:expr) => {
            tri!(rref!($r).buffer($what))
        };
    }
    macro_rules! list {
        ($r:expr) => {
            tri!(rref!($r).list())
        };
    }
    macro_rules! global_slice {
        ($off:expr, $n:expr) => {{
            let off = $off as usize;
            let s = state!();
            let len = s.rwdata.len();
            tri!(s
                .rwdata
                .get_mut(off..off.wrapping_add($n))
                .filter(|_| off <= len)
                .ok_or_else(|| Trap::new(
                    StatusCode::OutOfRange,
                    format!(
                        "global byte_offset out of range: {} (rwdata={})",
                        off as i32, len
                    )
                )))
        }};
    }
    macro_rules! global_ref {
        ($ord:expr) => {{
            let ord = $ord as usize;
            let s = state!();
            let n = s.global_refs.len();
            tri!(s.global_refs.get_mut(ord).ok_or_else(|| Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "global ref ordinal out of range: {} (table={})",
                    ord as i32, n
                )
            )))
        }};
    }
    // Bulk work of `$bytes` (at most what the buffer or list holds):
    // fuel in proportion, and the deadline (see `Hooks::charge_bulk`).
    macro_rules! bulk {
        ($bytes:expr) => {
            tri!(hooks.charge_bulk($bytes))
        };
    }
    // `vm.buffer.fill.*` of `$n`-byte elements of value `$v` (its bytes):
    // charged as bulk work, then done in pieces (`fill_in_pieces`).
    macro_rules! buffer_fill {
        ($n:literal, $v:expr) => {{
            bulk!(fill_bytes(buffer!(i.a, "buffer"), rl!(i.c), $n));
            let v = $v;
            let (index, count) = (rl!(i.b) as u64, rl!(i.c) as u64);
            tri!(fill_in_pieces::<$n>(
                buffer!(i.a, "buffer"),
                index,
                count,
                v,
                hooks,
                PIECE_BYTES
            ));
        }};
    }
    macro_rules! type_of {
        ($t:expr) => {
            state!().types[$t as usize]
        };
    }

    match i.op {
        Opcode::GlobalLoadI32 | Opcode::GlobalLoadF32 => {
            let s = global_slice!(i.x, 4);
            let v = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            wi!(i.a, v);
        }
        Opcode::GlobalStoreI32 | Opcode::GlobalStoreF32 => {
            let v = ri!(i.a) as u32;
            global_slice!(i.x, 4).copy_from_slice(&v.to_le_bytes());
        }
        Opcode::GlobalLoadIndirectI32 | Opcode::GlobalLoadIndirectF32 => {
            let s = global_slice!(ri!(i.a) as u32, 4);
            let v = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            wi!(i.b, v);
        }
        Opcode::GlobalStoreIndirectI32 | Opcode::GlobalStoreIndirectF32 => {
            let v = ri!(i.b) as u32;
            global_slice!(ri!(i.a) as u32, 4).copy_from_slice(&v.to_le_bytes());
        }
        Opcode::GlobalLoadI64 | Opcode::GlobalLoadF64 => {
            let s = global_slice!(i.x, 8);
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            wl!(i.a, i64::from_le_bytes(b));
        }
        Opcode::GlobalStoreI64 | Opcode::GlobalStoreF64 => {
            let v = rl!(i.a);
            global_slice!(i.x, 8).copy_from_slice(&v.to_le_bytes());
        }
        Opcode::GlobalLoadIndirectI64 | Opcode::GlobalLoadIndirectF64 => {
            let s = global_slice!(ri!(i.a) as u32, 8);
            let mut b = [0u8; 8];
            b.copy_from_slice(s);
            wl!(i.b, i64::from_le_bytes(b));
        }
        Opcode::GlobalStoreIndirectI64 | Opcode::GlobalStoreIndirectF64 => {
            let v = rl!(i.b);
            global_slice!(ri!(i.a) as u32, 8).copy_from_slice(&v.to_le_bytes());
        }
        Opcode::GlobalLoadRef => {
            let ty = type_of!(i.y);
            let g = global_ref!(i.x);
            tri!(ty.check_ref(g));
            let v = if i.a & REF_MOVE_BIT != 0 {
                std::mem::take(g)
            } else {
                g.clone()
            };
            wref!(i.a, v);
        }
        Opcode::GlobalStoreRef => {
            let ty = type_of!(i.y);
            tri!(ty.check_ref(rref!(i.a)));
            let v = take_ref!(i.a);
            *global_ref!(i.x) = v;
        }
        Opcode::GlobalLoadIndirectRef => {
            let ty = type_of!(i.x);
            let g = global_ref!(ri!(i.a) as u32);
            tri!(ty.check_ref(g));
            let v = if i.b & REF_MOVE_BIT != 0 {
                std::mem::take(g)
            } else {
                g.clone()
            };
            wref!(i.b, v);
        }
        Opcode::GlobalStoreIndirectRef => {
            let ty = type_of!(i.x);
            tri!(ty.check_ref(rref!(i.b)));
            let v = take_ref!(i.b);
            *global_ref!(ri!(i.a) as u32) = v;
        }
        Opcode::ConstRefRodata => {
            let b = state!().rodata[i.x as usize].clone();
            wref!(i.a, Ref::Buffer(b));
        }
        Opcode::ListAlloc => {
            let ty = type_of!(i.x);
            let n = tri!(list_limit(ri!(i.a), "capacity", limits));
            bulk!(n as u64 * element_bytes(ty) as u64);
            let l = tri!(List::new(ty, 0));
            tri!(l.reserve_charged(n, memory));
            let l = Arc::new(l);
            if l.may_hold_lists() {
                ctx.lists.track(&l);
            }
            wref!(i.b, Ref::List(l));
        }
        Opcode::ListReserve => {
            let n = tri!(list_limit(ri!(i.b), "capacity", limits));
            bulk!(n as u64 * list!(i.a).element_bytes() as u64);
            tri!(list!(i.a).reserve_charged(n, memory))
        }
        // (The fused append runs its size here: its other three
        // instructions follow it in place.)
        Opcode::ListSize | Opcode::ListSizeThenAppend => {
            let n = list!(i.a).len();
            wi!(i.b, n as i32);
        }
        Opcode::ListResize => {
            let n = tri!(list_limit(ri!(i.b), "size", limits));
            // The work is the elements written or released, not the size:
            // a list grown one element at a time costs one each time.
            if hooks.charges_bulk() {
                let l = list!(i.a);
                let len = l.len() as u64;
                bulk!((n as u64).abs_diff(len) * l.element_bytes() as u64);
            }
            // Growing writes every new element: gigabytes for a long list,
            // so in pieces with looks at the stop word between them when
            // the context can be stopped (growth within one piece is one).
            let piece = if hooks.loop_kind() != super::hooks::LoopKind::Plain {
                PIECE_BYTES as usize / list!(i.a).element_bytes()
            } else {
                usize::MAX
            };
            // A null or non-list register traps here.
            list!(i.a);
            // SAFETY: see `exec::regs`; ref ordinal verified in range, and
            // no other reference into the ref window is live.
            let reg = unsafe { &mut *refs.add((i.a & REF_INDEX_MASK) as usize) };
            if let Some(holder) = reg.list_holder() {
                tri!(List::resize_charged_held(holder, n, memory, piece, || {
                    hooks.check_stop()
                }))
            }
        }
        Opcode::ListGetI32 => {
            let v = tri!(list!(i.a).get_i32(ri!(i.b) as u32));
            wi!(i.c, v);
        }
        Opcode::ListSetI32 => tri!(list!(i.a).set_i32(ri!(i.b) as u32, ri!(i.c))),
        Opcode::ListGetI64 => {
            let v = tri!(list!(i.a).get_i64(ri!(i.b) as u32));
            wl!(i.c, v);
        }
        Opcode::ListSetI64 => tri!(list!(i.a).set_i64(ri!(i.b) as u32, rl!(i.c))),
        Opcode::ListGetF32 => {
            let v = tri!(list!(i.a).get_f32(ri!(i.b) as u32));
            wf!(i.c, v);
        }
        Opcode::ListSetF32 => tri!(list!(i.a).set_f32(ri!(i.b) as u32, rf!(i.c))),
        Opcode::ListGetF64 => {
            let v = tri!(list!(i.a).get_f64(ri!(i.b) as u32));
            wd!(i.c, v);
        }
        Opcode::ListSetF64 => tri!(list!(i.a).set_f64(ri!(i.b) as u32, rd!(i.c))),
        Opcode::ListGetRef => {
            let ty = type_of!(i.x);
            let l = list!(i.a).clone();
            let v = tri!(l.get_ref(ri!(i.b) as u32, i.c & REF_MOVE_BIT != 0));
            // An element of another type reads as null.
            let v = if ty.admits(&v) { v } else { Ref::Null };
            wref!(i.c, v);
        }
        Opcode::ListSetRef => {
            let l = list!(i.a).clone();
            let v = take_ref!(i.c);
            tri!(l.set_ref(ri!(i.b) as u32, v));
        }
        Opcode::SelectRef => {
            let ty = type_of!(i.x);
            let (pick, other) = if ri!(i.a) != 0 {
                (i.b, i.c)
            } else {
                (i.c, i.b)
            };
            tri!(ty.check_ref(rref!(pick)));
            let v = take_ref!(pick);
            if other & REF_MOVE_BIT != 0 && (other & REF_INDEX_MASK) != (i.d & REF_INDEX_MASK) {
                wref!(other, Ref::Null);
            }
            wref!(i.d, v);
        }
        Opcode::SwitchI32 | Opcode::SwitchF32 => {
            let idx = ri!(i.a);
            let list = aux_list(&func.aux, i.x, 0);
            let v = match usize::try_from(idx).ok().and_then(|k| list.get(k)) {
                Some(&r) => ri!(r),
                None => ri!(i.b),
            };
            wi!(i.c, v);
        }
        Opcode::SwitchI64 | Opcode::SwitchF64 => {
            let idx = ri!(i.a);
            let list = aux_list(&func.aux, i.x, 0);
            let v = match usize::try_from(idx).ok().and_then(|k| list.get(k)) {
                Some(&r) => rl!(r),
                None => rl!(i.b),
            };
            wl!(i.c, v);
        }
        Opcode::SwitchRef => {
            let ty = type_of!(i.x);
            let idx = ri!(i.a);
            let list = aux_list(&func.aux, i.y, 0);
            let src = match usize::try_from(idx).ok().and_then(|k| list.get(k)) {
                Some(&r) => r as u16,
                None => i.b,
            };
            tri!(ty.check_ref(rref!(src)));
            let v = take_ref!(src);
            wref!(i.c, v);
        }
        Opcode::Call
        | Opcode::CallYieldable
        | Opcode::CallVariadic
        | Opcode::CallVariadicYieldable => {
            return call(ctx, &i);
        }
        Opcode::Fail => {
            let code = ri!(i.a) as u32;
            if code != 0 {
                // As the reference: any non-zero value fails, and the status
                // keeps its low 5 bits (100 is DEADLINE_EXCEEDED, 32 is a
                // failure named OK).
                let msg = func.strings[i.x as usize].to_string();
                tri!(Err(Trap::new(StatusCode::from_u32(code & 0x1F), msg)))
            }
        }
        Opcode::ImportResolved => {
            let imp = (i.x & !IMPORT_ORDINAL_BIT) as usize;
            let ok = !matches!(state!().imports[imp], ImportTarget::Unresolved);
            wi!(i.a, ok as i32);
        }
        Opcode::Yield => {
            jump!(i.x);
            save_pc!();
            st.suspended = Some(Suspended::Yield);
            return Ok(Some(CallState::Yielded));
        }
        Opcode::Trace | Opcode::Print => {
            for &r in aux_list(&func.aux, i.y, 0) {
                let r = r as u16;
                if r & 0x8000 != 0 && r & REF_MOVE_BIT != 0 {
                    wref!(r, Ref::Null);
                }
            }
        }
        Opcode::BufferFillI8 => buffer_fill!(1, [ri!(i.d) as u8]),
        Opcode::BufferFillI16 => buffer_fill!(2, (ri!(i.d) as u16).to_le_bytes()),
        Opcode::BufferFillI32 | Opcode::BufferFillF32 => {
            buffer_fill!(4, (ri!(i.d) as u32).to_le_bytes())
        }
        Opcode::BufferFillI64 | Opcode::BufferFillF64 => buffer_fill!(8, rl!(i.d).to_le_bytes()),
        Opcode::BufferAlloc => {
            let len = rl!(i.a);
            let align = ri!(i.b);
            tri!(check_alignment(align));
            let len = tri!(usize::try_from(len).map_err(|_| Trap::new(
                StatusCode::InvalidArgument,
                format!("buffer length {len} is negative")
            )));
            tri!(buffer_limit(len as u64, limits));
            bulk!(len as u64);
            let charge = tri!(Charge::new(memory, buffer_bytes(len as u64), "a buffer"));
            let b = tri!(Buffer::new(len)).with_charge(charge);
            wref!(i.c, Ref::Buffer(Arc::new(b)));
        }
        Opcode::BufferClone => {
            let align = ri!(i.d);
            tri!(check_alignment(align));
            tri!(buffer_limit(rl!(i.c) as u64, limits));
            let src = buffer!(i.a, "source");
            let bytes = (rl!(i.c) as u64).min(src.len() as u64);
            bulk!(bytes);
            let charge = tri!(Charge::new(memory, buffer_bytes(bytes), "a buffer"));
            let (offset, length) = (rl!(i.b) as u64, rl!(i.c) as u64);
            let b = tri!(clone_in_pieces(
                src,
                offset,
                length,
                charge,
                hooks,
                PIECE_BYTES
            ));
            wref!(i.x, Ref::Buffer(b));
        }
        Opcode::BufferLength => {
            let n = buffer!(i.a, "buffer").len();
            wl!(i.b, n as i64);
        }
        Opcode::BufferCopy => {
            let src = buffer!(i.a, "source_buffer").clone();
            let dst = buffer!(i.c, "target_buffer").clone();
            bulk!((rl!(i.x) as u64).min(src.len() as u64));
            tri!(copy_in_pieces(
                &src,
                rl!(i.b) as u64,
                &dst,
                rl!(i.d) as u64,
                rl!(i.x) as u64,
                hooks,
                PIECE_BYTES
            ));
        }
        Opcode::BufferCompare => {
            let l = buffer!(i.a, "lhs_buffer").clone();
            let r = buffer!(i.c, "rhs_buffer").clone();
            bulk!((rl!(i.x) as u64).min(l.len() as u64));
            let eq = tri!(compare_in_pieces(
                &l,
                rl!(i.b) as u64,
                &r,
                rl!(i.d) as u64,
                rl!(i.x) as u64,
                hooks,
                PIECE_BYTES
            ));
            wi!(i.y, eq as i32);
        }
        Opcode::BufferHash => {
            bulk!((rl!(i.c) as u64).min(buffer!(i.a, "source_buffer").len() as u64));
            let (offset, length) = (rl!(i.b) as u64, rl!(i.c) as u64);
            let piece = if in_pieces(hooks, length, PIECE_BYTES) {
                PIECE_BYTES as usize
            } else {
                usize::MAX
            };
            let source = buffer!(i.a, "source_buffer");
            let h = tri!(source.hash_in_pieces(offset, length, piece, || hooks.check_stop()));
            wl!(i.d, h);
        }
        Opcode::CastAnyRef => {
            let ty = type_of!(i.x);
            tri!(ty.check_ref(rref!(i.a)));
            let v = take_ref!(i.a);
            wref!(i.b, v);
        }
        Opcode::DiscardRefs => {
            for &r in aux_list(&func.aux, i.x, 0) {
                wref!(r, Ref::Null);
            }
        }
        Opcode::Block => {
            tri!(Err(Trap::new(
                StatusCode::FailedPrecondition,
                "execution ran past the end of the function (missing terminator)"
            )))
        }
        Opcode::CondBreak => {
            // Debug breaks are not trapped without a debugger attached.
            jump!(i.x);
        }
        Opcode::BrTable => {
            let idx = ri!(i.a);
            let n = func.aux[i.y as usize] as i64;
            jump!(if (idx as i64) >= 0 && (idx as i64) < n {
                func.aux[i.y as usize + 1 + idx as usize]
            } else {
                i.x
            });
        }
        Opcode::Break => {
            if i.y != NONE {
                remap!(i.y);
            }
            jump!(i.x);
        }
        _ => {
            return Err(Trap::new(
                StatusCode::Internal,
                format!(
                    "{} reached the interpreter's slow path",
                    i.op.info().mnemonic
                ),
            ))
        }
    }
    save_pc!();
    Ok(None)
}

/// Bytes of bulk buffer work (fill, copy, clone, compare, hash) between two looks at
/// the stop word when the context can be stopped (a deadline, an
/// interrupt handle): 8 MiB, about a millisecond of memory bandwidth, so a
/// fill of gigabytes ends within milliseconds of its deadline rather than
/// when it is done. A multiple of every element size.
const PIECE_BYTES: u64 = 8 << 20;

/// Whether bulk work of `bytes` is done in pieces with looks at the stop
/// word between them: when it is longer than one piece and something can
/// stop the context.
fn in_pieces(hooks: &Hooks, bytes: u64, piece: u64) -> bool {
    bytes > piece && hooks.loop_kind() != super::hooks::LoopKind::Plain
}

/// [`Buffer::fill`] of `count` elements from `index`, in pieces of
/// `piece` bytes ([`PIECE_BYTES`]; a multiple of `N`) with a look at the
/// stop word before each piece but the first when [`in_pieces`] says so. The whole range is checked first: a
/// fill out of range writes nothing, as in one piece.
fn fill_in_pieces<const N: usize>(
    buffer: &Buffer,
    index: u64,
    count: u64,
    value: [u8; N],
    hooks: &Hooks,
    piece: u64,
) -> Result<(), Trap> {
    let bytes = count.saturating_mul(N as u64);
    if !in_pieces(hooks, bytes, piece)
        || index.saturating_add(count).saturating_mul(N as u64) > buffer.len() as u64
    {
        return buffer.fill::<N>(index, count, value);
    }
    let per_piece = piece / N as u64;
    let mut done = 0;
    while done < count {
        if done > 0 {
            hooks.check_stop()?;
        }
        let n = per_piece.min(count - done);
        buffer.fill::<N>(index + done, n, value)?;
        done += n;
    }
    Ok(())
}

/// [`Buffer::copy`], in pieces ([`Buffer::copy_in_pieces`]) when
/// [`in_pieces`] says so.
fn copy_in_pieces(
    src: &Arc<Buffer>,
    src_offset: u64,
    dst: &Arc<Buffer>,
    dst_offset: u64,
    length: u64,
    hooks: &Hooks,
    piece: u64,
) -> Result<(), Trap> {
    if !in_pieces(hooks, length, piece) {
        return Buffer::copy(src, src_offset, dst, dst_offset, length);
    }
    Buffer::copy_in_pieces(src, src_offset, dst, dst_offset, length, piece, || {
        hooks.check_stop()
    })
}

/// `vm.buffer.compare` in pieces as [`fill_in_pieces`]: both ranges are
/// checked whole first, and the first piece that differs ends the work.
fn compare_in_pieces(
    lhs: &Buffer,
    lhs_offset: u64,
    rhs: &Buffer,
    rhs_offset: u64,
    length: u64,
    hooks: &Hooks,
    piece: u64,
) -> Result<bool, Trap> {
    if !in_pieces(hooks, length, piece) {
        return Buffer::compare(lhs, lhs_offset, rhs, rhs_offset, length);
    }
    lhs.check_range(lhs_offset, length)?;
    rhs.check_range(rhs_offset, length)?;
    let mut at = 0;
    while at < length {
        if at > 0 {
            hooks.check_stop()?;
        }
        let n = piece.min(length - at);
        if !Buffer::compare(lhs, lhs_offset + at, rhs, rhs_offset + at, n)? {
            return Ok(false);
        }
        at += n;
    }
    Ok(true)
}

/// `vm.buffer.clone`: a new buffer holding `charge`, with a copy of
/// `length` bytes at `offset` made in pieces as [`copy_in_pieces`] (the
/// range checked whole first).
fn clone_in_pieces(
    src: &Arc<Buffer>,
    offset: u64,
    length: u64,
    charge: Charge,
    hooks: &Hooks,
    piece: u64,
) -> Result<Arc<Buffer>, Trap> {
    if !in_pieces(hooks, length, piece) {
        return Ok(Arc::new(
            src.clone_range(offset, length)?.with_charge(charge),
        ));
    }
    src.check_range(offset, length)?;
    let copy = Arc::new(Buffer::new(length as usize)?.with_charge(charge));
    copy_in_pieces(src, offset, &copy, 0, length, hooks, piece)?;
    Ok(copy)
}

/// Bytes of a fill of `count` elements of `n` bytes (at most the buffer).
fn fill_bytes(b: &Buffer, count: i64, n: u64) -> u64 {
    (count as u64).saturating_mul(n).min(b.len() as u64)
}

/// Memory-budget bytes of a buffer of `len` bytes: its bytes, the
/// `Buffer` and the counts of its `Arc`.
fn buffer_bytes(len: u64) -> u64 {
    len.saturating_add(std::mem::size_of::<Buffer>() as u64 + 16)
}

/// A buffer size within the context's limit, or RESOURCE_EXHAUSTED.
fn buffer_limit(bytes: u64, limits: &Limits) -> Result<(), Trap> {
    if bytes > limits.max_buffer_bytes {
        return Err(Trap::new(
            StatusCode::ResourceExhausted,
            format!(
                "buffer of {bytes} bytes exceeds the context's limit of {} bytes \
                 (Limits::max_buffer_bytes, irvm --max-buffer-bytes)",
                limits.max_buffer_bytes
            ),
        ));
    }
    Ok(())
}

/// A list count (`what`: its capacity or size) within the context's
/// limit, or RESOURCE_EXHAUSTED; a negative count is INVALID_ARGUMENT.
///
/// IREE's dispatch reads the count as unsigned: -1 asks for 4,294,967,295
/// elements (iree-run-module allocates and zeroes 16 GiB for a
/// `!vm.list<i32>` of them, and `vm.list.size` then reads -1). Counts are
/// sizes, and a size `vm.list.size` cannot return is none (as `vm.buffer.
/// alloc` of length -1 is refused): docs/COMPATIBILITY.md.
fn list_limit(count: i32, what: &str, limits: &Limits) -> Result<u32, Trap> {
    let Ok(elements) = u32::try_from(count) else {
        return Err(Trap::new(
            StatusCode::InvalidArgument,
            format!("list {what} {count} is negative"),
        ));
    };
    if elements > limits.max_list_elements {
        return Err(Trap::new(
            StatusCode::ResourceExhausted,
            format!(
                "list of {elements} elements exceeds the context's limit of {} elements \
                 (Limits::max_list_elements, irvm --max-list-elements)",
                limits.max_list_elements
            ),
        ));
    }
    Ok(elements)
}

/// A call instruction (`call`, `call.yieldable`, `call.variadic`,
/// `call.variadic.yieldable`) of the top frame, whose saved pc is the
/// instruction after it: pushes the callee's frame (a bytecode function),
/// or makes the host call and writes its results. Apart from [`step`] so
/// that the hot loop's calls of host functions skip `step`'s large frame.
/// `Some` ends the run (the call yielded).
#[inline(never)]
pub(super) fn call(ctx: &mut Context, i: &Inst) -> Result<Option<CallState>, Trap> {
    let stack_limit = ctx.stack_limit();
    let modules = &mut ctx.modules;
    let st = &mut ctx.stack;
    let hooks = &mut ctx.hooks;
    let resources = &ctx.resources;
    let host_calls = &mut ctx.host_calls;

    let Some(top) = st.frames.last() else {
        return Err(Trap::new(StatusCode::Internal, "call without a frame"));
    };
    let cur = top.module;
    // The function outlives the reference even when `frames` reallocates
    // (see `FuncRef`).
    let func: &crate::program::Function = top.func.get();
    let code: *const Inst = func.code.as_ptr();
    // SAFETY: the saved pc is an instruction index of `func` (see the loop).
    let ip: *const Inst = unsafe { code.add(top.pc as usize) };
    macro_rules! tri {
        ($e:expr) => {
            match $e {
                Ok(v) => v,
                Err(e) => {
                    if let Some(f) = st.frames.last_mut() {
                        // SAFETY: `ip` points into `func.code` (one past
                        // the call at most).
                        f.pc = unsafe { ip.offset_from(code) } as u32;
                    }
                    return Err(e);
                }
            }
        };
    }
    let callee = i.x;
    let variadic = matches!(i.op, Opcode::CallVariadic | Opcode::CallVariadicYieldable);
    let yieldable = matches!(i.op, Opcode::CallYieldable | Opcode::CallVariadicYieldable);
    // Aux record: [sizes]? [args] [target]? [results] [plan]?
    // (a variadic call's argument plan, made when it was lowered,
    // stands for its sizes here).
    let rec = i.y as usize;
    let mut p = rec;
    if variadic {
        p += 1 + func.aux[p] as usize;
    }
    let nargs = func.aux[p] as usize;
    let args_at = p + 1;
    p += 1 + nargs;
    let next_pc = if yieldable {
        let t = func.aux[p];
        p += 1;
        t
    } else {
        // SAFETY: `ip` is inside `func.code`.
        unsafe { ip.offset_from(code) as u32 }
    };
    let results_at = p as u32;
    let args = &func.aux[args_at..args_at + nargs];
    // Where does the call go?
    let (target_module, target) = if callee & IMPORT_ORDINAL_BIT != 0 {
        let imp = (callee & !IMPORT_ORDINAL_BIT) as usize;
        match &bytecode(modules, cur).imports[imp] {
            ImportTarget::Unresolved => {
                let name = bytecode(modules, cur).import_names[imp].clone();
                tri!(Err(Trap::new(
                    StatusCode::NotFound,
                    format!("optional import `{name}` was not resolved and cannot be called")
                )))
            }
            ImportTarget::Bytecode { module, ordinal } => (*module, Err(*ordinal)),
            ImportTarget::Host { module, index } => (*module, Ok(*index)),
        }
    } else {
        (cur, Err(callee))
    };
    let caller_base = {
        let f = st.frames.last_mut().expect("frame");
        f.pc = next_pc;
        f.ret = results_at;
        (f.i32_base as usize, f.ref_base as usize)
    };
    match target {
        Err(ordinal) => {
            // A bytecode function (this module or another).
            let callee_fn = &bytecode(modules, target_module).funcs[ordinal as usize];
            let callee_base = tri!(push_frame(st, target_module, callee_fn, stack_limit));
            marshal_args(st, caller_base, callee_base, args, &callee_fn.arg_slots);
            // The frames hold the pcs to go on from.
            Ok(None)
        }
        Ok(index) => {
            let imp = (callee & !IMPORT_ORDINAL_BIT) as usize;
            if st.blocked_host == Some(target_module) {
                let name = bytecode(modules, cur).import_names[imp].clone();
                tri!(Err(Trap::new(
                    StatusCode::FailedPrecondition,
                    format!(
                        "`{name}`: the program waits in a call of its host module that yields; \
                         a call made meanwhile cannot enter that module (its waiting call would \
                         see it) until that call returns"
                    )
                )))
            }
            let timing = super::profiling::host_call_begins(hooks, modules, st, resources);
            // The caller's import signature and the host module,
            // borrowed together (no count taken on the signature).
            let Some((sig, h)) = import_and_host(modules, cur, imp, target_module) else {
                // (No host call after all: the profile's call site
                // `host_call_begins` may have set is cleared.)
                resources.set_call_site(None);
                tri!(Err(Trap::new(StatusCode::Internal, "bad import link")))
            };
            // The arguments are read into, and the results
            // written from, vectors the stack keeps (empty between
            // calls): a host call allocates nothing for them.
            let registers = (&st.i32s[..], &mut st.refs[..]);
            if variadic {
                // The plan follows the results list.
                let plan = aux_list(&func.aux, results_at, 1);
                st.host_args
                    .read_planned(registers, caller_base, args, plan);
            } else {
                st.host_args.read(registers, caller_base, args, &sig.args);
            }
            let result_kinds = &sig.results;
            *host_calls += 1;
            resources.lend_fuel(hooks.fuel);
            let outcome =
                h.state
                    .call_into(index as usize, st.host_args.values(), &mut st.host_results);
            resources.reclaim_fuel(&mut hooks.fuel);
            if let Some(timing) = timing {
                let function = h.funcs.get(index as usize).map_or("?", |f| &f.0);
                super::profiling::host_call_ends(
                    hooks,
                    resources,
                    timing,
                    (target_module, index),
                    &h.name,
                    function,
                );
            }
            // (Forgetting the borrowed arguments, dropping those the
            // call took by move, and whatever a failed call left.)
            st.host_args.clear();
            if outcome.is_err() {
                st.host_results.clear();
            }
            match tri!(outcome) {
                HostStatus::Finished => {
                    let dst = aux_list(&func.aux, results_at, 0);
                    tri!(write_host_results(
                        (&mut st.i32s, &mut st.refs),
                        caller_base.0,
                        caller_base.1,
                        dst,
                        result_kinds,
                        &mut st.host_results,
                    ));
                    // The frames hold the pcs to go on from.
                    Ok(None)
                }
                HostStatus::Deferred => {
                    // (Its results come when it is resumed.)
                    st.host_results.clear();
                    if !yieldable {
                        tri!(Err(Trap::new(
                                    StatusCode::FailedPrecondition,
                                    "host function yielded from a non-yieldable call (use vm.call.yieldable)"
                                )))
                    }
                    st.suspended = Some(Suspended::HostCall {
                        module: target_module,
                        index,
                        import_module: cur,
                        import: imp as u32,
                        results: results_at,
                    });
                    Ok(Some(CallState::Yielded))
                }
            }
        }
    }
}

/// Import `imp`'s signature in bytecode module `caller` and the host
/// module `host` it is linked to, borrowed together (they are different
/// modules); `None` when the link does not name a host module.
fn import_and_host(
    modules: &mut [Registered],
    caller: u32,
    imp: usize,
    host: u32,
) -> Option<(&Signature, &mut HostInstance)> {
    let (caller, host) = (caller as usize, host as usize);
    let (c, h) = if caller < host {
        let (low, high) = modules.split_at_mut(host);
        (&low[caller], &mut high[0])
    } else if host < caller {
        let (low, high) = modules.split_at_mut(caller);
        (&high[0], &mut low[host])
    } else {
        return None;
    };
    match (c, h) {
        (Registered::Bytecode(b), Registered::Host(h)) => Some((b.import_sigs.get(imp)?, h)),
        _ => None,
    }
}

#[cfg(test)]
mod bulk_pieces_tests;
