//! The runtime functions compiled code calls (by address): resolving a
//! buffer for direct access (with the interpreter's lease checks), list
//! elements through the interpreter's own fast path, and ref block
//! arguments. A helper that cannot complete changes nothing and says so
//! (a null pointer, a zero, or [`JitEnv::fault`]); compiled code then
//! leaves before the instruction and the interpreter executes it (and
//! traps, or takes its slow path).

use super::JitEnv;
use crate::bytecode::isa::{Opcode, REF_INDEX_MASK, REF_MOVE_BIT};
use crate::exec::{
    self,
    cmath::{self, bin_f32, bin_f64, un_f32, un_f64, Bin, Un},
    hooks::BULK_BYTES_PER_FUEL,
};
use crate::values::{List, Ref};

/// Resolves the buffer in ref register `reg` for direct access by compiled
/// code (reading, or reading and writing when `write` is nonzero): its
/// bytes, with their length in [`JitEnv::access_len`], or null when the
/// access must go through the interpreter (a null or non-buffer ref, a
/// read-only buffer to write, a buffer another thread holds). See
/// `Buffer::run_access` for how long the answer holds.
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `reg` (verified in range).
pub(super) unsafe extern "C" fn buffer_access(env: *mut JitEnv, reg: u32, write: u32) -> *mut u8 {
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let env = unsafe { &mut *env };
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let r = unsafe { &*env.refs.add(reg as usize) };
    let crate::values::Ref::Buffer(b) = r else {
        return std::ptr::null_mut();
    };
    match b.run_access(env.token, write != 0) {
        Some((ptr, len)) => {
            env.access_len = len as u64;
            ptr
        }
        None => std::ptr::null_mut(),
    }
}

/// A ref block argument: retains (or moves, with the move bit) ref register
/// `s` into `d`, as the interpreter's remap does.
///
/// # Safety
/// `s` and `d` (without their bank and move bits) index the frame's ref
/// window in `env` (verified).
pub(super) unsafe extern "C" fn remap_ref(env: *mut JitEnv, s: u32, d: u32) {
    // SAFETY: per the contract.
    unsafe { crate::exec::remap_ref((*env).refs, s as u16, d as u16) }
}

/// `vm.list.get.ref`: element `index` of the list in ref register `list`
/// into ref register `dst` (taking it out of the list when `dst` carries
/// the move bit), read as null when it is not of the module's type `ty`,
/// as the interpreter does. Nonzero when done; zero, with nothing changed,
/// when the interpreter must run it (a null or non-list register, an index
/// out of range, a list of values).
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref registers `list` and `dst` (verified in range).
pub(super) unsafe extern "C" fn list_get_ref(
    env: *mut JitEnv,
    list: u32,
    index: u32,
    dst: u32,
    ty: u32,
) -> u32 {
    // SAFETY: per the contract, `env` is valid.
    let env = unsafe { &mut *env };
    // SAFETY: `types` is this context's type table of the module, of
    // `types_len` entries, alive while the code runs.
    let types = unsafe { std::slice::from_raw_parts(env.types, env.types_len) };
    let Some(&ty) = types.get(ty as usize) else {
        return 0;
    };
    let take = dst as u16 & REF_MOVE_BIT != 0;
    // SAFETY: per the contract, `list` is in range. The borrow ends before
    // `dst` (which may be the same register) is written.
    let got = match unsafe { &*env.refs.add(list as usize) }.list_fast() {
        Some(l) => l.get_ref(index, take),
        None => return 0,
    };
    let Ok(v) = got else {
        return 0;
    };
    let v = if ty.admits(&v) { v } else { Ref::Null };
    // SAFETY: per the contract, `dst` without its move bit is in range.
    unsafe { *env.refs.add((dst as u16 & REF_INDEX_MASK) as usize) = v };
    1
}

