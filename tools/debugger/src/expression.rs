//! The expressions the debugger evaluates (`print`, conditions, displays,
//! `set var`'s values): registers (`%i3`, `%i0:1`, `%r2`) and numbers,
//! combined with C's operators as gdb reads them: unary `-` `+` `!` `~`,
//! `*` `/` `%`, `+` `-`, `<<` `>>`, comparisons, `==` `!=`, `&`, `^`,
//! `|`, `&&`, `||`, and parentheses. Arithmetic follows C's usual
//! conversions over the VM's types (i32 as C's `int`, i64 as `long`, f32,
//! f64): integers wrap, as gdb's do. An expression without registers is
//! evaluated without a program ([`Expr::is_constant`]), as gdb prints
//! `1 + 2` before `run`.

use std::collections::BTreeMap;

use irvm::Ref;

use super::expr::{DebugValue, RegisterFile, RegisterRef};
use super::DebugCommandError;

/// An operator of one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unary {
    Negate,
    Plus,
    Not,
    Complement,
}

/// An operator of two operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binary {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

impl Binary {
    /// Binding strength (higher binds tighter), as in C.
    fn precedence(self) -> u8 {
        match self {
            Binary::Mul | Binary::Div | Binary::Rem => 10,
            Binary::Add | Binary::Sub => 9,
            Binary::Shl | Binary::Shr => 8,
            Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge => 7,
            Binary::Eq | Binary::Ne => 6,
            Binary::BitAnd => 5,
            Binary::BitXor => 4,
            Binary::BitOr => 3,
            Binary::And => 2,
            Binary::Or => 1,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Binary::Mul => "*",
            Binary::Div => "/",
            Binary::Rem => "%",
            Binary::Add => "+",
            Binary::Sub => "-",
            Binary::Shl => "<<",
            Binary::Shr => ">>",
            Binary::Lt => "<",
            Binary::Le => "<=",
            Binary::Gt => ">",
            Binary::Ge => ">=",
            Binary::Eq => "==",
            Binary::Ne => "!=",
            Binary::BitAnd => "&",
            Binary::BitXor => "^",
            Binary::BitOr => "|",
            Binary::And => "&&",
            Binary::Or => "||",
        }
    }
}

/// The binary operators by their spelling, longest first where one starts
/// another.
const BINARY: [(&str, Binary); 18] = [
    ("<<", Binary::Shl),
    (">>", Binary::Shr),
    ("<=", Binary::Le),
    (">=", Binary::Ge),
    ("==", Binary::Eq),
    ("!=", Binary::Ne),
    ("&&", Binary::And),
    ("||", Binary::Or),
    ("*", Binary::Mul),
    ("/", Binary::Div),
    ("%", Binary::Rem),
    ("+", Binary::Add),
    ("-", Binary::Sub),
    ("<", Binary::Lt),
    (">", Binary::Gt),
    ("&", Binary::BitAnd),
    ("^", Binary::BitXor),
    ("|", Binary::BitOr),
];

/// A parsed expression's tree.
#[derive(Clone, Debug)]
enum Node {
    Register(RegisterRef),
    /// An integer constant: an i32 when it fits one, else an i64.
    Int(i64),
    Float(f64),
    /// A value given by name (gdb's value history, `$1`): of its own type.
    Value(DebugValue),
    Unary(Unary, Box<Node>),
    Binary(Binary, Box<Node>, Box<Node>),
}

/// An expression (`%i3 == 5`, `(%i0:1 + 1) * 2`, `1 + 2`).
#[derive(Clone, Debug)]
pub struct Expr {
    text: String,
    root: Node,
}

/// Most parts (operands and operators) an expression has: its tree is
/// evaluated and dropped recursively, so its depth is bounded.
const MAX_PARTS: usize = 1024;

/// Most parentheses and unary operators one inside another.
const MAX_NESTING: usize = 128;

