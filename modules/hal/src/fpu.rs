//! Denormal flushing during dispatches. IREE's CPU executables run with
//! the FPU set to flush denormal results to zero and treat denormal inputs
//! as zero (`IREE_FPU_STATE_FLAG_FLUSH_DENORMALS_TO_ZERO`), so a softmax
//! over `[0 0 0 100]` prints `0`, not `3.78351E-44`. irvm does the same for
//! the duration of a dispatch (x86-64: MXCSR's FTZ and DAZ bits; elsewhere
//! nothing changes yet). The inline HAL's dispatches (`hal_loader`,
//! `--iree-execution-model=inline-dynamic`) are the exception: IREE issues
//! them without touching the FPU state, so `3xf32=1e-10` times `1e-30`
//! prints `9.99995E-41` there; [`keeping_denormals`] runs them so.

use std::cell::Cell;

thread_local! {
    /// Set while this thread runs dispatches that keep denormals.
    static KEEP_DENORMALS: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the dispatches it makes on this thread leaving the FPU's
/// denormal mode as it is (the inline HAL's, which run on the calling
/// thread).
pub fn keeping_denormals<R>(f: impl FnOnce() -> R) -> R {
    /// Puts the previous setting back, also when `f` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            KEEP_DENORMALS.with(|k| k.set(self.0));
        }
    }
    let _restore = Restore(KEEP_DENORMALS.with(|k| k.replace(true)));
    f()
}

/// Restores the FPU control state it replaced when dropped.
pub struct FlushDenormals {
    #[cfg(target_arch = "x86_64")]
    saved: u32,
}

#[cfg(target_arch = "x86_64")]
const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);

impl FlushDenormals {
    /// Turns denormal flushing on for the current thread (unless it runs
    /// inside [`keeping_denormals`]).
    pub fn begin() -> FlushDenormals {
        #[cfg(target_arch = "x86_64")]
        {
            let saved = read_mxcsr();
            if !KEEP_DENORMALS.with(Cell::get) {
                write_mxcsr(saved | FTZ_DAZ);
            }
            FlushDenormals { saved }
        }
        #[cfg(not(target_arch = "x86_64"))]
        FlushDenormals {}
    }
}

impl Drop for FlushDenormals {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        write_mxcsr(self.saved);
    }
}

#[cfg(target_arch = "x86_64")]
fn read_mxcsr() -> u32 {
    let mut value: u32 = 0;
    // SAFETY: `stmxcsr` stores the 4-byte MXCSR register to the address of
    // `value`, a live, writable, 4-byte-aligned local; it has no other
    // effect. SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut value, options(nostack, preserves_flags));
    }
    value
}

#[cfg(target_arch = "x86_64")]
fn write_mxcsr(value: u32) {
    // SAFETY: `ldmxcsr` loads MXCSR from the address of `value`, a live
    // 4-byte local. The values written are the saved register, or it with
    // only the FTZ/DAZ mode bits added: no reserved bit is set (which would
    // fault) and no exception is unmasked.
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &value, options(nostack, preserves_flags));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denormals_flush_only_inside() {
        let tiny = std::hint::black_box(1.0e-38f32);
        let scaled = |x: f32| std::hint::black_box(x) * std::hint::black_box(0.001f32);
        assert!(scaled(tiny) != 0.0);
        {
            let _flush = FlushDenormals::begin();
            if cfg!(target_arch = "x86_64") {
                assert_eq!(scaled(tiny), 0.0);
            }
        }
        assert!(scaled(tiny) != 0.0);
    }

    #[test]
    fn dispatches_keeping_denormals_do_not_flush() {
        let tiny = std::hint::black_box(1.0e-38f32);
        let scaled = |x: f32| std::hint::black_box(x) * std::hint::black_box(0.001f32);
        keeping_denormals(|| {
            let _flush = FlushDenormals::begin();
            assert!(scaled(tiny) != 0.0);
        });
        // Outside, flushing is back.
        let _flush = FlushDenormals::begin();
        if cfg!(target_arch = "x86_64") {
            assert_eq!(scaled(tiny), 0.0);
        }
    }
}
