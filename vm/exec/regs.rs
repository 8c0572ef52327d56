//! Register access for the interpreter's handlers, shared by the hot loop
//! ([`super::dispatch`]) and the slow path ([`super::slow`]).
//!
//! `register_macros!($, regs, refs)` defines, in the caller's scope, the
//! macros that read and write the current frame's registers through the raw
//! window pointers `regs: *mut u32` and `refs: *mut Ref` (the caller's
//! locals of those names): `ri!`, `wi!`, `rl!`, `wl!`, `rref!`.
//! `value_macros!($, regs, refs)` adds the float and reference ones (`rf!`,
//! `wd!`, `wref!`, `take_ref!`, ...), and `shape_macros!($)` the small
//! "shape" macros of the arithmetic handlers (`bin_i32!`, `un_f64!`,
//! `cmp_f32!`, ...). Each caller expands only the sets it uses, so no
//! macro is defined unused.
//!
//! SAFETY (all register accesses): the frame's windows
//! `i32s[i32_base..i32_base + i32_count]` and `refs[ref_base..ref_base +
//! ref_count]` exist while the frame is on the stack, and the verifier
//! (`program::compile`) proved every register operand of the function
//! indexes inside them (i64/f64: both slots). The callers refresh the base
//! pointers after every operation that may reallocate the stacks.

/// Defines the register access macros over the caller's `regs`/`refs`
/// locals; the first argument must be a literal `$`.
// Not rustfmt: it indents the inner macros' rules one level deeper on
// every run.
#[rustfmt::skip]
macro_rules! register_macros {
    ($d:tt, $regs:ident, $refs:ident) => {
        macro_rules! ri {
            ($d r:expr) => {
                // SAFETY: see `exec::regs`; register ordinal verified in range.
                unsafe { *$regs.add($d r as usize) as i32 }
            };
        }
        macro_rules! wi {
            ($d r:expr, $d v:expr) => {{
                let v = $d v as u32;
                // SAFETY: see `exec::regs`.
                unsafe { *$regs.add($d r as usize) = v }
            }};
        }
        macro_rules! rl {
            ($d r:expr) => {
                // SAFETY: see `exec::regs`; both slots of the pair are in range.
                unsafe { ($regs.add($d r as usize) as *const i64).read_unaligned() }
            };
        }
        macro_rules! wl {
            ($d r:expr, $d v:expr) => {{
                let v: i64 = $d v;
                // SAFETY: see `exec::regs`.
                unsafe { ($regs.add($d r as usize) as *mut i64).write_unaligned(v) }
            }};
        }
        macro_rules! rref {
            ($d r:expr) => {
                // SAFETY: see `exec::regs`; ref ordinal verified in range.
                unsafe { &*$refs.add(($d r as u16 & REF_INDEX_MASK) as usize) }
            };
        }
    };
}

/// Defines the float and reference macros over the caller's `regs`/`refs`
/// locals, after `register_macros!`; the first argument must be a literal
/// `$`.
macro_rules! value_macros {
    ($d:tt, $regs:ident, $refs:ident) => {
        macro_rules! rf {
            ($d r:expr) => {
                f32::from_bits(ri!($d r) as u32)
            };
        }
        macro_rules! wf {
            ($d r:expr, $d v:expr) => {
                wi!($d r, f32::to_bits($d v))
            };
        }
        macro_rules! rd {
            ($d r:expr) => {
                f64::from_bits(rl!($d r) as u64)
            };
        }
        macro_rules! wd {
            ($d r:expr, $d v:expr) => {
                wl!($d r, f64::to_bits($d v) as i64)
            };
        }
        macro_rules! wref {
            ($d r:expr, $d v:expr) => {{
                let v: Ref = $d v;
                // SAFETY: see `exec::regs`. No other reference into the ref
                // window is live.
                unsafe { *$refs.add(($d r as u16 & REF_INDEX_MASK) as usize) = v }
            }};
        }
        // Retains, or moves when the operand carries the move bit.
        macro_rules! take_ref {
            ($d r:expr) => {{
                let r = $d r as u16;
                if r & REF_MOVE_BIT != 0 {
                    // SAFETY: see `exec::regs`.
                    unsafe { std::mem::take(&mut *$refs.add((r & REF_INDEX_MASK) as usize)) }
                } else {
                    rref!(r).clone()
                }
            }};
        }
    };
}

/// Defines the "shape" macros of the arithmetic handlers, after
/// `register_macros!` and `value_macros!`; the argument must be a literal
/// `$`.
// Not rustfmt: it indents the inner macros' rules one level deeper on
// every run.
#[rustfmt::skip]
macro_rules! shape_macros {
    ($d:tt) => {
        macro_rules! bin_i32 {
            ($d i:ident, |$d x:ident, $d y:ident| $d body:expr) => {{
                let $d x = ri!($d i.a);
                let $d y = ri!($d i.b);
                wi!($d i.c, $d body);
            }};
        }
        macro_rules! bin_i64 {
            ($d i:ident, |$d x:ident, $d y:ident| $d body:expr) => {{
                let $d x = rl!($d i.a);
                let $d y = rl!($d i.b);
                wl!($d i.c, $d body);
            }};
        }
        macro_rules! un_i32 {
            ($d i:ident, |$d x:ident| $d body:expr) => {{
                let $d x = ri!($d i.a);
                wi!($d i.b, $d body);
            }};
        }
        macro_rules! un_i64 {
            ($d i:ident, |$d x:ident| $d body:expr) => {{
                let $d x = rl!($d i.a);
                wl!($d i.b, $d body);
            }};
        }
        macro_rules! bin_f32 {
            ($d i:ident, |$d x:ident, $d y:ident| $d body:expr) => {{
                let $d x = rf!($d i.a);
                let $d y = rf!($d i.b);
                wf!($d i.c, $d body);
            }};
        }
        macro_rules! un_f32 {
            ($d i:ident, |$d x:ident| $d body:expr) => {{
                let $d x = rf!($d i.a);
                wf!($d i.b, $d body);
            }};
        }
        macro_rules! bin_f64 {
            ($d i:ident, |$d x:ident, $d y:ident| $d body:expr) => {{
                let $d x = rd!($d i.a);
                let $d y = rd!($d i.b);
                wd!($d i.c, $d body);
            }};
        }
        macro_rules! un_f64 {
            ($d i:ident, |$d x:ident| $d body:expr) => {{
                let $d x = rd!($d i.a);
                wd!($d i.b, $d body);
            }};
        }
        macro_rules! cmp_f32 {
            ($d i:ident, |$d x:ident, $d y:ident| $d body:expr) => {{
                let $d x = rf!($d i.a);
                let $d y = rf!($d i.b);
                wi!($d i.c, ($d body) as i32);
            }};
        }
        macro_rules! cmp_f64 {
            ($d i:ident, |$d x:ident, $d y:ident| $d body:expr) => {{
                let $d x = rd!($d i.a);
                let $d y = rd!($d i.b);
                wi!($d i.c, ($d body) as i32);
            }};
        }
    };
}