/// Reads an expression's text left to right.
struct Parser<'a> {
    text: &'a str,
    at: usize,
    /// The whole text, for messages.
    whole: &'a str,
    /// Parts read so far ([`MAX_PARTS`]).
    parts: usize,
    /// Parentheses and unary operators open now ([`MAX_NESTING`]).
    nesting: usize,
    /// The values of `$` words ([`Expr::parse_with`]).
    values: &'a NamedValues<'a>,
}

/// What a `$` word (`$1`, `$`, `$$2`) stands for: its value, an error
/// saying why it has none, or `None` when the word names nothing.
pub type NamedValues<'a> = dyn Fn(&str) -> Option<Result<DebugValue, String>> + 'a;

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn skip_blanks(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    /// The binary operator next in the text, if any.
    fn peek_binary(&mut self) -> Option<(&'static str, Binary)> {
        self.skip_blanks();
        let rest = self.rest();
        BINARY.iter().copied().find(|(s, _)| rest.starts_with(s))
    }

    /// Counts a part; an expression of too many is refused.
    fn count_part(&mut self) -> Result<(), DebugCommandError> {
        self.parts += 1;
        if self.parts > MAX_PARTS {
            return Err(DebugCommandError(format!(
                "expression too long: more than {MAX_PARTS} operands and operators"
            )));
        }
        Ok(())
    }

    /// Enters a parenthesis or a unary operator; too deep is refused.
    fn enter(&mut self) -> Result<(), DebugCommandError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(DebugCommandError(format!(
                "expression nested too deeply: more than {MAX_NESTING} parentheses and unary \
                 operators one inside another"
            )));
        }
        Ok(())
    }

    fn binary(&mut self, min_precedence: u8) -> Result<Node, DebugCommandError> {
        let mut lhs = self.unary()?;
        while let Some((symbol, op)) = self.peek_binary() {
            if op.precedence() < min_precedence {
                break;
            }
            self.at += symbol.len();
            self.count_part()?;
            let rhs = self.binary(op.precedence() + 1)?;
            lhs = Node::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Node, DebugCommandError> {
        self.skip_blanks();
        let rest = self.rest();
        let op = match rest.chars().next() {
            Some('-') => Unary::Negate,
            Some('+') => Unary::Plus,
            Some('!') if !rest.starts_with("!=") => Unary::Not,
            Some('~') => Unary::Complement,
            _ => return self.operand(),
        };
        self.at += 1;
        self.count_part()?;
        self.enter()?;
        let inner = self.unary()?;
        self.nesting -= 1;
        Ok(match (op, inner) {
            // A negative number is its literal negated, typed by the
            // literal as in C: `-2147483648` is a `long` (2147483648
            // fits no `int`), so `-2147483648 / -1` is 2147483648 as gdb
            // prints it.
            (Unary::Negate, Node::Float(v)) => Node::Float(-v),
            (op, inner) => Node::Unary(op, Box::new(inner)),
        })
    }

    fn operand(&mut self) -> Result<Node, DebugCommandError> {
        self.skip_blanks();
        let rest = self.rest();
        self.count_part()?;
        if let Some(inside) = rest.strip_prefix('(') {
            self.at += 1;
            self.enter()?;
            let node = self.binary(0)?;
            self.nesting -= 1;
            self.skip_blanks();
            if !self.rest().starts_with(')') {
                return Err(DebugCommandError(format!(
                    "cannot evaluate `{}`: a `(` is not closed{}",
                    self.whole,
                    if inside.trim().is_empty() {
                        ""
                    } else {
                        " by a `)`"
                    }
                )));
            }
            self.at += 1;
            return Ok(node);
        }
        // A word: a register or a number, up to the next blank, operator
        // or parenthesis (a number's exponent sign is its own).
        let mut end = 0;
        let bytes = rest.as_bytes();
        while end < bytes.len() {
            let b = bytes[end];
            let exponent_sign = matches!(b, b'+' | b'-')
                && end > 0
                && matches!(bytes[end - 1], b'e' | b'E')
                && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
                && !rest.starts_with("0x")
                && !rest.starts_with("0X");
            let word_byte = b.is_ascii_alphanumeric()
                || matches!(b, b'_' | b'.' | b':' | b'$' | b'#')
                || (b == b'%' && end == 0);
            if !(word_byte || exponent_sign) {
                break;
            }
            end += 1;
        }
        let word = &rest[..end];
        self.at += end;
        if word.starts_with('$') {
            match (self.values)(word) {
                Some(Ok(value)) => return Ok(Node::Value(value)),
                Some(Err(e)) => return Err(DebugCommandError(e)),
                None => {}
            }
        }
        parse_word(word, self.whole)
    }
}

/// A register or a number.
fn parse_word(word: &str, whole: &str) -> Result<Node, DebugCommandError> {
    if word.starts_with('%') {
        return RegisterRef::parse(word).map(Node::Register);
    }
    let hex = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X"));
    let digits_only = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let too_large = || DebugCommandError("Numeric constant too large.".into());
    match hex {
        Some(h) if !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            // Up to 64 bits, read as their two's complement (0xFFFF_FFFF_FFFF_FFFF is -1).
            let v = u64::from_str_radix(h, 16).map_err(|_| too_large())?;
            return Ok(Node::Int(v as i64));
        }
        // A leading 0 is C's octal (`010` is 8); a digit past 7 makes it
        // gdb's invalid number.
        _ if digits_only(word) && word.len() > 1 && word.starts_with('0') => {
            if word.bytes().any(|b| b > b'7') {
                return Err(DebugCommandError(format!("Invalid number \"{word}\".")));
            }
            let v = u64::from_str_radix(&word[1..], 8).map_err(|_| too_large())?;
            return Ok(Node::Int(v as i64));
        }
        // Past i64, a decimal is read as a float (`set var` checks the
        // literal's own digits against the register's range).
        _ if digits_only(word) && word.parse::<i64>().is_ok() => {
            return word.parse::<i64>().map(Node::Int).map_err(|_| too_large());
        }
        _ => {}
    }
    match word.parse::<f64>() {
        Ok(v) if word.starts_with(|c: char| c.is_ascii_digit() || c == '.') => Ok(Node::Float(v)),
        _ => Err(DebugCommandError(format!(
            "cannot evaluate `{whole}`: `{word}` is neither a register (%iN, %iN:M, %rN) nor a number"
        ))),
    }
}