/// `vm.list.set.ref`: ref register `src` (moved out when it carries the
/// move bit, else retained) into element `index` of the list in ref
/// register `list`. Nonzero when done; zero, with nothing changed, when
/// the interpreter must run it (and trap): a null or non-list register, a
/// list of values, an index out of range, a ref of another type than the
/// list's. (Those are every refusal of `List::set_ref`, checked before the
/// register is touched; only another thread shrinking the list in between
/// could refuse it after, and the interpreter then traps on the same
/// index.)
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref registers `list` and `src` (verified in range).
pub(super) unsafe extern "C" fn list_set_ref(
    env: *mut JitEnv,
    list: u32,
    index: u32,
    src: u32,
) -> u32 {
    // SAFETY: per the contract, `env` is valid.
    let env = unsafe { &mut *env };
    // SAFETY: per the contract, `list` is in range. A count of its own:
    // `src` may be the same register, moved out below.
    let l = match unsafe { &*env.refs.add(list as usize) } {
        Ref::List(l) => l.clone(),
        _ => return 0,
    };
    let element = l.element_type();
    if matches!(element, crate::values::TypeDef::Value(_)) || index as usize >= l.len() {
        return 0;
    }
    // SAFETY: per the contract, `src` without its move bit is in range;
    // no other borrow of the window is alive.
    let slot = unsafe { &mut *env.refs.add((src as u16 & REF_INDEX_MASK) as usize) };
    if element.check_ref(slot).is_err() {
        return 0;
    }
    let v = if src as u16 & REF_MOVE_BIT != 0 {
        std::mem::take(slot)
    } else {
        slot.clone()
    };
    l.set_ref(index, v).is_ok() as u32
}

/// `vm.discard.refs` of ref register `reg`: releases what it holds.
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `reg` (verified in range).
pub(super) unsafe extern "C" fn discard_ref(env: *mut JitEnv, reg: u32) {
    // SAFETY: per the contract.
    unsafe { *(*env).refs.add(reg as usize) = Ref::Null };
}

/// The element type a list helper's `T` names: 0 i32, 1 f32, 2 i64, 3 f64.
fn list_type(t: u8) -> crate::values::ElementType {
    use crate::values::ElementType;
    match t {
        0 => ElementType::I32,
        1 => ElementType::F32,
        2 => ElementType::I64,
        _ => ElementType::F64,
    }
}

/// `vm.list.get.*`: the bits of element `index` of the list in ref
/// register `reg` when it is stored as exactly the type `T` names (see
/// `list_type`). Anything else (a conversion, a bad index, a null list)
/// sets [`JitEnv::fault`] and the interpreter runs the instruction.
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `reg` (verified in range).
pub(super) unsafe extern "C" fn list_get<const T: u8>(
    env: *mut JitEnv,
    reg: u32,
    index: u32,
) -> u64 {
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let env = unsafe { &mut *env };
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let r = unsafe { &*env.refs.add(reg as usize) };
    match r.list_fast().and_then(|l| l.get_bits(index, list_type(T))) {
        Some(bits) => bits,
        None => {
            env.fault = 1;
            0
        }
    }
}

/// `vm.list.set.*` of a list whose element type is exactly the type `T`
/// names; nonzero when done, zero (nothing changed) for anything else.
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `reg` (verified in range).
pub(super) unsafe extern "C" fn list_set<const T: u8>(
    env: *mut JitEnv,
    reg: u32,
    index: u32,
    bits: u64,
) -> u32 {
    // SAFETY: per the contract, `env` is valid and `reg` in range; the
    // register is the running code's, which waits for this call: no other
    // reference to it exists meanwhile.
    let r = unsafe { &mut *(*env).refs.add(reg as usize) };
    r.list_holder()
        .is_some_and(|l| List::set_bits_held(l, index, list_type(T), bits)) as u32
}

/// Where [`list_append`] left the append: in the high 32 bits of its
/// result, with the list's length before in the low 32.
pub(super) mod append_left {
    /// Nowhere: all four instructions are done.
    pub(in crate::jit) const DONE: u64 = 0;
    /// Before the `vm.list.size` (no list: the interpreter traps).
    pub(in crate::jit) const AT_SIZE: u64 = 1;
    /// Before the `vm.list.resize` (the size and the new size written).
    pub(in crate::jit) const AT_RESIZE: u64 = 2;
    /// Before the `vm.list.set.*` (the list resized).
    pub(in crate::jit) const AT_SET: u64 = 3;
}

