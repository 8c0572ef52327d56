//! Runtime failures: IREE status codes and [`Trap`], the error every
//! execution path returns, carrying where in the bytecode it happened.

use std::fmt;

/// IREE's status codes (the same numbering as `iree_status_code_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum StatusCode {
    /// Success.
    Ok = 0,
    /// The operation was cancelled.
    Cancelled = 1,
    /// Unknown error.
    Unknown = 2,
    /// A caller-supplied argument is invalid.
    InvalidArgument = 3,
    /// A deadline passed.
    DeadlineExceeded = 4,
    /// Something was not found.
    NotFound = 5,
    /// Something already exists.
    AlreadyExists = 6,
    /// Not permitted.
    PermissionDenied = 7,
    /// Out of a resource (memory, stack).
    ResourceExhausted = 8,
    /// The system is not in the required state.
    FailedPrecondition = 9,
    /// The operation was aborted.
    Aborted = 10,
    /// A value is outside its valid range.
    OutOfRange = 11,
    /// Not implemented.
    Unimplemented = 12,
    /// An internal invariant broke.
    Internal = 13,
    /// Unavailable.
    Unavailable = 14,
    /// Data was lost or corrupted.
    DataLoss = 15,
    /// Not authenticated.
    Unauthenticated = 16,
    /// The operation was deferred (a coroutine yielded).
    Deferred = 17,
    /// Incompatible.
    Incompatible = 18,
}

impl StatusCode {
    /// The code for a raw number; unknown numbers map to [`StatusCode::Unknown`].
    pub fn from_u32(v: u32) -> StatusCode {
        use StatusCode::*;
        const ALL: [StatusCode; 19] = [
            Ok,
            Cancelled,
            Unknown,
            InvalidArgument,
            DeadlineExceeded,
            NotFound,
            AlreadyExists,
            PermissionDenied,
            ResourceExhausted,
            FailedPrecondition,
            Aborted,
            OutOfRange,
            Unimplemented,
            Internal,
            Unavailable,
            DataLoss,
            Unauthenticated,
            Deferred,
            Incompatible,
        ];
        ALL.get(v as usize).copied().unwrap_or(Unknown)
    }

    /// IREE's upper-case name (`INVALID_ARGUMENT`).
    pub fn name(self) -> &'static str {
        use StatusCode::*;
        match self {
            Ok => "OK",
            Cancelled => "CANCELLED",
            Unknown => "UNKNOWN",
            InvalidArgument => "INVALID_ARGUMENT",
            DeadlineExceeded => "DEADLINE_EXCEEDED",
            NotFound => "NOT_FOUND",
            AlreadyExists => "ALREADY_EXISTS",
            PermissionDenied => "PERMISSION_DENIED",
            ResourceExhausted => "RESOURCE_EXHAUSTED",
            FailedPrecondition => "FAILED_PRECONDITION",
            Aborted => "ABORTED",
            OutOfRange => "OUT_OF_RANGE",
            Unimplemented => "UNIMPLEMENTED",
            Internal => "INTERNAL",
            Unavailable => "UNAVAILABLE",
            DataLoss => "DATA_LOSS",
            Unauthenticated => "UNAUTHENTICATED",
            Deferred => "DEFERRED",
            Incompatible => "INCOMPATIBLE",
        }
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One frame of a trap's backtrace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrapFrame {
    /// Module name.
    pub module: String,
    /// Function name (export name when exported, else `ordinal N`).
    pub function: String,
    /// Internal function ordinal (`None` for host functions).
    pub ordinal: Option<u32>,
    /// Bytecode offset of the failing or calling instruction, relative to the
    /// function's first byte.
    pub offset: Option<u32>,
    /// Source location from the module's debug database, when known, as
    /// MLIR prints locations (`callsite("a.mlir":2:8 at "a.mlir":8:8)`).
    pub location: Option<String>,
    /// The same location as source positions, innermost first: where the
    /// instruction is, then where each enclosing (inlined) call was made.
    pub source: Vec<crate::loader::SourcePosition>,
}