impl Expr {
    /// Parses an expression.
    pub fn parse(text: &str) -> Result<Expr, DebugCommandError> {
        Expr::parse_with(text, &|_| None)
    }

    /// Parses an expression whose `$` words (gdb's value history: `$1`,
    /// `$`, `$$2`) `values` gives values of their own types (`$1 + 1`).
    pub fn parse_with(text: &str, values: &NamedValues<'_>) -> Result<Expr, DebugCommandError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(DebugCommandError("an expression is needed".into()));
        }
        let mut parser = Parser {
            text: t,
            at: 0,
            whole: t,
            parts: 0,
            nesting: 0,
            values,
        };
        let root = parser.binary(0)?;
        parser.skip_blanks();
        if !parser.rest().is_empty() {
            return Err(DebugCommandError(format!(
                "cannot evaluate `{t}`: junk after the end of the expression: `{}`",
                parser.rest()
            )));
        }
        Ok(Expr {
            text: t.to_string(),
            root,
        })
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it names no register: its value needs no frame
    /// ([`Expr::evaluate_constant`]).
    pub fn is_constant(&self) -> bool {
        fn constant(n: &Node) -> bool {
            match n {
                Node::Register(_) => false,
                Node::Int(_) | Node::Float(_) => true,
                Node::Value(v) => !matches!(v, DebugValue::Ref(_)),
                Node::Unary(_, a) => constant(a),
                Node::Binary(_, a, b) => constant(a) && constant(b),
            }
        }
        constant(&self.root)
    }

    /// Its value without a frame (an expression naming a register cannot
    /// have one).
    pub fn evaluate_constant(&self) -> Result<DebugValue, DebugCommandError> {
        let banks = BTreeMap::new();
        self.evaluate(&RegisterFile {
            i32s: &[],
            refs: &[],
            banks: &banks,
        })
    }

