//! C's integer types as gdb evaluates them for a 64-bit (LP64) target:
//! `char` (signed, as on x86-64), `short`, `int`, `long` and their
//! unsigned kinds; the type of an integer literal from its value, base
//! and suffix; the integer promotions and the usual arithmetic
//! conversions; and a `char`'s display (`65 'A'`). The VM's i32 is C's
//! `int` and its i64 `long`; the others are made by expressions alone
//! (`1u`, `(unsigned char)200`).

use super::DebugCommandError;

/// A C integer type of an LP64 target (`long long` is `long`'s width and
/// is `long` here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntType {
    /// `char` (signed on x86-64), `signed char`.
    Char,
    /// `unsigned char`.
    UChar,
    /// `short`.
    Short,
    /// `unsigned short`.
    UShort,
    /// `int`: the VM's i32.
    Int,
    /// `unsigned int`.
    UInt,
    /// `long`, `long long`: the VM's i64.
    Long,
    /// `unsigned long`, `unsigned long long`.
    ULong,
}

impl IntType {
    /// The width in bits.
    pub fn bits(self) -> u32 {
        match self {
            IntType::Char | IntType::UChar => 8,
            IntType::Short | IntType::UShort => 16,
            IntType::Int | IntType::UInt => 32,
            IntType::Long | IntType::ULong => 64,
        }
    }

    /// Whether it is signed.
    pub fn signed(self) -> bool {
        matches!(
            self,
            IntType::Char | IntType::Short | IntType::Int | IntType::Long
        )
    }

    /// The name the debugger shows (`whatis`), in the VM's (MLIR's)
    /// spelling: `i8`, `ui8`, `i16`, `ui16`, `i32`, `ui32`, `i64`, `ui64`.
    pub fn name(self) -> &'static str {
        match self {
            IntType::Char => "i8",
            IntType::UChar => "ui8",
            IntType::Short => "i16",
            IntType::UShort => "ui16",
            IntType::Int => "i32",
            IntType::UInt => "ui32",
            IntType::Long => "i64",
            IntType::ULong => "ui64",
        }
    }

    /// The type of the same width and the other signedness.
    fn unsigned(self) -> IntType {
        match self {
            IntType::Char | IntType::UChar => IntType::UChar,
            IntType::Short | IntType::UShort => IntType::UShort,
            IntType::Int | IntType::UInt => IntType::UInt,
            IntType::Long | IntType::ULong => IntType::ULong,
        }
    }

    /// C's integer promotion: `char` and `short` (either kind) become
    /// `int`, which holds all their values.
    pub fn promoted(self) -> IntType {
        if self.bits() < 32 {
            IntType::Int
        } else {
            self
        }
    }

    /// C's usual arithmetic conversions of two integer operands: both
    /// promoted; of equal width the unsigned type wins (`-1 < 1u` compares
    /// as `unsigned int`); else the wider, where a signed `long` holds
    /// every `unsigned int` (`-7L / 2u` is a `long`).
    pub fn common(a: IntType, b: IntType) -> IntType {
        let (a, b) = (a.promoted(), b.promoted());
        match a.bits().cmp(&b.bits()) {
            std::cmp::Ordering::Greater => a,
            std::cmp::Ordering::Less => b,
            std::cmp::Ordering::Equal if a.signed() && b.signed() => a,
            std::cmp::Ordering::Equal => a.unsigned(),
        }
    }
}

/// An integer of a C type: its value cut to the type's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Integer {
    ty: IntType,
    /// The value, sign- or zero-extended from the type's width.
    value: i128,
}

impl Integer {
    /// `raw` cut to `ty`'s width, as C converts an integer to `ty`
    /// (modulo 2^width).
    pub fn new(ty: IntType, raw: i128) -> Integer {
        let bits = ty.bits();
        let mask = (1u128 << bits) - 1;
        let low = (raw as u128) & mask;
        let value = if ty.signed() && low >> (bits - 1) == 1 {
            (low | !mask) as i128
        } else {
            low as i128
        };
        Integer { ty, value }
    }

    /// Its type.
    pub fn ty(self) -> IntType {
        self.ty
    }

    /// Its value.
    pub fn value(self) -> i128 {
        self.value
    }

    /// Its bits, zero-extended to 64.
    pub fn bits(self) -> u64 {
        self.value as u64 & (u64::MAX >> (64 - self.ty.bits()))
    }

