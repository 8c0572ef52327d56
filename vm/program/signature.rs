//! Flattened calling conventions: a function's argument and result kinds as
//! one byte per value, what the verifier checks call sites against and what
//! calls marshal by.

use crate::loader::{CallingConvention, ValueKind};

/// A flattened calling convention: one kind byte per value (`i I f F r`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Signature {
    pub args: Vec<u8>,
    pub results: Vec<u8>,
    /// Argument spans for variadic imports: (start, len) into `args` of the
    /// span's kinds, in order, for each `C...D`.
    pub variadic: bool,
    /// Unflattened form (for variadic imports).
    pub cconv: Option<CallingConvention>,
}

/// Appends the kind bytes of `kinds`, spans expanded once, voids dropped.
fn flatten(kinds: &[ValueKind], out: &mut Vec<u8>) {
    for k in kinds {
        match k {
            ValueKind::I32 => out.push(b'i'),
            ValueKind::I64 => out.push(b'I'),
            ValueKind::F32 => out.push(b'f'),
            ValueKind::F64 => out.push(b'F'),
            ValueKind::Ref => out.push(b'r'),
            ValueKind::Void => {}
            ValueKind::Span(inner) => flatten(inner, out),
        }
    }
}

impl Signature {
    /// Parses a calling convention string.
    pub fn parse(text: &str) -> Result<Signature, String> {
        let cc = CallingConvention::parse(text).map_err(|e| e.to_string())?;
        let mut args = Vec::new();
        let mut results = Vec::new();
        flatten(&cc.args, &mut args);
        flatten(&cc.results, &mut results);
        Ok(Signature {
            args,
            results,
            variadic: cc.is_variadic(),
            cconv: Some(cc),
        })
    }

    /// The `0..._...` text of the flattened signature.
    pub fn text(&self) -> String {
        if let Some(cc) = &self.cconv {
            return cc.to_string();
        }
        let s = |v: &[u8]| {
            if v.is_empty() {
                "v".to_string()
            } else {
                String::from_utf8_lossy(v).into_owned()
            }
        };
        format!("0{}_{}", s(&self.args), s(&self.results))
    }
}

/// Expands a variadic calling convention by segment sizes: each argument
/// segment is one cconv argument; spans repeat `size` times.
pub(super) fn expand_variadic(sig: &Signature, sizes: &[u16]) -> Option<Vec<u8>> {
    let cc = sig.cconv.as_ref()?;
    let args: Vec<&ValueKind> = cc.args.iter().filter(|k| **k != ValueKind::Void).collect();
    if args.len() != sizes.len() {
        return None;
    }
    let mut out = Vec::new();
    for (k, &n) in args.iter().zip(sizes) {
        match k {
            ValueKind::Span(inner) => {
                let mut one = Vec::new();
                flatten(inner, &mut one);
                for _ in 0..n {
                    out.extend_from_slice(&one);
                }
            }
            other => {
                // A plain argument's segment size is ignored, as IREE does
                // (iree-compile writes 0xFFFF there).
                let _ = n;
                flatten(std::slice::from_ref(*other), &mut out);
            }
        }
    }
    Some(out)
}