    /// Its value in a frame.
    pub fn evaluate(&self, regs: &RegisterFile<'_>) -> Result<DebugValue, DebugCommandError> {
        self.value(&self.root, regs)
    }

    fn value(&self, node: &Node, regs: &RegisterFile<'_>) -> Result<DebugValue, DebugCommandError> {
        Ok(match node {
            Node::Register(r) => regs.read(*r)?,
            Node::Int(v) => match i32::try_from(*v) {
                Ok(small) => DebugValue::I32(small),
                Err(_) => DebugValue::I64(*v),
            },
            Node::Float(v) => DebugValue::F64(*v),
            Node::Value(v) => v.clone(),
            Node::Unary(op, inner) => {
                let v = self.value(inner, regs)?;
                self.unary(*op, v)?
            }
            Node::Binary(op @ (Binary::And | Binary::Or), a, b) => {
                // C's short circuit: the right side is not evaluated when
                // the left decides.
                let left = truth(&self.value(a, regs)?);
                let decided = if *op == Binary::And { !left } else { left };
                if decided {
                    DebugValue::Bool(left)
                } else {
                    DebugValue::Bool(truth(&self.value(b, regs)?))
                }
            }
            Node::Binary(op, a, b) => {
                let (a, b) = (self.value(a, regs)?, self.value(b, regs)?);
                self.binary(*op, a, b)?
            }
        })
    }

    fn unary(&self, op: Unary, v: DebugValue) -> Result<DebugValue, DebugCommandError> {
        let v = promote_bool(v);
        Ok(match (op, v) {
            (Unary::Not, v) => DebugValue::Bool(!truth(&v)),
            (Unary::Plus, v @ (DebugValue::I32(_) | DebugValue::I64(_))) => v,
            (Unary::Plus, v @ (DebugValue::F32(_) | DebugValue::F64(_))) => v,
            (Unary::Negate, DebugValue::I32(x)) => DebugValue::I32(x.wrapping_neg()),
            (Unary::Negate, DebugValue::I64(x)) => DebugValue::I64(x.wrapping_neg()),
            (Unary::Negate, DebugValue::F32(x)) => DebugValue::F32(-x),
            (Unary::Negate, DebugValue::F64(x)) => DebugValue::F64(-x),
            (Unary::Complement, DebugValue::I32(x)) => DebugValue::I32(!x),
            (Unary::Complement, DebugValue::I64(x)) => DebugValue::I64(!x),
            (Unary::Complement, DebugValue::F32(_) | DebugValue::F64(_)) => {
                return Err(DebugCommandError(
                    "Argument to complement operation not an integer, boolean.".into(),
                ))
            }
            (op, v) => {
                let symbol = match op {
                    Unary::Negate => "-",
                    Unary::Plus => "+",
                    Unary::Not => "!",
                    Unary::Complement => "~",
                };
                return Err(DebugCommandError(format!(
                    "cannot apply `{symbol}` to a {} in `{}`",
                    v.type_name(),
                    self.text
                )));
            }
        })
    }

