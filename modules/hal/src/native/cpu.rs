//! What the host CPU can do, in the words IREE's kernels read: the first
//! processor-data word of the executable environment, and the answers to
//! `hal.cpu` device queries (by LLVM feature name).
//!
//! Bit positions are IREE's (`runtime/src/iree/schemas/cpu_feature_bits.inl`);
//! a feature counts only when the CPU has it and the OS saves the register
//! state it needs (what `cpuid` leaf 0xD reports as supported XCR0 bits).

/// x86-64 features: (bit in word 0, LLVM name).
pub const X86_64_FEATURES: &[(u32, &str)] = &[
    (0, "sse3"),
    (1, "ssse3"),
    (2, "sse4.1"),
    (3, "sse4.2"),
    (4, "sse4a"),
    (10, "avx"),
    (11, "fma"),
    (12, "fma4"),
    (13, "xop"),
    (14, "f16c"),
    (15, "avx2"),
    (20, "avx512f"),
    (21, "avx512cd"),
    (22, "avx512vl"),
    (23, "avx512dq"),
    (24, "avx512bw"),
    (25, "avx512ifma"),
    (26, "avx512vbmi"),
    (27, "avx512vpopcntdq"),
    (28, "avx512vnni"),
    (29, "avx512vbmi2"),
    (30, "avx512bitalg"),
    (31, "avx512bf16"),
    (32, "avx512fp16"),
    (50, "amx-tile"),
    (51, "amx-int8"),
    (52, "amx-bf16"),
];

/// The processor data words of this machine (zeros where irvm does not
/// know the architecture's encoding).
pub fn processor_data() -> [u64; super::abi::PROCESSOR_DATA_WORDS] {
    let mut data = [0u64; super::abi::PROCESSOR_DATA_WORDS];
    data[0] = word0();
    data
}

/// The value of CPU feature `llvm_name` (0 or 1); `None` for a name this
/// architecture does not know.
pub fn feature(llvm_name: &str) -> Option<i64> {
    let word = word0();
    X86_64_FEATURES
        .iter()
        .filter(|_| cfg!(target_arch = "x86_64"))
        .find(|(_, name)| *name == llvm_name)
        .map(|(bit, _)| ((word >> bit) & 1) as i64)
}

#[cfg(target_arch = "x86_64")]
fn word0() -> u64 {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    // Leaves above the maximum the CPU reports are not queried.
    let (max, max_ext) = (__cpuid(0).eax, __cpuid(0x8000_0000).eax);
    let leaf = |l: u32, sub: u32| {
        let top = if l >= 0x8000_0000 { max_ext } else { max };
        if l <= top {
            Some(__cpuid_count(l, sub))
        } else {
            None
        }
    };
    let zero = std::arch::x86_64::CpuidResult {
        eax: 0,
        ebx: 0,
        ecx: 0,
        edx: 0,
    };
    let l1 = leaf(1, 0).unwrap_or(zero);
    let l7 = leaf(7, 0).unwrap_or(zero);
    let l7_1 = leaf(7, 1).unwrap_or(zero);
    let ld = leaf(0xD, 0).unwrap_or(zero);
    let lx1 = leaf(0x8000_0001, 0).unwrap_or(zero);
    let mut out = 0u64;
    let mut copy = |bit: u32, reg: u32, mask: u32| {
        if reg & mask != 0 {
            out |= 1 << bit;
        }
    };
    copy(0, l1.ecx, 1 << 0);
    copy(1, l1.ecx, 1 << 9);
    copy(2, l1.ecx, 1 << 19);
    copy(3, l1.ecx, 1 << 20);
    copy(4, lx1.ecx, 1 << 6);
    if ld.eax & 0x7 == 0x7 {
        copy(10, l1.ecx, 1 << 28);
        copy(11, l1.ecx, 1 << 12);
        copy(12, lx1.ecx, 1 << 16);
        copy(13, lx1.ecx, 1 << 11);
        copy(14, l1.ecx, 1 << 29);
        copy(15, l7.ebx, 1 << 5);
    }
    if ld.eax & 0xE7 == 0xE7 {
        copy(20, l7.ebx, 1 << 16);
        copy(21, l7.ebx, 1 << 28);
        copy(22, l7.ebx, 1 << 31);
        copy(23, l7.ebx, 1 << 17);
        copy(24, l7.ebx, 1 << 30);
        copy(25, l7.ebx, 1 << 21);
        copy(26, l7.ecx, 1 << 1);
        copy(27, l7.ecx, 1 << 14);
        copy(28, l7.ecx, 1 << 11);
        copy(29, l7.ecx, 1 << 6);
        copy(30, l7.ecx, 1 << 12);
        copy(31, l7_1.eax, 1 << 5);
        copy(32, l7.edx, 1 << 23);
    }
    if ld.eax & 0x60000 == 0x60000 {
        copy(50, l7.edx, 1 << 24);
        copy(51, l7.edx, 1 << 25);
        copy(52, l7.edx, 1 << 22);
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
fn word0() -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn features_agree_with_the_standard_library() {
        // Every x86-64 CPU irvm runs on has SSE3 in practice; compare the
        // ones std can also detect.
        assert_eq!(
            feature("sse3"),
            Some(is_x86_feature_detected!("sse3") as i64)
        );
        assert_eq!(
            feature("sse4.2"),
            Some(is_x86_feature_detected!("sse4.2") as i64)
        );
        assert_eq!(
            feature("avx2"),
            Some(is_x86_feature_detected!("avx2") as i64)
        );
        assert_eq!(
            feature("avx512f"),
            Some(is_x86_feature_detected!("avx512f") as i64)
        );
        assert_eq!(feature("fma"), Some(is_x86_feature_detected!("fma") as i64));
        assert_eq!(feature("no-such-feature"), None);
        assert_eq!(processor_data()[1..], [0; 7]);
    }
}
