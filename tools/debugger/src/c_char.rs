//! C's character constants as gdb 13's C parser reads them (`'a'`,
//! `'\n'`, `'\377'`, `'\x41'`): a `char` (the debugger's `i8`), so
//! `print 'a'` is `97 'a'` and `'a' + 1` is the `int` 98.

use super::c_int::{IntType, Integer};
use super::DebugCommandError;

/// The character constant at the start of `text` (which starts with `'`)
/// and how many bytes it takes, or gdb's error for a malformed one: no
/// closing quote (`Unmatched single quote.`), nothing inside (`A character
/// constant must contain at least one character.`), more than one
/// character (`Invalid character constant.`, also for a character that is
/// not ASCII, which is more than one byte), `\x` without a hex digit.
///
/// Escapes as gdb's `c_parse_escape`: `\a \b \f \n \r \t \v`, `\e` (27),
/// up to three octal digits, `\x` and any number of hex digits, `\^C` (a
/// control character, `\^?` 127), `\u`/`\U` with 4/8 hex digits, any other
/// character standing for itself (`\q` is `q`, `\'` is `'`); a value past
/// 8 bits keeps its low byte (`'\400'` is 0, `'\x141'` is 65).
pub fn parse_char_constant(text: &str) -> Result<(Integer, usize), DebugCommandError> {
    let err = |m: &str| DebugCommandError(m.to_string());
    let bytes = text.as_bytes();
    debug_assert_eq!(bytes.first(), Some(&b'\''));
    let mut at = 1;
    let mut chars: Vec<u32> = Vec::new();
    loop {
        let Some(&b) = bytes.get(at) else {
            return Err(err("Unmatched single quote."));
        };
        match b {
            b'\'' => {
                at += 1;
                break;
            }
            b'\\' => {
                let (value, used) = escape(&bytes[at + 1..])?;
                chars.push(value);
                at += 1 + used;
            }
            _ => {
                chars.push(u32::from(b));
                at += 1;
            }
        }
    }
    match chars.as_slice() {
        [] => Err(err(
            "A character constant must contain at least one character.",
        )),
        // A raw byte past ASCII is part of a multi-byte character.
        [c] if bytes[1] != b'\\' && *c > 0x7F => Err(err("Invalid character constant.")),
        [c] => Ok((Integer::new(IntType::Char, i128::from(*c & 0xFF)), at)),
        _ => Err(err("Invalid character constant.")),
    }
}

/// The escape after a `\` at the start of `rest`: its value and the bytes
/// it takes.
fn escape(rest: &[u8]) -> Result<(u32, usize), DebugCommandError> {
    let Some(&first) = rest.first() else {
        return Err(DebugCommandError("Unmatched single quote.".into()));
    };
    let digits = |radix: u32, max: usize, from: usize| -> (u32, usize) {
        let mut value: u32 = 0;
        let mut count = 0;
        while count < max {
            let Some(d) = rest
                .get(from + count)
                .and_then(|&b| char::from(b).to_digit(radix))
            else {
                break;
            };
            value = value.wrapping_mul(radix).wrapping_add(d);
            count += 1;
        }
        (value, count)
    };
    Ok(match first {
        b'0'..=b'7' => digits(8, 3, 0),
        b'x' => {
            let (value, count) = digits(16, usize::MAX, 1);
            if count == 0 {
                return Err(DebugCommandError(
                    "\\x escape without a following hex digit".into(),
                ));
            }
            (value, 1 + count)
        }
        b'u' | b'U' => {
            let want = if first == b'u' { 4 } else { 8 };
            let (value, count) = digits(16, want, 1);
            if count < want {
                return Err(DebugCommandError(format!(
                    "\\{} escape without a following hex digit",
                    char::from(first)
                )));
            }
            if value > 0x7F {
                return Err(DebugCommandError("Invalid character constant.".into()));
            }
            (value, 1 + count)
        }
        b'^' => match rest.get(1) {
            Some(b'?') => (127, 2),
            Some(&c) => (u32::from(c) & 31, 2),
            None => return Err(DebugCommandError("Unmatched single quote.".into())),
        },
        b'a' => (7, 1),
        b'b' => (8, 1),
        b'f' => (12, 1),
        b'n' => (10, 1),
        b'r' => (13, 1),
        b't' => (9, 1),
        b'v' => (11, 1),
        b'e' => (27, 1),
        other => (u32::from(other), 1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> String {
        match parse_char_constant(text) {
            Ok((i, used)) => format!("{} {used}", i.natural()),
            Err(e) => e.0,
        }
    }

    #[test]
    fn character_constants_read_as_gdb_reads_them() {
        // Each as `gdb -batch prog -ex "print C"` (gdb 13.1) prints it.
        assert_eq!(read("'a'"), "97 'a' 3");
        assert_eq!(read("'a' + 1"), "97 'a' 3");
        assert_eq!(read("'\\n'"), "10 '\\n' 4");
        assert_eq!(read("'\\377'"), "-1 '\\377' 6");
        assert_eq!(read("'\\x41'"), "65 'A' 6");
        assert_eq!(read("'\\x141'"), "65 'A' 7");
        assert_eq!(read("'\\400'"), "0 '\\000' 6");
        assert_eq!(read("'\\''"), "39 '\\'' 4");
        assert_eq!(read("'\\\\'"), "92 '\\\\' 4");
        assert_eq!(read("'\\0'"), "0 '\\000' 4");
        assert_eq!(read("'\\e'"), "27 '\\033' 4");
        assert_eq!(read("'\\q'"), "113 'q' 4");
        assert_eq!(read("'\"'"), "34 '\"' 3");
        assert_eq!(read("'\\101'"), "65 'A' 6");
        assert_eq!(read("'ab'"), "Invalid character constant.");
        assert_eq!(read("'\\18'"), "Invalid character constant.");
        assert_eq!(read("'é'"), "Invalid character constant.");
        assert_eq!(
            read("''"),
            "A character constant must contain at least one character."
        );
        assert_eq!(read("'a"), "Unmatched single quote.");
        assert_eq!(read("'\\"), "Unmatched single quote.");
        assert_eq!(read("'\\x'"), "\\x escape without a following hex digit");
        assert_eq!(read("'\\x4g'"), "Invalid character constant.");
    }
}