    fn binary(
        &self,
        op: Binary,
        a: DebugValue,
        b: DebugValue,
    ) -> Result<DebugValue, DebugCommandError> {
        if matches!(
            op,
            Binary::Eq | Binary::Ne | Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge
        ) {
            return self.compare(op, &a, &b);
        }
        let (a, b) = (promote_bool(a), promote_bool(b));
        let integer_only = matches!(
            op,
            Binary::Rem
                | Binary::Shl
                | Binary::Shr
                | Binary::BitAnd
                | Binary::BitXor
                | Binary::BitOr
        );
        let operands = match (&a, &b) {
            (DebugValue::I32(x), DebugValue::I32(y)) => Operands::I32(*x, *y),
            (DebugValue::I32(_) | DebugValue::I64(_), DebugValue::I32(_) | DebugValue::I64(_)) => {
                Operands::I64(as_i64(&a), as_i64(&b))
            }
            (DebugValue::F64(_), _) | (_, DebugValue::F64(_)) if is_number(&a) && is_number(&b) => {
                Operands::F64(as_f64(&a), as_f64(&b))
            }
            _ if is_number(&a) && is_number(&b) => {
                Operands::F32(as_f64(&a) as f32, as_f64(&b) as f32)
            }
            _ => {
                return Err(DebugCommandError(format!(
                    "cannot apply `{}` to {} and {} in `{}`",
                    op.symbol(),
                    a.type_name(),
                    b.type_name(),
                    self.text
                )))
            }
        };
        if integer_only && matches!(operands, Operands::F32(..) | Operands::F64(..)) {
            return Err(DebugCommandError(
                "Integer-only operation on floating point number.".into(),
            ));
        }
        Ok(match operands {
            // An i32 operation is the i64 one on the sign-extended operands,
            // cut to 32 bits (C's `int` wraps as its low half), but for the
            // shifts, whose range is the width's.
            Operands::I32(x, y) => {
                DebugValue::I32(integer_operation(op, i64::from(x), i64::from(y), 32)? as i32)
            }
            Operands::I64(x, y) => DebugValue::I64(integer_operation(op, x, y, 64)?),
            Operands::F32(x, y) => DebugValue::F32(match op {
                Binary::Mul => x * y,
                Binary::Div => x / y,
                Binary::Add => x + y,
                Binary::Sub => x - y,
                _ => unreachable_operator(op)?,
            }),
            Operands::F64(x, y) => DebugValue::F64(match op {
                Binary::Mul => x * y,
                Binary::Div => x / y,
                Binary::Add => x + y,
                Binary::Sub => x - y,
                _ => unreachable_operator(op)?,
            }),
        })
    }

    /// A comparison: numbers by value (integers exactly), refs by identity
    /// (`==`, `!=`; a ref and 0 compare as null or not).
    fn compare(
        &self,
        op: Binary,
        a: &DebugValue,
        b: &DebugValue,
    ) -> Result<DebugValue, DebugCommandError> {
        let refs_only = |equal: bool| match op {
            Binary::Eq => Ok(DebugValue::Bool(equal)),
            Binary::Ne => Ok(DebugValue::Bool(!equal)),
            _ => Err(DebugCommandError(format!(
                "refs compare only with == and != (in `{}`)",
                self.text
            ))),
        };
        let ordering = match (a, b) {
            (DebugValue::Ref(x), DebugValue::Ref(y)) => return refs_only(x.ptr_eq(y)),
            (DebugValue::Ref(x), DebugValue::I32(0) | DebugValue::I64(0))
            | (DebugValue::I32(0) | DebugValue::I64(0), DebugValue::Ref(x)) => {
                return refs_only(x.is_null())
            }
            _ => {
                let (Some(x), Some(y)) = (exact(a), exact(b)) else {
                    return Err(DebugCommandError(format!(
                        "cannot compare {} with {} in `{}`",
                        a.type_name(),
                        b.type_name(),
                        self.text
                    )));
                };
                match (x, y) {
                    (Exact::Int(x), Exact::Int(y)) => Some(x.cmp(&y)),
                    (x, y) => x.as_f64().partial_cmp(&y.as_f64()),
                }
            }
        };
        use std::cmp::Ordering::*;
        let result = match (op, ordering) {
            (Binary::Ne, None) => true,
            (_, None) => false,
            (Binary::Eq, Some(o)) => o == Equal,
            (Binary::Ne, Some(o)) => o != Equal,
            (Binary::Lt, Some(o)) => o == Less,
            (Binary::Le, Some(o)) => o != Greater,
            (Binary::Gt, Some(o)) => o == Greater,
            _ => ordering != Some(Less),
        };
        Ok(DebugValue::Bool(result))
    }

    /// Whether it holds in a frame (a non-zero, non-null value).
    pub fn holds(&self, regs: &RegisterFile<'_>) -> Result<bool, DebugCommandError> {
        Ok(truth(&self.evaluate(regs)?))
    }
}

/// The two operands of an arithmetic operator, converted to their common
/// type.
enum Operands {
    I32(i32, i32),
    I64(i64, i64),
    F32(f32, f32),
    F64(f64, f64),
}

