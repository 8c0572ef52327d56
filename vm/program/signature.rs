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

/// In a variadic host call's argument plan ([`host_call_plan`]), the bit
/// that marks a span's element count (its low 16 bits), passed to the host
/// function as an `i32`; a word without it is the kind byte (`i I f F r`)
/// of a value read from the call's next argument register.
pub(crate) const PLAN_COUNT: u32 = 1 << 31;

/// The argument plan of a variadic import call with segment `sizes`: the
/// values a host function receives, in order: each span's element count
/// followed by its elements (spans nested in a span are flattened without a
/// count of their own; a plain argument's size is ignored, as IREE does).
/// Made once when the call is lowered, so a call reads its arguments in one
/// flat pass instead of walking the calling convention. `None` when the
/// sizes do not match the calling convention.
pub(super) fn host_call_plan(sig: &Signature, sizes: &[u16]) -> Option<Vec<u32>> {
    let cc = sig.cconv.as_ref()?;
    let params: Vec<&ValueKind> = cc.args.iter().filter(|k| **k != ValueKind::Void).collect();
    if params.len() != sizes.len() {
        return None;
    }
    let mut plan = Vec::new();
    let mut kinds = Vec::new();
    for (k, &n) in params.iter().zip(sizes) {
        kinds.clear();
        match k {
            ValueKind::Span(inner) => {
                plan.push(PLAN_COUNT | u32::from(n));
                flatten(inner, &mut kinds);
                for _ in 0..n {
                    plan.extend(kinds.iter().map(|&c| u32::from(c)));
                }
            }
            other => {
                flatten(std::slice::from_ref(*other), &mut kinds);
                plan.extend(kinds.iter().map(|&c| u32::from(c)));
            }
        }
    }
    Some(plan)
}

/// Expands a variadic calling convention by segment sizes: each argument
/// segment is one cconv argument; spans repeat `size` times.
pub(crate) fn expand_variadic(sig: &Signature, sizes: &[u16]) -> Option<Vec<u8>> {
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

/// Where a bytecode call puts one argument in its callee's windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgSlot {
    /// An `i`/`f` value, in i32 slot N.
    I32(u16),
    /// An `I`/`F` value, in i32 slots N and N+1 (N even).
    I64(u16),
    /// A ref, in ref register N.
    Ref(u16),
    /// Past the callee's register file: never read by its body, not passed.
    Dropped,
}

/// The argument placement of a function with argument `kinds` and
/// `n32` i32 / `nref` ref registers, as IREE's frames lay them out: each
/// bank from 0 in order, 64-bit values at the next even slot; an argument
/// that does not fit is dropped (the body never reads it). Made once per
/// function, so a call copies its arguments without walking the kinds.
pub(crate) fn arg_slots(kinds: &[u8], n32: u16, nref: u16) -> Box<[ArgSlot]> {
    let (n32, nref) = (usize::from(n32), usize::from(nref));
    let (mut s, mut r) = (0usize, 0usize);
    let slot = |at: usize, fits: bool, place: fn(u16) -> ArgSlot| match u16::try_from(at) {
        Ok(at) if fits => place(at),
        _ => ArgSlot::Dropped,
    };
    kinds
        .iter()
        .map(|&k| match k {
            b'r' => {
                r += 1;
                slot(r - 1, r <= nref, ArgSlot::Ref)
            }
            b'I' | b'F' => {
                s = s.div_ceil(2) * 2 + 2;
                slot(s - 2, s <= n32, ArgSlot::I64)
            }
            _ => {
                s += 1;
                slot(s - 1, s <= n32, ArgSlot::I32)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(cconv: &str, sizes: &[u16]) -> Option<Vec<u32>> {
        host_call_plan(&Signature::parse(cconv).unwrap(), sizes)
    }

    #[test]
    fn a_span_is_its_count_then_its_elements_and_a_plain_argument_ignores_its_size() {
        let (i, big_i, r) = (u32::from(b'i'), u32::from(b'I'), u32::from(b'r'));
        // hal.buffer_view.create's shape: r i i CI D; a size of 0xFFFF on a
        // plain argument (what iree-compile writes) changes nothing.
        assert_eq!(
            plan("0riiCID_r", &[0xFFFF, 1, 1, 3]),
            Some(vec![r, i, i, PLAN_COUNT | 3, big_i, big_i, big_i])
        );
        // An empty span is its count alone; a span of tuples repeats the tuple.
        assert_eq!(plan("0CiD_v", &[0]), Some(vec![PLAN_COUNT]));
        assert_eq!(
            plan("0CrID_v", &[2]),
            Some(vec![PLAN_COUNT | 2, r, big_i, r, big_i])
        );
    }

    #[test]
    fn sizes_that_do_not_match_the_calling_convention_have_no_plan() {
        assert_eq!(plan("0CiD_v", &[1, 2]), None);
        assert_eq!(plan("0ii_v", &[1]), None);
    }

    #[test]
    fn the_plan_reads_as_many_registers_as_the_verifier_expects() {
        let sig = Signature::parse("0rCrIID_v").unwrap();
        for n in [0u16, 1, 5] {
            let plan = host_call_plan(&sig, &[1, n]).unwrap();
            let reads = plan.iter().filter(|w| **w & PLAN_COUNT == 0).count();
            assert_eq!(reads, expand_variadic(&sig, &[1, n]).unwrap().len());
        }
    }

    #[test]
    fn arguments_are_placed_by_bank_with_64_bit_values_at_even_slots() {
        use ArgSlot::*;
        assert_eq!(
            &*arg_slots(b"iIrfFr", 8, 2),
            &[I32(0), I64(2), Ref(0), I32(4), I64(6), Ref(1)]
        );
    }

    #[test]
    fn arguments_past_the_register_file_are_dropped() {
        use ArgSlot::*;
        // Three i32 slots: the i64 would need slots 2 and 3, the ref bank is empty.
        assert_eq!(
            &*arg_slots(b"iiIri", 3, 0),
            &[I32(0), I32(1), Dropped, Dropped, Dropped]
        );
        assert_eq!(
            &*arg_slots(b"iiIi", 3, 0),
            &[I32(0), I32(1), Dropped, Dropped]
        );
    }
}