    /// Converted to `ty` (C's conversion: the value modulo 2^width).
    pub fn to(self, ty: IntType) -> Integer {
        Integer::new(ty, self.value)
    }

    /// A float converted to `ty`, as gdb casts one
    /// (`host_float_ops::to_longest`): truncated toward zero to a `long`,
    /// saturating below at its least value and above, NaN included, at
    /// its greatest, then cut to the width: `(int)(0.0/0)` is -1 (the low
    /// 32 bits of 0x7fffffffffffffff), not x86's `cvttsd2si` 0x80000000.
    pub fn from_float(ty: IntType, f: f64) -> Integer {
        Integer::new(ty, i128::from(float_to_long(f)))
    }

    /// As gdb prints it: the number, and for a `char` the character
    /// (`65 'A'`, `200 '\310'`).
    pub fn natural(self) -> String {
        match self.ty {
            IntType::Char | IntType::UChar => {
                format!("{} {}", self.value, char_literal(self.bits() as u8))
            }
            _ => self.value.to_string(),
        }
    }
}

/// A byte as gdb writes a C character constant: `'A'`, `'\n'`, `'\''`,
/// `'\\'`, `'\033'`, `'\310'`.
pub fn char_literal(byte: u8) -> String {
    let inner = match byte {
        7 => "\\a".to_string(),
        8 => "\\b".to_string(),
        b'\t' => "\\t".to_string(),
        b'\n' => "\\n".to_string(),
        11 => "\\v".to_string(),
        12 => "\\f".to_string(),
        b'\r' => "\\r".to_string(),
        b'\'' => "\\'".to_string(),
        b'\\' => "\\\\".to_string(),
        b' '..=b'~' => (byte as char).to_string(),
        _ => format!("\\{byte:03o}"),
    };
    format!("'{inner}'")
}

/// A float as gdb makes it a `long` wherever it needs an integer of one
/// (`host_float_ops::to_longest`: casts, `/c`, `printf "%d"`): truncated
/// toward zero, saturating at `long`'s least and greatest values, a NaN
/// the greatest.
pub fn float_to_long(f: f64) -> i64 {
    if f.is_nan() {
        i64::MAX
    } else {
        f as i64
    }
}

/// An integer literal as gdb's C parser reads it: decimal, `0x` hex, `0b`
/// binary, or octal after a leading `0`, then any of the suffix letters
/// `u` and `l` (either case: `1u`, `1ul`, `1LL`, `1ull`); `None` when the
/// word is not written as an integer at all (a float, a name). Its type is
/// C's (gdb 13's): the first of `int`, `unsigned int` (hex, octal and
/// binary, or with `u`), `long`, `unsigned long` (with `u`, or a literal
/// past `long`) that holds the value, `int`s skipped with an `l`; past 64
/// bits is gdb's `Numeric constant too large.`
pub fn parse_integer_literal(word: &str) -> Option<Result<Integer, DebugCommandError>> {
    let invalid = || DebugCommandError(format!("Invalid number \"{word}\"."));
    if !word.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    let (base, body) = match lower.as_bytes() {
        [b'0', b'x', _, ..] => (16, &lower[2..]),
        [b'0', b'b', _, ..] => (2, &lower[2..]),
        [b'0', _, ..] => (8, &lower[1..]),
        _ => (10, &lower[..]),
    };
    let digits_end = body
        .find(|c: char| !c.is_ascii_hexdigit() || (base != 16 && !c.is_ascii_digit()))
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(digits_end);
    // A float (`1.5`, `1e5`, `010.5`, `0x1p3`) is not an integer literal; a word
    // with other letters (`10f`, `0b2`, `08`) is gdb's invalid number.
    if (base != 16 && suffix.starts_with('e'))
        || (base == 16 && suffix.starts_with('p'))
        || suffix.starts_with('.')
    {
        return None;
    }
    if (digits.is_empty() && base != 8) || !suffix.bytes().all(|b| b == b'u' || b == b'l') {
        return Some(Err(invalid()));
    }
    let mut value: u64 = 0;
    for d in digits.chars() {
        let Some(d) = d.to_digit(base) else {
            return Some(Err(invalid()));
        };
        let Some(v) = value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(d)))
        else {
            return Some(Err(DebugCommandError("Numeric constant too large.".into())));
        };
        value = v;
    }
    let unsigned = suffix.contains('u');
    let long = suffix.contains('l');
    let holds = |ty: IntType| {
        let max = if ty.signed() {
            (1u64 << (ty.bits() - 1)) - 1
        } else {
            u64::MAX >> (64 - ty.bits())
        };
        value <= max
    };
    let ty = if !long && !unsigned && holds(IntType::Int) {
        IntType::Int
    } else if !long && (unsigned || base != 10) && holds(IntType::UInt) {
        IntType::UInt
    } else if !unsigned && holds(IntType::Long) {
        IntType::Long
    } else {
        IntType::ULong
    };
    Some(Ok(Integer::new(ty, i128::from(value))))
}