/// A number for comparisons: integers exactly, floats as f64.
#[derive(Clone, Copy)]
enum Exact {
    Int(i128),
    Float(f64),
}

impl Exact {
    fn as_f64(self) -> f64 {
        match self {
            Exact::Int(i) => i as f64,
            Exact::Float(x) => x,
        }
    }
}

fn exact(v: &DebugValue) -> Option<Exact> {
    Some(match v {
        DebugValue::I32(x) => Exact::Int(*x as i128),
        DebugValue::I64(x) => Exact::Int(*x as i128),
        DebugValue::Bool(b) => Exact::Int(*b as i128),
        DebugValue::F32(x) => Exact::Float(*x as f64),
        DebugValue::F64(x) => Exact::Float(*x),
        _ => return None,
    })
}

/// A comparison's result is C's `int` in arithmetic.
fn promote_bool(v: DebugValue) -> DebugValue {
    match v {
        DebugValue::Bool(b) => DebugValue::I32(i32::from(b)),
        other => other,
    }
}

fn is_number(v: &DebugValue) -> bool {
    matches!(
        v,
        DebugValue::I32(_) | DebugValue::I64(_) | DebugValue::F32(_) | DebugValue::F64(_)
    )
}

fn as_i64(v: &DebugValue) -> i64 {
    match v {
        DebugValue::I32(x) => *x as i64,
        DebugValue::I64(x) => *x,
        _ => 0,
    }
}

fn as_f64(v: &DebugValue) -> f64 {
    match v {
        DebugValue::I32(x) => *x as f64,
        DebugValue::I64(x) => *x as f64,
        DebugValue::F32(x) => *x as f64,
        DebugValue::F64(x) => *x,
        _ => 0.0,
    }
}

/// Whether a value counts as true (non-zero, non-null).
fn truth(v: &DebugValue) -> bool {
    match v {
        DebugValue::Bool(b) => *b,
        DebugValue::I32(x) => *x != 0,
        DebugValue::I64(x) => *x != 0,
        DebugValue::F32(x) => *x != 0.0,
        DebugValue::F64(x) => *x != 0.0,
        DebugValue::Ref(r) => !Ref::is_null(r),
        DebugValue::Text(t) => !t.is_empty(),
    }
}

/// Integer operator `op` on `x` and `y` as C's `long` computes it
/// (wrapping; `bits` is the operands' width, which bounds the shifts), or
/// gdb's `Division by zero`.
fn integer_operation(op: Binary, x: i64, y: i64, bits: u32) -> Result<i64, DebugCommandError> {
    let division_by_zero = || DebugCommandError("Division by zero".into());
    Ok(match op {
        Binary::Mul => x.wrapping_mul(y),
        Binary::Div => x
            .checked_div(y)
            .or_else(|| (y == -1).then(|| x.wrapping_neg()))
            .ok_or_else(division_by_zero)?,
        Binary::Rem => {
            if y == 0 {
                return Err(division_by_zero());
            }
            x.wrapping_rem(y)
        }
        Binary::Add => x.wrapping_add(y),
        Binary::Sub => x.wrapping_sub(y),
        Binary::Shl => shift(x, y, bits, true),
        Binary::Shr => shift(x, y, bits, false),
        Binary::BitAnd => x & y,
        Binary::BitXor => x ^ y,
        Binary::BitOr => x | y,
        _ => return unreachable_operator(op),
    })
}

/// `x << count` or `x >> count` (arithmetic) in `width` bits: a count out
/// of 0..width gives 0 (or, shifting a negative number right, -1), as
/// gdb's do.
fn shift(x: i64, count: i64, width: u32, left: bool) -> i64 {
    match u32::try_from(count) {
        Ok(c) if c < width => {
            if left {
                x.wrapping_shl(c)
            } else {
                x >> c
            }
        }
        _ if !left && x < 0 => -1,
        _ => 0,
    }
}