/// `ListSizeThenAppend` (an append: `vm.list.size %r -> %n`, `vm.add.i32
/// %n, %d -> %t`, `vm.list.resize %r, %t`, `vm.list.set.* %r, %n, %v`;
/// `program::fuse::append_at`) of the list in ref register `reg`, with
/// `delta` the value of `%d` and `bits` that of `%v` (as [`list_set`]
/// takes them). A list the register alone holds, grown by one within its
/// capacity, takes `List::append_held`; anything else goes as the three
/// helpers of the separate instructions do it ([`list_size`],
/// [`list_resize`] with `checked`, [`list_set`]), and where one of them
/// would leave, this says so: the result's high 32 bits are one of
/// [`append_left`], its low 32 the list's length before (the `%n` compiled
/// code writes, and `%t`, before it leaves at the resize or the set).
///
/// # Safety
/// As [`list_resize`].
pub(super) unsafe extern "C" fn list_append<const T: u8>(
    env: *mut JitEnv,
    reg: u32,
    delta: u32,
    bits: u64,
    checked: u32,
) -> u64 {
    {
        // SAFETY: per the contract, `env` is valid and `reg` in range; the
        // register is the running code's, which waits for this call: no
        // other reference to it exists meanwhile. Both borrows end with
        // this block, before the helpers below take their own.
        let (max, r) = unsafe {
            (
                (*env).max_list_elements,
                &mut *(*env).refs.add(reg as usize),
            )
        };
        let Some(list) = r.list_holder() else {
            return append_left::AT_SIZE << 32;
        };
        if let Some(n) = List::append_held(list, delta as i32, max, list_type(T), bits) {
            return u64::from(n);
        }
    }
    // SAFETY: as above.
    let n = unsafe { list_size(env, reg) } as u32;
    // SAFETY: as above.
    if unsafe { list_resize(env, reg, n.wrapping_add(delta), checked) } == 0 {
        return append_left::AT_RESIZE << 32 | u64::from(n);
    }
    // SAFETY: as above.
    if unsafe { list_set::<T>(env, reg, n, bits) } == 0 {
        return append_left::AT_SET << 32 | u64::from(n);
    }
    append_left::DONE << 32 | u64::from(n)
}

/// `vm.list.size`: the length of the list in ref register `reg`, or -1
/// when it holds no list (the interpreter then traps on it).
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `reg` (verified in range).
pub(super) unsafe extern "C" fn list_size(env: *mut JitEnv, reg: u32) -> i64 {
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let r = unsafe { &*(*env).refs.add(reg as usize) };
    match r.list_fast() {
        Some(l) => l.len() as i64,
        None => -1,
    }
}

/// `vm.list.resize` of the list in ref register `reg` to `size` elements,
/// as the interpreter's slow path does it (`exec::slow`: the context's
/// list limit, growth charged to its memory budget, the capacity
/// doubling). Nonzero when done; zero, with the list's elements unchanged,
/// when the interpreter must run it: a null or non-list register, a size
/// over the limit or the budget (the interpreter traps with its message),
/// or, when `checked` (code that counts fuel or reads the stop word), a
/// resize of 64 bytes of elements or more, which the interpreter charges
/// as bulk work and grows in pieces with looks at the stop word.
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `reg` (verified in range) and whose
/// `memory` is the context's budget.
pub(super) unsafe extern "C" fn list_resize(
    env: *mut JitEnv,
    reg: u32,
    size: u32,
    checked: u32,
) -> u32 {
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let Some((env, list)) = (unsafe { list_within_limit(env, reg, size) }) else {
        return 0;
    };
    if checked != 0 {
        let changed = (size as u64).abs_diff(list.len() as u64);
        if changed.saturating_mul(list.element_bytes() as u64) >= BULK_BYTES_PER_FUEL {
            return 0;
        }
    }
    // SAFETY: per the contract, `memory` is the context's budget, alive
    // while the code runs.
    let memory = unsafe { &*env.memory };
    // One piece: unchecked code has no stop word to look at, and checked
    // code resizes by fewer than 64 bytes here.
    List::resize_charged_held(list, size, memory, usize::MAX, || Ok(())).is_ok() as u32
}

