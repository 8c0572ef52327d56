//! Calling conventions and ABI reflection attributes.
//!
//! A calling convention string is `0` (version) + argument kinds + `_` +
//! result kinds, e.g. `0ii_i`, `0v_v`, `0r_r`. A variadic span `C...D` marks
//! a group of kinds repeated a caller-chosen number of times: `0CiDi_i`.

use std::fmt;

/// Kind of one value in a calling convention.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `i`: 32-bit integer.
    I32,
    /// `I`: 64-bit integer.
    I64,
    /// `f`: 32-bit float.
    F32,
    /// `F`: 64-bit float.
    F64,
    /// `r`: reference.
    Ref,
    /// `v`: no value (an empty list is spelled `v`).
    Void,
    /// `C...D`: the inner kinds, repeated N times at call time.
    Span(Vec<ValueKind>),
}

impl ValueKind {
    fn from_char(c: char) -> Option<ValueKind> {
        Some(match c {
            'i' => ValueKind::I32,
            'I' => ValueKind::I64,
            'f' => ValueKind::F32,
            'F' => ValueKind::F64,
            'r' => ValueKind::Ref,
            'v' => ValueKind::Void,
            _ => return None,
        })
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueKind::I32 => f.write_str("i"),
            ValueKind::I64 => f.write_str("I"),
            ValueKind::F32 => f.write_str("f"),
            ValueKind::F64 => f.write_str("F"),
            ValueKind::Ref => f.write_str("r"),
            ValueKind::Void => f.write_str("v"),
            ValueKind::Span(inner) => {
                f.write_str("C")?;
                inner.iter().try_for_each(|k| k.fmt(f))?;
                f.write_str("D")
            }
        }
    }
}

/// A parsed calling convention; `Display` gives back the original string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallingConvention {
    /// Argument kinds (may contain one or more [`ValueKind::Span`]).
    pub args: Vec<ValueKind>,
    /// Result kinds.
    pub results: Vec<ValueKind>,
}

/// Why a calling convention string is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AbiError {
    /// The string is empty.
    #[error("empty calling convention")]
    Empty,
    /// The leading version character is not `0`.
    #[error("unsupported calling convention version {found:?} (expected '0')")]
    UnsupportedVersion {
        /// The first character.
        found: char,
    },
    /// There is no `_` between arguments and results.
    #[error("calling convention {text:?} has no '_' between arguments and results")]
    MissingSeparator {
        /// The whole string.
        text: String,
    },
    /// A character is not a value kind.
    #[error("unknown value kind {found:?} at byte {at}")]
    UnknownKind {
        /// The character.
        found: char,
        /// Byte offset in the string.
        at: usize,
    },
    /// A `C` span is never closed.
    #[error("span opened at byte {at} is not closed with 'D'")]
    UnterminatedSpan {
        /// Byte offset of the `C`.
        at: usize,
    },
    /// A `D` closes no span.
    #[error("'D' at byte {at} closes no span")]
    UnmatchedSpanEnd {
        /// Byte offset of the `D`.
        at: usize,
    },
    /// A span opens inside another span.
    #[error("nested span at byte {at}")]
    NestedSpan {
        /// Byte offset of the inner `C`.
        at: usize,
    },
}

impl CallingConvention {
    /// Parses `0<args>_<results>`.
    pub fn parse(text: &str) -> Result<CallingConvention, AbiError> {
        let mut chars = text.char_indices();
        match chars.next() {
            None => return Err(AbiError::Empty),
            Some((_, '0')) => {}
            Some((_, found)) => return Err(AbiError::UnsupportedVersion { found }),
        }
        let body = &text[1..];
        let sep = body.find('_').ok_or_else(|| AbiError::MissingSeparator {
            text: text.to_string(),
        })?;
        let args = parse_kinds(&body[..sep], 1)?;
        let results = parse_kinds(&body[sep + 1..], sep + 2)?;
        Ok(CallingConvention { args, results })
    }

    /// Whether any argument is a variadic span.
    pub fn is_variadic(&self) -> bool {
        self.args.iter().any(|k| matches!(k, ValueKind::Span(_)))
    }
}

impl std::str::FromStr for CallingConvention {
    type Err = AbiError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CallingConvention::parse(s)
    }
}

impl fmt::Display for CallingConvention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0")?;
        self.args.iter().try_for_each(|k| k.fmt(f))?;
        f.write_str("_")?;
        self.results.iter().try_for_each(|k| k.fmt(f))
    }
}