fn unreachable_operator<T>(op: Binary) -> Result<T, DebugCommandError> {
    Err(DebugCommandError(format!(
        "`{}` is not an arithmetic operator here",
        op.symbol()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(text: &str) -> String {
        match Expr::parse(text).and_then(|e| e.evaluate_constant()) {
            Ok(v) => format!("{} {}", v.type_name(), v.format(Default::default(), None)),
            Err(e) => e.0,
        }
    }

    #[test]
    fn arithmetic_follows_c_as_gdb_prints_it() {
        assert_eq!(constant("1+2"), "i32 3");
        assert_eq!(constant("(1 + 2) * 3"), "i32 9");
        assert_eq!(constant("7 / 2"), "i32 3");
        assert_eq!(constant("-5 % 3"), "i32 -2");
        assert_eq!(constant("7.0/2"), "f64 3.5");
        assert_eq!(constant("2147483647 + 1"), "i32 -2147483648");
        assert_eq!(
            constant("5000000000 * 5000000000"),
            "i64 6553255926290448384"
        );
        assert_eq!(constant("-2147483648"), "i64 -2147483648");
        assert_eq!(constant("-2147483648 / -1"), "i64 2147483648");
        assert_eq!(constant("(-2147483647 - 1) / -1"), "i32 -2147483648");
        assert_eq!(constant("-2147483647"), "i32 -2147483647");
        assert_eq!(constant("1 << 40"), "i32 0");
        assert_eq!(constant("-1 >> 1"), "i32 -1");
        assert_eq!(constant("3 > 2 > 1"), "i1 0");
        assert_eq!(constant("1 == 1"), "i1 1");
        assert_eq!(constant("0.5 && 1"), "i1 1");
        assert_eq!(constant("!5"), "i1 0");
        assert_eq!(constant("~0"), "i32 -1");
        assert_eq!(constant("0x10 | 1"), "i32 17");
        assert_eq!(constant("010 + 0"), "i32 8");
        assert_eq!(constant("-017"), "i32 -15");
        assert_eq!(constant("00"), "i32 0");
        assert_eq!(constant("08"), "Invalid number \"08\".");
        assert_eq!(constant("010.5"), "f64 10.5");
        assert_eq!(
            constant("02000000000000000000000"),
            "Numeric constant too large."
        );
        assert_eq!(constant("- -5"), "i32 5");
        assert_eq!(constant("1e-1 * 10"), "f64 1");
        assert_eq!(constant("1/0"), "Division by zero");
        assert_eq!(constant("1 % 0"), "Division by zero");
        assert_eq!(
            constant("1.5 % 1"),
            "Integer-only operation on floating point number."
        );
        assert_eq!(
            constant("~1.5"),
            "Argument to complement operation not an integer, boolean."
        );
        assert_eq!(
            constant("0x10000000000000000"),
            "Numeric constant too large."
        );
        assert_eq!(
            constant("1 +"),
            "cannot evaluate `1 +`: `` is neither a register (%iN, %iN:M, %rN) nor a number"
        );
        assert!(constant("(1").contains("not closed"), "{}", constant("(1"));
        assert!(constant("1)").contains("junk after"), "{}", constant("1)"));
        // Hostile lengths and depths are refused, not overflowing the
        // stack (parsing, evaluating or dropping the tree).
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(constant(&deep).contains("nested too deeply"));
        assert!(constant(&"-".repeat(100_000)).contains("nested too deeply"));
        let long = vec!["1"; 100_000].join("+");
        assert!(constant(&long).contains("too long"));
        let fine = vec!["1"; 500].join("+");
        assert_eq!(constant(&fine), "i32 500");
    }

    #[test]
    fn registers_make_an_expression_need_a_frame() {
        assert!(Expr::parse("1 + 2").unwrap().is_constant());
        let e = Expr::parse("%i0 % 2 == 0").unwrap();
        assert!(!e.is_constant());
        let banks = BTreeMap::new();
        let regs = RegisterFile {
            i32s: &[7, 4],
            refs: &[],
            banks: &banks,
        };
        assert!(!e.holds(&regs).unwrap());
        let sum = Expr::parse("%i0:1 - 1").unwrap().evaluate(&regs).unwrap();
        assert_eq!(
            sum.format(Default::default(), None),
            ((4i64 << 32) + 6).to_string()
        );
    }
}