/// `vm.list.alloc` of a list of the module's type `ty` with room for
/// `capacity` elements into ref register `dst`, as the interpreter's slow
/// path does it (the list limit, the room charged to the memory budget).
/// Nonzero when done; zero, with nothing changed, when the interpreter
/// must run it: a capacity over the limit or the budget, or, when
/// `checked`, a capacity of 64 bytes of elements or more (charged as bulk
/// work). A list that may hold lists (a variant list, a list of lists)
/// joins the context's cycle tracker, as the interpreter's do.
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `dst` (verified in range), whose
/// `memory` is the context's budget and whose `lists` is the context's
/// list tracker.
pub(super) unsafe extern "C" fn list_alloc(
    env: *mut JitEnv,
    ty: u32,
    capacity: u32,
    dst: u32,
    checked: u32,
) -> u32 {
    // SAFETY: per the contract, `env` is valid.
    let env = unsafe { &mut *env };
    // SAFETY: `types` is this context's type table of the module, of
    // `types_len` entries, alive while the code runs.
    let types = unsafe { std::slice::from_raw_parts(env.types, env.types_len) };
    let Some(&ty) = types.get(ty as usize) else {
        return 0;
    };
    if !within_list_limit(env, capacity) {
        return 0;
    }
    let bytes = (capacity as u64).saturating_mul(crate::values::list::element_bytes(ty) as u64);
    if checked != 0 && bytes >= BULK_BYTES_PER_FUEL {
        return 0;
    }
    let Ok(list) = crate::values::List::new(ty, 0) else {
        return 0;
    };
    // SAFETY: per the contract, `memory` is the context's budget, alive
    // while the code runs.
    let memory = unsafe { &*env.memory };
    if list.reserve_charged(capacity, memory).is_err() {
        return 0;
    }
    let list = std::sync::Arc::new(list);
    if list.may_hold_lists() {
        // As the interpreter: tracked for the cycle collector, which may
        // collect first. That is sound here as between instructions: every
        // ref the running code holds is in a ref window, counted as a
        // holder outside the tracked lists, and the new list is not yet
        // anywhere.
        // SAFETY: per the contract, `lists` is the context's tracker,
        // which nothing else touches while the code runs.
        unsafe { &mut *env.lists }.track(&list);
    }
    let list = Ref::List(list);
    // SAFETY: per the contract, `dst` without its move bit is in range.
    unsafe { *env.refs.add((dst as u16 & REF_INDEX_MASK) as usize) = list };
    1
}

/// The environment and the list in ref register `reg`, as its holder
/// (for the paths that skip the element lock when the register is its
/// only holder), when `count` elements are within the context's list limit
/// (`None`: a null or non-list register, or a count over the limit, which
/// the interpreter runs and traps on with its message).
///
/// # Safety
/// As [`list_resize`]; the register is the running code's, which waits
/// for the helper: no other reference to it exists meanwhile.
unsafe fn list_within_limit<'a>(
    env: *mut JitEnv,
    reg: u32,
    count: u32,
) -> Option<(&'a JitEnv, &'a mut std::sync::Arc<List>)> {
    // SAFETY: per the contract, `env` is valid.
    let env = unsafe { &*env };
    if !within_list_limit(env, count) {
        return None;
    }
    // SAFETY: per the contract, `reg` is in range and not otherwise
    // referenced while the helper runs.
    let list = unsafe { &mut *env.refs.add(reg as usize) }.list_holder()?;
    Some((env, list))
}

/// Whether a list of `count` elements is within the context's list limit
/// and `count` is not a negative i32 (both of which the interpreter
/// refuses, with its message: `exec::slow::list_limit`).
fn within_list_limit(env: &JitEnv, count: u32) -> bool {
    count <= env.max_list_elements && count <= i32::MAX as u32
}

