//! VM feature bits a module or function may require.

use bitflags::bitflags;

bitflags! {
    /// Optional VM capabilities, as stored in `requirements` fields.
    ///
    /// Unknown bits are kept (`from_bits_retain`) so they can be reported.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct FeatureBits: u32 {
        /// Single-precision floating point instructions.
        const EXT_F32 = 1 << 0;
        /// Double-precision floating point instructions.
        const EXT_F64 = 1 << 1;
        /// Cooperative yield points.
        const YIELD = 1 << 2;
        /// Exception-style unwinding.
        const UNWIND = 1 << 3;
    }
}

/// The features this runtime can execute.
pub const SUPPORTED_FEATURES: FeatureBits = FeatureBits::all();

impl FeatureBits {
    /// Names of the set bits, e.g. `["EXT_F64", "bit 7"]`; unknown bits are
    /// named by their position.
    pub fn names(self) -> Vec<String> {
        (0..32)
            .filter(|bit| self.bits() & (1u32 << bit) != 0)
            .map(|bit| {
                let flag = FeatureBits::from_bits_retain(1 << bit);
                match flag.iter_names().next() {
                    Some((name, _)) => name.to_string(),
                    None => format!("bit {bit}"),
                }
            })
            .collect()
    }
}

impl std::fmt::Display for FeatureBits {
    /// `EXT_F32 | YIELD`, or `none` when empty.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(" | "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_known_and_unknown_bits() {
        let bits = FeatureBits::EXT_F64 | FeatureBits::from_bits_retain(1 << 7);
        assert_eq!(
            bits.names(),
            vec!["EXT_F64".to_string(), "bit 7".to_string()]
        );
        assert_eq!(bits.to_string(), "EXT_F64 | bit 7");
        assert_eq!(FeatureBits::empty().to_string(), "none");
    }
}
