//! The function ABI: calling-convention strings and reflection attributes.
//!
//! A calling convention is `0` (the version), the argument types, `_`, and
//! the result types, one character per value: `i` i32, `I` i64, `f` f32,
//! `F` f64, `r` ref, `v` nothing. `C...D` encloses a variadic span: the types
//! inside repeat a caller-chosen number of times (`0CiDi_i` takes any number
//! of i32s, then one i32).

use std::fmt;

/// The type of one value in a calling convention.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `i`
    I32,
    /// `I`
    I64,
    /// `f`
    F32,
    /// `F`
    F64,
    /// `r`
    Ref,
    /// `C...D`: a span of these kinds, repeated N times at the call.
    Span(Vec<ValueKind>),
}

impl ValueKind {
    fn code(&self, out: &mut String) {
        match self {
            ValueKind::I32 => out.push('i'),
            ValueKind::I64 => out.push('I'),
            ValueKind::F32 => out.push('f'),
            ValueKind::F64 => out.push('F'),
            ValueKind::Ref => out.push('r'),
            ValueKind::Span(inner) => {
                out.push('C');
                inner.iter().for_each(|k| k.code(out));
                out.push('D');
            }
        }
    }

    /// The name used in assembly and tool output (`i32`, `i64`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            ValueKind::I32 => "i32",
            ValueKind::I64 => "i64",
            ValueKind::F32 => "f32",
            ValueKind::F64 => "f64",
            ValueKind::Ref => "ref",
            ValueKind::Span(_) => "...",
        }
    }
}

/// A parsed calling convention.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CallingConvention {
    /// Argument kinds (spans included).
    pub args: Vec<ValueKind>,
    /// Result kinds.
    pub results: Vec<ValueKind>,
}

/// A malformed calling-convention string.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed calling convention {text:?}: {what}")]
pub struct CallingConventionError {
    /// The string.
    pub text: String,
    /// What is wrong.
    pub what: String,
}

fn parse_kinds(s: &str, text: &str) -> Result<Vec<ValueKind>, CallingConventionError> {
    let err = |what: String| CallingConventionError {
        text: text.to_string(),
        what,
    };
    if s == "v" {
        return Ok(Vec::new());
    }
    let mut stack: Vec<Vec<ValueKind>> = vec![Vec::new()];
    for c in s.chars() {
        let k = match c {
            'i' => ValueKind::I32,
            'I' => ValueKind::I64,
            'f' => ValueKind::F32,
            'F' => ValueKind::F64,
            'r' => ValueKind::Ref,
            'C' => {
                if stack.len() > 1 {
                    return Err(err("nested variadic spans are not supported".into()));
                }
                stack.push(Vec::new());
                continue;
            }
            'D' => {
                if stack.len() < 2 {
                    return Err(err("'D' without a matching 'C'".into()));
                }
                let span = stack.pop().unwrap_or_default();
                ValueKind::Span(span)
            }
            'v' => return Err(err("'v' must stand alone".into())),
            other => return Err(err(format!("unknown type character '{other}'"))),
        };
        if let Some(top) = stack.last_mut() {
            top.push(k);
        }
    }
    if stack.len() != 1 {
        return Err(err("unterminated variadic span (missing 'D')".into()));
    }
    Ok(stack.pop().unwrap_or_default())
}

impl CallingConvention {
    /// Parses `0<args>_<results>`.
    pub fn parse(text: &str) -> Result<CallingConvention, CallingConventionError> {
        let err = |what: &str| CallingConventionError {
            text: text.to_string(),
            what: what.to_string(),
        };
        let body = text
            .strip_prefix('0')
            .ok_or_else(|| err("must start with version '0'"))?;
        let (args, results) = body
            .split_once('_')
            .ok_or_else(|| err("missing '_' between arguments and results"))?;
        let results = parse_kinds(results, text)?;
        if results.iter().any(|k| matches!(k, ValueKind::Span(_))) {
            return Err(err("results cannot be variadic"));
        }
        Ok(CallingConvention {
            args: parse_kinds(args, text)?,
            results,
        })
    }

    /// Whether any argument is a variadic span.
    pub fn is_variadic(&self) -> bool {
        self.args.iter().any(|k| matches!(k, ValueKind::Span(_)))
    }
}

impl fmt::Display for CallingConvention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::from("0");
        if self.args.is_empty() {
            s.push('v');
        }
        self.args.iter().for_each(|k| k.code(&mut s));
        s.push('_');
        if self.results.is_empty() {
            s.push('v');
        }
        self.results.iter().for_each(|k| k.code(&mut s));
        f.write_str(&s)
    }
}

/// Reflection attributes of a function, decoded for display.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Reflection<'a> {
    /// `iree.abi.declaration`: the source-level declaration, if present.
    pub declaration: Option<&'a str>,
    /// Every other attribute, in order.
    pub others: Vec<(&'a str, &'a str)>,
}

impl<'a> Reflection<'a> {
    /// Sorts a function's attributes into known and other ones.
    pub fn from_attrs(attrs: &[(&'a str, &'a str)]) -> Reflection<'a> {
        let mut r = Reflection::default();
        for &(k, v) in attrs {
            if k == "iree.abi.declaration" {
                r.declaration = Some(v);
            } else {
                r.others.push((k, v));
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for s in ["0ii_i", "0v_v", "0r_r", "0CiDi_i", "0iIfFr_IF", "0v_i"] {
            let cc = CallingConvention::parse(s).unwrap();
            assert_eq!(cc.to_string(), s);
        }
        let v = CallingConvention::parse("0CiDi_i").unwrap();
        assert!(v.is_variadic());
        assert_eq!(
            v.args,
            vec![ValueKind::Span(vec![ValueKind::I32]), ValueKind::I32]
        );
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "", "ii_i", "0ii", "0x_i", "0Ci_i", "0D_i", "0i_CiD", "0vi_v", "0CCiDD_v",
        ] {
            assert!(CallingConvention::parse(s).is_err(), "{s}");
        }
    }
}