/// `vm.list.reserve` of room for `capacity` elements in the list in ref
/// register `reg`, as the interpreter's slow path does it (the list limit,
/// the room charged to the memory budget). Nonzero when done; zero, with
/// the list's elements unchanged, when the interpreter must run it: a null
/// or non-list register, a capacity over the limit or the budget, or, when
/// `checked`, a capacity of 64 bytes of elements or more (charged as bulk
/// work).
///
/// # Safety
/// As [`list_resize`].
pub(super) unsafe extern "C" fn list_reserve(
    env: *mut JitEnv,
    reg: u32,
    capacity: u32,
    checked: u32,
) -> u32 {
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let Some((env, list)) = (unsafe { list_within_limit(env, reg, capacity) }) else {
        return 0;
    };
    let bytes = (capacity as u64).saturating_mul(list.element_bytes() as u64);
    if checked != 0 && bytes >= BULK_BYTES_PER_FUEL {
        return 0;
    }
    // SAFETY: per the contract, `memory` is the context's budget, alive
    // while the code runs.
    let memory = unsafe { &*env.memory };
    list.reserve_charged(capacity, memory).is_ok() as u32
}

/// Defines, for each listed opcode, a helper computing it exactly as the
/// interpreter's arm does (the same functions of `exec::cmath` and
/// `exec`), and `pure_op`, which gives a helper's address. The helpers'
/// operand and result types are the opcode's register banks in the ISA
/// table (every field but the last read, the last written), which the
/// translator passes and receives in the C calling convention. `libc` names
/// the C library function the interpreter's own call ends in, when there
/// is one: compiled code then calls that directly.
macro_rules! pure_ops {
    ($($op:ident => |$($x:ident: $t:ty),+| -> $r:ty { $body:expr } $(, libc = $direct:expr)?)*) => {
        /// The address of the helper computing `op` (a pure operation of
        /// registers: math functions, rounding, float-to-int casts), if
        /// one exists.
        pub(super) fn pure_op(op: Opcode) -> Option<usize> {
            $(
                #[expect(non_snake_case, reason = "each helper is named after its opcode's variant")]
                extern "C" fn $op($($x: $t),+) -> $r {
                    $body
                }
            )*
            match op {
                $(Opcode::$op => {
                    $(if let Some(f) = $direct {
                        return Some(f);
                    })?
                    Some($op as *const () as usize)
                })*
                _ => None,
            }
        }
    };
}

