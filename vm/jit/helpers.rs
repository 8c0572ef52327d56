//! The runtime functions compiled code calls (by address): resolving a
//! buffer for direct access (with the interpreter's lease checks), list
//! elements through the interpreter's own fast path, and ref block
//! arguments. A helper that cannot complete changes nothing and says so
//! (a null pointer, a zero, or [`JitEnv::fault`]); compiled code then
//! leaves before the instruction and the interpreter executes it (and
//! traps, or takes its slow path).

use super::JitEnv;

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
    let crate::refs::Ref::Buffer(b) = r else {
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

/// The element type a list helper's `T` names: 0 i32, 1 f32, 2 i64, 3 f64.
fn list_type(t: u8) -> crate::refs::ValueType {
    use crate::refs::ValueType;
    match t {
        0 => ValueType::I32,
        1 => ValueType::F32,
        2 => ValueType::I64,
        _ => ValueType::F64,
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
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let env = unsafe { &*env };
    // SAFETY: per the contract, `env` is valid and `reg` in range.
    let r = unsafe { &*env.refs.add(reg as usize) };
    r.list_fast()
        .is_some_and(|l| l.set_bits(index, list_type(T), bits)) as u32
}