impl fmt::Display for TrapFrame {
    /// `module.function+0xOFFSET file:line:col`, then one
    /// `called from file:line:col` line per enclosing inlined call.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.module, self.function)?;
        if let Some(off) = self.offset {
            write!(f, "+0x{off:08X}")?;
        }
        if let Some((first, callers)) = self.source.split_first() {
            write!(f, " {first}")?;
            for c in callers {
                write!(f, "\n        called from {c}")?;
            }
        } else if let Some(loc) = &self.location {
            write!(f, " {loc}")?;
        }
        Ok(())
    }
}

/// A runtime failure: a status code, a message, and the VM frames active
/// when it happened (innermost first).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Trap {
    /// The status code (`vm.fail` passes its own).
    pub code: StatusCode,
    /// What went wrong.
    pub message: String,
    /// Active frames, innermost first.
    pub backtrace: Vec<TrapFrame>,
}

impl Trap {
    /// A trap with no location yet (the interpreter adds frames).
    pub fn new(code: StatusCode, message: impl Into<String>) -> Trap {
        Trap {
            code,
            message: message.into(),
            backtrace: Vec::new(),
        }
    }
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.code, self.message)?;
        // Runs of identical frames (deep recursion) print as one line, and
        // at most MAX_LINES lines print: the innermost and the outermost.
        const MAX_LINES: usize = 24;
        let mut runs: Vec<(usize, usize)> = Vec::new(); // (first index, count)
        for (i, fr) in self.backtrace.iter().enumerate() {
            match runs.last_mut() {
                Some((first, n)) if self.backtrace[*first] == *fr => *n += 1,
                _ => runs.push((i, 1)),
            }
        }
        let line = |f: &mut fmt::Formatter<'_>, (first, n): (usize, usize)| {
            let fr = &self.backtrace[first];
            if n == 1 {
                write!(f, "\n  [{first}] {fr}")
            } else {
                write!(f, "\n  [{first}..{}] {fr} (x{n})", first + n - 1)
            }
        };
        if runs.len() <= MAX_LINES {
            for r in runs {
                line(f, r)?;
            }
        } else {
            let (head, tail) = (MAX_LINES - 4, 4);
            for &r in &runs[..head] {
                line(f, r)?;
            }
            let hidden: usize = runs[head..runs.len() - tail].iter().map(|r| r.1).sum();
            write!(f, "\n  ... {hidden} frames omitted ...")?;
            for &r in &runs[runs.len() - tail..] {
                line(f, r)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(function: &str, offset: u32) -> TrapFrame {
        TrapFrame {
            module: "m".into(),
            function: function.into(),
            ordinal: Some(0),
            offset: Some(offset),
            location: None,
            source: Vec::new(),
        }
    }

    #[test]
    fn deep_recursion_prints_compactly() {
        let mut t = Trap::new(StatusCode::ResourceExhausted, "VM stack overflow");
        t.backtrace.push(frame("leaf", 4));
        t.backtrace.extend((0..16000).map(|_| frame("fib", 0x33)));
        t.backtrace.push(frame("main", 8));
        let text = t.to_string();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(
            text.contains("[1..16000] m.fib+0x00000033 (x16000)"),
            "{text}"
        );
        assert!(text.contains("[16001] m.main+0x00000008"), "{text}");
    }

    #[test]
    fn many_distinct_frames_are_elided_in_the_middle() {
        let mut t = Trap::new(StatusCode::Internal, "x");
        t.backtrace.extend((0..100).map(|k| frame("f", k)));
        let text = t.to_string();
        assert_eq!(text.lines().count(), 1 + 24 + 1, "{text}");
        assert!(text.contains("... 76 frames omitted ..."), "{text}");
        assert!(text.contains("[0] m.f+0x00000000"));
        assert!(text.contains("[99] m.f+0x00000063"));
    }
}