pure_ops! {
    AtanF32 => |x: f32| -> f32 { un_f32(Un::Atan, x) }, libc = cmath::un_f32_symbol(Un::Atan)
    CosF32 => |x: f32| -> f32 { un_f32(Un::Cos, x) }, libc = cmath::un_f32_symbol(Un::Cos)
    SinF32 => |x: f32| -> f32 { un_f32(Un::Sin, x) }, libc = cmath::un_f32_symbol(Un::Sin)
    ExpF32 => |x: f32| -> f32 { un_f32(Un::Exp, x) }, libc = cmath::un_f32_symbol(Un::Exp)
    Exp2F32 => |x: f32| -> f32 { un_f32(Un::Exp2, x) }, libc = cmath::un_f32_symbol(Un::Exp2)
    Expm1F32 => |x: f32| -> f32 { un_f32(Un::Expm1, x) }, libc = cmath::un_f32_symbol(Un::Expm1)
    LogF32 => |x: f32| -> f32 { un_f32(Un::Log, x) }, libc = cmath::un_f32_symbol(Un::Log)
    Log10F32 => |x: f32| -> f32 { un_f32(Un::Log10, x) }, libc = cmath::un_f32_symbol(Un::Log10)
    Log1pF32 => |x: f32| -> f32 { un_f32(Un::Log1p, x) }, libc = cmath::un_f32_symbol(Un::Log1p)
    Log2F32 => |x: f32| -> f32 { un_f32(Un::Log2, x) }, libc = cmath::un_f32_symbol(Un::Log2)
    TanhF32 => |x: f32| -> f32 { un_f32(Un::Tanh, x) }, libc = cmath::un_f32_symbol(Un::Tanh)
    ErfF32 => |x: f32| -> f32 { un_f32(Un::Erf, x) }, libc = cmath::un_f32_symbol(Un::Erf)
    Atan2F32 => |x: f32, y: f32| -> f32 { bin_f32(Bin::Atan2, x, y) }
    PowF32 => |x: f32, y: f32| -> f32 { bin_f32(Bin::Pow, x, y) }
    FPowIF32 => |x: f32, n: i64| -> f32 { cmath::powi_f32(x, n) }
    RemF32 => |x: f32, y: f32| -> f32 { bin_f32(Bin::Remainder, x, y) }
    CeilF32 => |x: f32| -> f32 { cmath::ceil_f32(x) }
    FloorF32 => |x: f32| -> f32 { cmath::floor_f32(x) }
    RoundF32 => |x: f32| -> f32 { cmath::round_f32(x) }
    RoundF32Even => |x: f32| -> f32 { cmath::round_even_f32(x) }
    CastUI64F32 => |x: i64| -> f32 { x as u64 as f32 }
    CastF32SI32 => |x: f32| -> i32 { exec::cast_f32_si32(x) }
    CastF32UI32 => |x: f32| -> i32 { exec::lround(x as f64) as u32 as i32 }
    CastF32SI64 => |x: f32| -> i64 { exec::lround(x as f64) }
    CastF32UI64 => |x: f32| -> i64 { cmath::cast_f32_ui64(x) }
    AtanF64 => |x: f64| -> f64 { un_f64(Un::Atan, x) }, libc = cmath::un_f64_symbol(Un::Atan)
    CosF64 => |x: f64| -> f64 { un_f64(Un::Cos, x) }, libc = cmath::un_f64_symbol(Un::Cos)
    SinF64 => |x: f64| -> f64 { un_f64(Un::Sin, x) }, libc = cmath::un_f64_symbol(Un::Sin)
    ExpF64 => |x: f64| -> f64 { un_f64(Un::Exp, x) }, libc = cmath::un_f64_symbol(Un::Exp)
    Exp2F64 => |x: f64| -> f64 { un_f64(Un::Exp2, x) }, libc = cmath::un_f64_symbol(Un::Exp2)
    Expm1F64 => |x: f64| -> f64 { un_f64(Un::Expm1, x) }, libc = cmath::un_f64_symbol(Un::Expm1)
    LogF64 => |x: f64| -> f64 { un_f64(Un::Log, x) }, libc = cmath::un_f64_symbol(Un::Log)
    Log10F64 => |x: f64| -> f64 { un_f64(Un::Log10, x) }, libc = cmath::un_f64_symbol(Un::Log10)
    Log1pF64 => |x: f64| -> f64 { un_f64(Un::Log1p, x) }, libc = cmath::un_f64_symbol(Un::Log1p)
    Log2F64 => |x: f64| -> f64 { un_f64(Un::Log2, x) }, libc = cmath::un_f64_symbol(Un::Log2)
    TanhF64 => |x: f64| -> f64 { un_f64(Un::Tanh, x) }, libc = cmath::un_f64_symbol(Un::Tanh)
    ErfF64 => |x: f64| -> f64 { un_f64(Un::Erf, x) }, libc = cmath::un_f64_symbol(Un::Erf)
    Atan2F64 => |x: f64, y: f64| -> f64 { bin_f64(Bin::Atan2, x, y) }
    PowF64 => |x: f64, y: f64| -> f64 { bin_f64(Bin::Pow, x, y) }
    FPowIF64 => |x: f64, n: i64| -> f64 { cmath::powi_f64(x, n) }
    RemF64 => |x: f64, y: f64| -> f64 { bin_f64(Bin::Remainder, x, y) }
    CeilF64 => |x: f64| -> f64 { cmath::ceil_f64(x) }
    FloorF64 => |x: f64| -> f64 { cmath::floor_f64(x) }
    RoundF64 => |x: f64| -> f64 { cmath::round_f64(x) }
    RoundF64Even => |x: f64| -> f64 { cmath::round_even_f64(x) }
    CastUI64F64 => |x: i64| -> f64 { x as u64 as f64 }
    CastF64SI32 => |x: f64| -> i32 { exec::lround(x as f32 as f64) as i32 }
    CastF64UI32 => |x: f64| -> i32 { exec::lround(x as f32 as f64) as u32 as i32 }
    CastF64SI64 => |x: f64| -> i64 { exec::lround(x) }
    CastF64UI64 => |x: f64| -> i64 { exec::lround(x) }
}