/// Parses kinds in `text`, which starts at byte `base` of the whole string.
fn parse_kinds(text: &str, base: usize) -> Result<Vec<ValueKind>, AbiError> {
    let mut out = Vec::new();
    let mut span: Option<(usize, Vec<ValueKind>)> = None;
    for (i, c) in text.char_indices() {
        let at = base + i;
        match c {
            'C' if span.is_some() => return Err(AbiError::NestedSpan { at }),
            'C' => span = Some((at, Vec::new())),
            'D' => match span.take() {
                Some((_, inner)) => out.push(ValueKind::Span(inner)),
                None => return Err(AbiError::UnmatchedSpanEnd { at }),
            },
            _ => {
                let kind = ValueKind::from_char(c).ok_or(AbiError::UnknownKind { found: c, at })?;
                match &mut span {
                    Some((_, inner)) => inner.push(kind),
                    None => out.push(kind),
                }
            }
        }
    }
    if let Some((at, _)) = span {
        return Err(AbiError::UnterminatedSpan { at });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Reflection attributes.

/// A readable rendering of a function reflection attribute, or `None` for
/// keys this module does not know.
///
/// Best effort: `iree.abi.declaration` is already readable and is returned
/// as-is; `fv`/`sipv` become `raw ABI v1`/`SIP ABI v1`; the mangled `f`
/// (raw function signature) and `sip` (structured index path) values are
/// decoded into `(buffer<4x?xf32>, ref) -> (buffer<f32>)` and
/// `{"a": %0, "b": [%1]} -> %0` forms. Values that do not follow the
/// grammar are shown as `<undecodable: VALUE>`.
pub fn describe_attr(key: &str, value: &str) -> Option<String> {
    Some(match key {
        "iree.abi.declaration" => value.to_string(),
        "fv" => format!("raw ABI v{value}"),
        "sipv" => format!("SIP ABI v{value}"),
        "f" => decode_raw_signature(value).unwrap_or_else(|| undecodable(value)),
        "sip" => decode_sip_signature(value).unwrap_or_else(|| undecodable(value)),
        _ => return None,
    })
}

fn undecodable(value: &str) -> String {
    format!("<undecodable: {value}>")
}

/// One token of the signature mangling: a tag with an integer or a
/// length-prefixed span.
#[derive(Debug)]
enum Token<'a> {
    Int(u8, i64),
    Span(u8, &'a [u8]),
}

/// Tags followed by `length!bytes`; all others are followed by an integer.
fn is_span_tag(tag: u8) -> bool {
    matches!(tag, b'I' | b'R' | b'B' | b'O' | b'U' | b'S' | b'D' | b'K')
}

fn tokenize(mut input: &[u8]) -> Option<Vec<Token<'_>>> {
    let mut out = Vec::new();
    while let Some((&tag, rest)) = input.split_first() {
        let digits = rest
            .iter()
            .enumerate()
            .take_while(|&(i, &b)| b.is_ascii_digit() || (i == 0 && b == b'-'))
            .count();
        if digits == 0 {
            return None;
        }
        let number: i64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
        let rest = &rest[digits..];
        if is_span_tag(tag) {
            // `length` counts the '!' plus the body.
            let (&bang, body) = rest.split_first()?;
            let len = usize::try_from(number).ok()?.checked_sub(1)?;
            if bang != b'!' || body.len() < len {
                return None;
            }
            out.push(Token::Span(tag, &body[..len]));
            input = &body[len..];
        } else {
            out.push(Token::Int(tag, number));
            input = rest;
        }
    }
    Some(out)
}

/// Finds the `I` and `R` spans of a signature.
fn inputs_results(value: &str) -> Option<(&[u8], &[u8])> {
    let tokens = tokenize(value.as_bytes())?;
    let (mut inputs, mut results) = (None, None);
    for token in tokens {
        match token {
            Token::Span(b'I', body) => inputs = Some(body),
            Token::Span(b'R', body) => results = Some(body),
            _ => return None,
        }
    }
    Some((inputs?, results?))
}

fn decode_raw_signature(value: &str) -> Option<String> {
    let (inputs, results) = inputs_results(value)?;
    Some(format!(
        "({}) -> ({})",
        raw_types(inputs)?,
        raw_types(results)?
    ))
}

fn raw_types(body: &[u8]) -> Option<String> {
    let mut out = Vec::new();
    for token in tokenize(body)? {
        out.push(match token {
            Token::Span(b'B', buffer) => raw_buffer(buffer)?,
            Token::Span(b'O', _) => "ref".to_string(),
            Token::Span(b'U', _) => "unknown".to_string(),
            _ => return None,
        });
    }
    Some(out.join(", "))
}

fn raw_buffer(body: &[u8]) -> Option<String> {
    const SCALARS: [&str; 12] = [
        "f32", "f16", "f64", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    ];
    let mut scalar = SCALARS[0];
    let mut dims = Vec::new();
    for token in tokenize(body)? {
        match token {
            Token::Int(b't', t) => scalar = SCALARS.get(usize::try_from(t).ok()?)?,
            Token::Int(b'd', -1) => dims.push("?".to_string()),
            Token::Int(b'd', d) => dims.push(d.to_string()),
            _ => return None,
        }
    }
    dims.push(scalar.to_string());
    Some(format!("buffer<{}>", dims.join("x")))
}

fn decode_sip_signature(value: &str) -> Option<String> {
    let (inputs, results) = inputs_results(value)?;
    Some(format!(
        "{} -> {}",
        sip_value(inputs, 0)?,
        sip_value(results, 0)?
    ))
}

/// Renders one structured value; `depth` bounds recursion on hostile input.
fn sip_value(body: &[u8], depth: usize) -> Option<String> {
    if depth > 32 {
        return None;
    }
    let tokens = tokenize(body)?;
    let [token] = tokens.as_slice() else {
        return None;
    };
    match token {
        Token::Int(b'_', index) => Some(format!("%{index}")),
        Token::Span(b'S', items) => {
            let mut out = Vec::new();
            let tokens = tokenize(items)?;
            for pair in tokens.chunks(2) {
                let [Token::Int(b'k', key), value] = pair else {
                    return None;
                };
                out.push(format!("{key}: {}", sip_item(value, depth)?));
            }
            Some(format!("[{}]", out.join(", ")))
        }
        Token::Span(b'D', items) => {
            let mut out = Vec::new();
            let tokens = tokenize(items)?;
            let mut iter = tokens.iter();
            while let Some(key) = iter.next() {
                let Token::Span(b'K', key) = key else {
                    return None;
                };
                let value = sip_item(iter.next()?, depth)?;
                out.push(format!("{:?}: {value}", String::from_utf8_lossy(key)));
            }
            Some(format!("{{{}}}", out.join(", ")))
        }
        _ => None,
    }
}

/// Renders a value found inside a sequence or dict.
fn sip_item(token: &Token<'_>, depth: usize) -> Option<String> {
    match token {
        Token::Int(b'_', index) => Some(format!("%{index}")),
        Token::Span(tag, inner) => sip_value(&respan(*tag, inner), depth + 1),
        Token::Int(..) => None,
    }
}

/// Re-encodes a span token so it can be parsed as a standalone value.
fn respan(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend_from_slice((body.len() + 1).to_string().as_bytes());
    out.push(b'!');
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for text in [
            "0ii_i", "0v_v", "0r_r", "0CiDi_i", "0iCrIDf_", "0_", "0fF_Ir",
        ] {
            let cc = CallingConvention::parse(text).unwrap();
            assert_eq!(cc.to_string(), text);
        }
    }

    #[test]
    fn parses_spans() {
        let cc: CallingConvention = "0iCiDr_v".parse().unwrap();
        assert_eq!(
            cc.args,
            vec![
                ValueKind::I32,
                ValueKind::Span(vec![ValueKind::I32]),
                ValueKind::Ref
            ]
        );
        assert_eq!(cc.results, vec![ValueKind::Void]);
        assert!(cc.is_variadic());
    }

    #[test]
    fn rejects_malformed() {
        use AbiError::*;
        assert_eq!(CallingConvention::parse(""), Err(Empty));
        assert_eq!(
            CallingConvention::parse("1i_i"),
            Err(UnsupportedVersion { found: '1' })
        );
        assert!(matches!(
            CallingConvention::parse("0ii"),
            Err(MissingSeparator { .. })
        ));
        assert_eq!(
            CallingConvention::parse("0ix_i"),
            Err(UnknownKind { found: 'x', at: 2 })
        );
        assert_eq!(
            CallingConvention::parse("0Ci_i"),
            Err(UnterminatedSpan { at: 1 })
        );
        assert_eq!(
            CallingConvention::parse("0iD_i"),
            Err(UnmatchedSpanEnd { at: 2 })
        );
        assert_eq!(
            CallingConvention::parse("0CCiDD_i"),
            Err(NestedSpan { at: 2 })
        );
        assert_eq!(
            CallingConvention::parse("0i_Q"),
            Err(UnknownKind { found: 'Q', at: 3 })
        );
    }

    #[test]
    fn describes_reflection() {
        assert_eq!(describe_attr("fv", "1").unwrap(), "raw ABI v1");
        assert_eq!(
            describe_attr("iree.abi.declaration", "sync func @f(%a: i32)").unwrap(),
            "sync func @f(%a: i32)"
        );
        // I(B(t6 d4 d-1)) R(B(), O())
        let f = "I11!B8!t6d4d-1R7!B1!O1!";
        assert_eq!(
            describe_attr("f", f).unwrap(),
            "(buffer<4x?xi32>) -> (buffer<f32>, ref)"
        );
        // I: {"a": %0, "b": [0: %1]}  R: %0
        let sip = "I22!D18!K2!a_0K2!bS5!k0_1R3!_0";
        assert_eq!(
            describe_attr("sip", sip).unwrap(),
            r#"{"a": %0, "b": [0: %1]} -> %0"#
        );
        assert_eq!(
            describe_attr("f", "garbage").unwrap(),
            "<undecodable: garbage>"
        );
        assert_eq!(describe_attr("other", "x"), None);
    }
}