/// A type a cast names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastType {
    /// An integer type.
    Int(IntType),
    /// `float`, the VM's f32.
    F32,
    /// `double`, the VM's f64.
    F64,
}

/// The type named by a cast's words: C's (`unsigned int`, `long`,
/// `unsigned char`, `signed char`, `short int`, `long unsigned int`,
/// `unsigned long long`, `float`, `double`, ...) or the VM's (`i8` to
/// `ui64`, `f32`, `f64`); `None` when the words name no type.
pub fn parse_type_name(text: &str) -> Option<CastType> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if let [one] = words[..] {
        let vm = match one {
            "i8" => Some(CastType::Int(IntType::Char)),
            "ui8" => Some(CastType::Int(IntType::UChar)),
            "i16" => Some(CastType::Int(IntType::Short)),
            "ui16" => Some(CastType::Int(IntType::UShort)),
            "i32" => Some(CastType::Int(IntType::Int)),
            "ui32" => Some(CastType::Int(IntType::UInt)),
            "i64" => Some(CastType::Int(IntType::Long)),
            "ui64" => Some(CastType::Int(IntType::ULong)),
            "f32" | "float" => Some(CastType::F32),
            "f64" | "double" => Some(CastType::F64),
            _ => None,
        };
        if vm.is_some() {
            return vm;
        }
    }
    // C's specifiers in any order, each at most once (`long` twice).
    let (mut signed, mut unsigned, mut char, mut short, mut int, mut long) = (0, 0, 0, 0, 0, 0);
    for w in &words {
        let count = match *w {
            "signed" => &mut signed,
            "unsigned" => &mut unsigned,
            "char" => &mut char,
            "short" => &mut short,
            "int" => &mut int,
            "long" => &mut long,
            _ => return None,
        };
        *count += 1;
    }
    let once = [signed, unsigned, char, short, int].iter().all(|&n| n <= 1) && long <= 2;
    let kinds = usize::from(char > 0) + usize::from(short > 0) + usize::from(long > 0);
    if words.is_empty() || !once || signed + unsigned > 1 || kinds > 1 || (char > 0 && int > 0) {
        return None;
    }
    let ty = if char > 0 {
        IntType::Char
    } else if short > 0 {
        IntType::Short
    } else if long > 0 {
        IntType::Long
    } else {
        IntType::Int
    };
    Some(CastType::Int(if unsigned > 0 { ty.unsigned() } else { ty }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(word: &str) -> String {
        match parse_integer_literal(word) {
            None => "not an integer".into(),
            Some(Ok(i)) => format!("{} {}", i.ty().name(), i.value()),
            Some(Err(e)) => e.0,
        }
    }

    /// Each as gdb 13.1 prints `print LITERAL` and `whatis LITERAL` with
    /// an x86-64 program loaded (`long long` is `long` here).
    #[test]
    fn literals_are_typed_as_gdb_types_them() {
        assert_eq!(literal("2147483647"), "i32 2147483647");
        assert_eq!(literal("2147483648"), "i64 2147483648");
        assert_eq!(literal("4294967295"), "i64 4294967295");
        assert_eq!(literal("0x7FFFFFFF"), "i32 2147483647");
        assert_eq!(literal("0xFFFFFFFF"), "ui32 4294967295");
        assert_eq!(literal("037777777777"), "ui32 4294967295");
        assert_eq!(literal("0x100000000"), "i64 4294967296");
        assert_eq!(literal("9223372036854775807"), "i64 9223372036854775807");
        assert_eq!(literal("9223372036854775808"), "ui64 9223372036854775808");
        assert_eq!(literal("0xFFFFFFFFFFFFFFFF"), "ui64 18446744073709551615");
        assert_eq!(literal("1u"), "ui32 1");
        assert_eq!(literal("1U"), "ui32 1");
        assert_eq!(literal("1l"), "i64 1");
        assert_eq!(literal("1L"), "i64 1");
        assert_eq!(literal("1ul"), "ui64 1");
        assert_eq!(literal("1lu"), "ui64 1");
        assert_eq!(literal("1ll"), "i64 1");
        assert_eq!(literal("1ull"), "ui64 1");
        assert_eq!(literal("4294967296u"), "ui64 4294967296");
        assert_eq!(literal("0b101"), "i32 5");
        assert_eq!(literal("0B11"), "i32 3");
        assert_eq!(literal("0"), "i32 0");
        assert_eq!(literal("00"), "i32 0");
        assert_eq!(literal("0u"), "ui32 0");
        assert_eq!(literal("0b"), "Invalid number \"0b\".");
        assert_eq!(literal("0b2"), "Invalid number \"0b2\".");
        assert_eq!(literal("08"), "Invalid number \"08\".");
        assert_eq!(literal("10f"), "Invalid number \"10f\".");
        assert_eq!(literal("1u2"), "Invalid number \"1u2\".");
        assert_eq!(literal("0x"), "Invalid number \"0x\".");
        assert_eq!(literal("0x1f"), "i32 31");
        assert_eq!(
            literal("18446744073709551616"),
            "Numeric constant too large."
        );
        assert_eq!(
            literal("0x10000000000000000"),
            "Numeric constant too large."
        );
        assert_eq!(literal("1.5"), "not an integer");
        assert_eq!(literal("1e5"), "not an integer");
        assert_eq!(literal("010.5"), "not an integer");
        assert_eq!(literal("x1"), "not an integer");
    }

    #[test]
    fn conversions_follow_c() {
        use IntType::*;
        assert_eq!(IntType::common(Int, UInt), UInt);
        assert_eq!(IntType::common(Long, UInt), Long);
        assert_eq!(IntType::common(Int, ULong), ULong);
        assert_eq!(IntType::common(Long, ULong), ULong);
        assert_eq!(IntType::common(Char, UChar), Int);
        assert_eq!(IntType::common(UShort, Int), Int);
        assert_eq!(Integer::new(UInt, -1).value(), 4294967295);
        assert_eq!(Integer::new(Short, 70000).value(), 4464);
        assert_eq!(Integer::new(Char, 200).value(), -56);
        assert_eq!(Integer::new(Char, -1).bits(), 0xff);
        assert_eq!(Integer::from_float(Int, 1e10).value(), 1410065408);
        assert_eq!(Integer::from_float(UInt, -1.5).value(), 4294967295);
        assert_eq!(Integer::new(Char, 65).natural(), "65 'A'");
        assert_eq!(Integer::new(UChar, 200).natural(), "200 '\\310'");
        assert_eq!(Integer::new(Char, 0).natural(), "0 '\\000'");
        assert_eq!(Integer::new(Char, 39).natural(), "39 '\\''");
        assert_eq!(Integer::new(Char, 7).natural(), "7 '\\a'");
        assert_eq!(Integer::new(Char, 127).natural(), "127 '\\177'");
    }

    #[test]
    fn casts_name_c_and_vm_types() {
        let int = |t| Some(CastType::Int(t));
        assert_eq!(parse_type_name("unsigned int"), int(IntType::UInt));
        assert_eq!(parse_type_name("unsigned"), int(IntType::UInt));
        assert_eq!(parse_type_name("long unsigned int"), int(IntType::ULong));
        assert_eq!(parse_type_name("unsigned long long"), int(IntType::ULong));
        assert_eq!(parse_type_name("signed char"), int(IntType::Char));
        assert_eq!(parse_type_name("short int"), int(IntType::Short));
        assert_eq!(parse_type_name("signed"), int(IntType::Int));
        assert_eq!(parse_type_name("ui8"), int(IntType::UChar));
        assert_eq!(parse_type_name("float"), Some(CastType::F32));
        assert_eq!(parse_type_name("f64"), Some(CastType::F64));
        assert_eq!(parse_type_name("short long"), None);
        assert_eq!(parse_type_name("unsigned float"), None);
        assert_eq!(parse_type_name("signed unsigned"), None);
        assert_eq!(parse_type_name("long long long"), None);
        assert_eq!(parse_type_name("char int"), None);
        assert_eq!(parse_type_name("x"), None);
        assert_eq!(parse_type_name(""), None);
    }
}
