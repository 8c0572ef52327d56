//! The runtime functions compiled code calls (by address): buffer element
//! access through the same lease-checked paths the interpreter uses, and
//! ref block arguments. A helper that cannot complete sets
//! [`JitEnv::fault`] and changes nothing; compiled code then leaves before
//! the instruction and the interpreter executes it (and traps).

use super::JitEnv;

/// Loads the `N`-byte element `index` of the buffer in ref register `reg`,
/// zero-extended.
///
/// # Safety
/// `env` is the live environment of the running compiled code, whose
/// `refs` window holds ref register `reg` (verified in range).
pub(super) unsafe extern "C" fn buffer_load<const N: usize>(
    env: *mut JitEnv,
    reg: u32,
    index: u64,
) -> u64 {
    // SAFETY: per the contract, `env` is valid and exclusively ours.
    let env = unsafe { &mut *env };
    // SAFETY: `reg` indexes the frame's ref window (verifier).
    let r = unsafe { &*env.refs.add(reg as usize) };
    let loaded = r
        .buffer("source_buffer")
        .and_then(|b| b.load_as::<N>(env.token, index));
    match loaded {
        Ok(bytes) => {
            let mut v = [0u8; 8];
            v[..N].copy_from_slice(&bytes);
            u64::from_le_bytes(v)
        }
        Err(_) => {
            env.fault = 1;
            0
        }
    }
}

/// Stores the low `N` bytes of `value` at element `index` of the buffer in
/// ref register `reg`; nonzero on success.
///
/// # Safety
/// As [`buffer_load`].
pub(super) unsafe extern "C" fn buffer_store<const N: usize>(
    env: *mut JitEnv,
    reg: u32,
    index: u64,
    value: u64,
) -> u32 {
    // SAFETY: as in `buffer_load`.
    let env = unsafe { &mut *env };
    // SAFETY: as in `buffer_load`.
    let r = unsafe { &*env.refs.add(reg as usize) };
    let mut bytes = [0u8; N];
    bytes.copy_from_slice(&value.to_le_bytes()[..N]);
    let stored = r
        .buffer("target_buffer")
        .and_then(|b| b.store_as::<N>(env.token, index, bytes));
    stored.is_ok() as u32
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

/// `vm.list.get/set` of i32, i64, f32 and f64 through the interpreter's own
/// fast path (`exec::list_element`), on the register window in memory
/// (compiled code writes every register through, so it is current);
/// nonzero when done. Zero changes nothing: the interpreter then runs the
/// instruction (conversions, bad indices, null lists).
///
/// # Safety
/// `inst` is an instruction of the function whose frame's windows are
/// `regs` and `env.refs` (its registers verified in range for them).
pub(super) unsafe extern "C" fn list_element(
    env: *mut JitEnv,
    inst: *const crate::program::Inst,
    regs: *mut u32,
) -> u32 {
    // SAFETY: per the contract.
    unsafe { crate::exec::list_element(&*inst, regs, (*env).refs) as u32 }
}
