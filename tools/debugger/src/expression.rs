//! The expressions the debugger evaluates (`print`, conditions, displays,
//! `set var`'s values): registers (`%i3`, `%i0:1`, `%r2`) and numbers,
//! combined with C's operators as gdb reads them: unary `-` `+` `!` `~`,
//! `*` `/` `%`, `+` `-`, `<<` `>>`, comparisons, `==` `!=`, `&`, `^`,
//! `|`, `&&`, `||`, the conditional `a ? b : c`, character constants
//! (`'a'`, `'\n'`), casts (`(unsigned int)`, `(char)`, `(float)`, ...),
//! `sizeof(TYPE)` and `sizeof EXPR`, and parentheses.
//! Arithmetic follows C's usual conversions over the VM's
//! types (i32 as C's `int`, i64 as `long`, f32, f64) and the C integer
//! types literals and casts make (`1u`, `0xFFFFFFFF`, `(unsigned char)x`,
//! `c_int.rs`): integers wrap, as gdb's do, and of one width the unsigned
//! type wins (`-1 < 1u` is 0). An expression without registers is
//! evaluated without a program ([`Expr::is_constant`]), as gdb prints
//! `1 + 2` before `run`.

use std::collections::BTreeMap;

use irvm::number_text::{strtod_whole, strtof_whole};
use irvm::Ref;

use super::c_char::parse_char_constant;
use super::c_int::{parse_integer_literal, parse_type_name, CastType, IntType, Integer};
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
    /// A literal (`1u`, `1.5f`), or a value given by name (gdb's value
    /// history, `$1`): of its own type.
    Value(DebugValue),
    Unary(Unary, Box<Node>),
    /// `(TYPE) operand`.
    Cast(CastType, Box<Node>),
    Binary(Binary, Box<Node>, Box<Node>),
    /// `condition ? chosen : otherwise`: only the chosen side is
    /// evaluated, and the value is of that side's own type, as gdb gives
    /// it (`1 ? 2 : 3.5` is the `int` 2; no usual conversions between the
    /// two sides).
    Conditional(Box<Node>, Box<Node>, Box<Node>),
    /// `sizeof EXPR`: the size in bytes of the operand's type, an `int` as
    /// gdb 13's C parser types it; the operand is evaluated as gdb does
    /// for its type alone ([`Evaluation::Sizing`]). `sizeof(TYPE)` is a
    /// [`Node::Value`].
    SizeOf(Box<Node>),
}

/// How an expression is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Evaluation {
    /// For its value.
    Value,
    /// For its type only (`sizeof`'s operand), as gdb evaluates with
    /// `EVAL_AVOID_SIDE_EFFECTS`: an integer divided by zero is divided by
    /// one instead (`sizeof(1/0)` is 4, `sizeof(1/0 ? 1L : 2)` 8), the
    /// rest as for the value (shift warnings included).
    Sizing,
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

    /// A whole expression: a conditional `a ? b : c` (right associative,
    /// binding looser than `||`; `b` and `c` are whole expressions), or a
    /// binary one.
    fn conditional(&mut self) -> Result<Node, DebugCommandError> {
        let condition = self.binary(0)?;
        self.skip_blanks();
        if !self.rest().starts_with('?') {
            return Ok(condition);
        }
        self.at += 1;
        self.count_part()?;
        self.enter()?;
        let chosen = self.conditional()?;
        self.skip_blanks();
        if !self.rest().starts_with(':') {
            return Err(self.syntax_error());
        }
        self.at += 1;
        let otherwise = self.conditional()?;
        self.nesting -= 1;
        Ok(Node::Conditional(
            Box::new(condition),
            Box::new(chosen),
            Box::new(otherwise),
        ))
    }

    /// gdb's words for text that cannot continue the expression here,
    /// naming that text (`1 ? 2` is `near `''`).
    fn syntax_error(&self) -> DebugCommandError {
        DebugCommandError(format!(
            "A syntax error in expression, near `{}'.",
            self.rest()
        ))
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
        if let Some(after) = rest.strip_prefix("sizeof") {
            if !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                return self.size_of();
            }
        }
        if let Some((ty, length)) = cast_at(rest) {
            self.at += length;
            self.count_part()?;
            self.enter()?;
            let inner = self.unary()?;
            self.nesting -= 1;
            return Ok(Node::Cast(ty, Box::new(inner)));
        }
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
        // A negative number is its literal negated, typed by the literal
        // as in C: `-2147483648` is a `long` (2147483648 fits no `int`),
        // so `-2147483648 / -1` is 2147483648 as gdb prints it.
        Ok(Node::Unary(op, Box::new(inner)))
    }

    /// `sizeof(TYPE)` (a type the casts know: its size now) or
    /// `sizeof EXPR` (binding as a unary operator: `sizeof 1 + 1` is 5),
    /// the text at `sizeof`. As in gdb, `(TYPE)` after `sizeof` is the
    /// type's size, never a cast (`sizeof (char)1` is a syntax error near
    /// `1`).
    fn size_of(&mut self) -> Result<Node, DebugCommandError> {
        self.at += "sizeof".len();
        self.count_part()?;
        self.skip_blanks();
        if let Some((ty, length)) = cast_at(self.rest()) {
            self.at += length;
            return Ok(Node::Value(size_value(cast_type_size(ty))));
        }
        self.enter()?;
        let inner = self.unary()?;
        self.nesting -= 1;
        Ok(Node::SizeOf(Box::new(inner)))
    }

    fn operand(&mut self) -> Result<Node, DebugCommandError> {
        self.skip_blanks();
        let rest = self.rest();
        self.count_part()?;
        if let Some(inside) = rest.strip_prefix('(') {
            self.at += 1;
            self.enter()?;
            let node = self.conditional()?;
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
        // A character constant: a `char`, as gdb reads `'a'`.
        if rest.starts_with('\'') {
            let (value, used) = parse_char_constant(rest)?;
            self.at += used;
            return Ok(Node::Value(DebugValue::integer(value)));
        }
        // A word: a register or a number, up to the next blank, operator
        // or parenthesis (a number's exponent sign is its own).
        let mut end = 0;
        let bytes = rest.as_bytes();
        while end < bytes.len() {
            let b = bytes[end];
            // (`1e-5`; a hex float's is after its `p`: `0x1p-2`, while
            // `0x1e-2` is 0x1e minus 2, as gdb reads them.)
            let hex = rest.starts_with("0x") || rest.starts_with("0X");
            let exponent_mark: &[u8] = if hex { b"pP" } else { b"eE" };
            let exponent_sign = matches!(b, b'+' | b'-')
                && end > 0
                && exponent_mark.contains(&bytes[end - 1])
                && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.');
            // (`:` only in a register pair, `%i0:1`: elsewhere it is the
            // conditional's, `1?2:3`, `%i0?%i1:%i2`.)
            let pair_colon = b == b':'
                && rest.starts_with('%')
                && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
            let word_byte = b.is_ascii_alphanumeric()
                || matches!(b, b'_' | b'.' | b'$' | b'#')
                || pair_colon
                || (b == b'%' && end == 0);
            if !(word_byte || exponent_sign) {
                break;
            }
            end += 1;
        }
        if end == 0 {
            // No operand where one is needed (`1 +`, `1 + )`, `1 + @`):
            // gdb's words, naming the text where it is missing.
            return Err(self.syntax_error());
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

/// A cast at the start of `text`: `(` and a type's words and `)`
/// ([`parse_type_name`]), with the cast's length; `None` for a
/// parenthesis that is no cast. Only words and blanks are looked at, so
/// text of many `(` is read once.
fn cast_at(text: &str) -> Option<(CastType, usize)> {
    let inside = text.strip_prefix('(')?;
    let words = inside
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c.is_ascii_whitespace()))
        .unwrap_or(inside.len());
    if !inside[words..].starts_with(')') {
        return None;
    }
    let ty = parse_type_name(&inside[..words])?;
    Some((ty, 1 + words + 1))
}

/// The size in bytes of a type a cast names, as on x86-64.
fn cast_type_size(ty: CastType) -> u32 {
    match ty {
        CastType::Int(t) => t.bits() / 8,
        CastType::F32 => 4,
        CastType::F64 => 8,
    }
}

/// A `sizeof`'s value: an `int`, as gdb 13's C parser types it
/// (`whatis sizeof(int)` is `int`).
fn size_value(bytes: u32) -> DebugValue {
    DebugValue::integer(Integer::new(IntType::Int, i128::from(bytes)))
}

/// A register or a number: an integer literal typed as C types it
/// ([`parse_integer_literal`]), or a float: a `double`, a `float` with
/// an `f` or `F` after it (`1.5f`).
fn parse_word(word: &str, whole: &str) -> Result<Node, DebugCommandError> {
    if word.starts_with('%') {
        return RegisterRef::parse(word).map(Node::Register);
    }
    if let Some(literal) = parse_integer_literal(word) {
        return literal.map(|i| Node::Value(DebugValue::integer(i)));
    }
    let hex = word.starts_with("0x") || word.starts_with("0X");
    let float_shaped = word.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && if hex {
            word.contains(['.', 'p', 'P'])
        } else {
            word.contains(['.', 'e', 'E'])
        };
    if float_shaped {
        // gdb takes a last `f` as the `float` suffix, a hex float's too
        // (`0x1.8f` is 1.5), and reads the rest with glibc's `sscanf`,
        // which takes an exponent mark without digits as no exponent
        // (`1.5e` and `1.5e+` are 1.5, `0x1p` is 1).
        let read_f32 = |t: &str| {
            let t = without_empty_exponent(t, hex);
            if hex {
                strtof_whole(t)
            } else {
                t.parse::<f32>().ok()
            }
        };
        let read_f64 = |t: &str| {
            let t = without_empty_exponent(t, hex);
            if hex {
                strtod_whole(t)
            } else {
                t.parse::<f64>().ok()
            }
        };
        if let Some(f32_text) = word.strip_suffix(['f', 'F']) {
            if let Some(v) = read_f32(f32_text) {
                return Ok(Node::Value(DebugValue::F32(v)));
            }
        }
        if let Some(v) = read_f64(word) {
            return Ok(Node::Value(DebugValue::F64(v)));
        }
        if word.ends_with(['l', 'L']) && read_f64(&word[..word.len() - 1]).is_some() {
            return Err(DebugCommandError(format!(
                "cannot evaluate `{whole}`: `{word}` is a long double, which the VM has not \
                 (gdb prints one to 21 digits, `1.1l` as 1.10000000000000000002, more than an \
                 f64 holds; f32 and f64 are `1.5f` and `1.5`)"
            )));
        }
        return Err(DebugCommandError(format!("Invalid number \"{word}\".")));
    }
    Err(DebugCommandError(format!(
        "cannot evaluate `{whole}`: `{word}` is neither a register (%iN, %iN:M, %rN) nor a number"
    )))
}

/// A float's text without a last exponent mark that no digits follow
/// (`1.5e`, `1e+`, `0x1p-`: `e` or `E`, for a hex float `p` or `P`, and
/// an optional sign), as glibc's `sscanf("%lg")`, which gdb reads floats
/// with, consumes such a mark and ignores it.
fn without_empty_exponent(text: &str, hex: bool) -> &str {
    let unsigned = text.strip_suffix(['+', '-']).unwrap_or(text);
    let marks: [char; 2] = if hex { ['p', 'P'] } else { ['e', 'E'] };
    match unsigned.strip_suffix(marks) {
        Some(mantissa)
            if mantissa.ends_with(|c: char| {
                c == '.'
                    || if hex {
                        c.is_ascii_hexdigit()
                    } else {
                        c.is_ascii_digit()
                    }
            }) =>
        {
            mantissa
        }
        _ => text,
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
        let root = parser.conditional()?;
        parser.skip_blanks();
        if !parser.rest().is_empty() {
            // Text that continues no expression, in gdb's words: a `)`
            // closing nothing ends gdb's expression (`1)`), other text is
            // a syntax error (`sizeof (char)1`).
            if parser.rest().starts_with(')') {
                return Err(DebugCommandError("Junk after end of expression.".into()));
            }
            return Err(parser.syntax_error());
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
                Node::Value(v) => !matches!(v, DebugValue::Ref(_)),
                Node::Unary(_, a) | Node::Cast(_, a) => constant(a),
                Node::Binary(_, a, b) => constant(a) && constant(b),
                Node::Conditional(a, b, c) => constant(a) && constant(b) && constant(c),
                Node::SizeOf(a) => constant(a),
            }
        }
        constant(&self.root)
    }

    /// Its value without a frame (an expression naming a register cannot
    /// have one).
    pub fn evaluate_constant(&self) -> Result<DebugValue, DebugCommandError> {
        self.evaluate_constant_noting(&mut Vec::new())
    }

    /// [`Expr::evaluate_constant`], with gdb's warnings ([`Expr::evaluate_noting`]).
    pub fn evaluate_constant_noting(
        &self,
        warnings: &mut Vec<String>,
    ) -> Result<DebugValue, DebugCommandError> {
        let banks = BTreeMap::new();
        let regs = RegisterFile {
            i32s: &[],
            refs: &[],
            banks: &banks,
        };
        self.evaluate_noting(&regs, warnings)
    }

    /// Its value in a frame.
    pub fn evaluate(&self, regs: &RegisterFile<'_>) -> Result<DebugValue, DebugCommandError> {
        self.evaluate_noting(regs, &mut Vec::new())
    }

    /// Its value in a frame, adding to `warnings` the warnings gdb prints
    /// before such a value, one for each operation that gives one as it
    /// is evaluated (`left shift count >= width of type` for `1 << 40`;
    /// gdb prints them as `warning: ...`).
    pub fn evaluate_noting(
        &self,
        regs: &RegisterFile<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<DebugValue, DebugCommandError> {
        self.value(&self.root, regs, Evaluation::Value, warnings)
    }

    fn value(
        &self,
        node: &Node,
        regs: &RegisterFile<'_>,
        mode: Evaluation,
        warnings: &mut Vec<String>,
    ) -> Result<DebugValue, DebugCommandError> {
        Ok(match node {
            Node::Register(r) => regs.read(*r)?,
            Node::Value(v) => v.clone(),
            Node::Unary(op, inner) => {
                let v = self.value(inner, regs, mode, warnings)?;
                self.unary(*op, v)?
            }
            Node::Cast(ty, inner) => {
                let v = self.value(inner, regs, mode, warnings)?;
                self.cast(*ty, v)?
            }
            Node::Binary(op @ (Binary::And | Binary::Or), a, b) => {
                // C's short circuit: the right side is not evaluated when
                // the left decides.
                let left = truth(&self.value(a, regs, mode, warnings)?);
                let decided = if *op == Binary::And { !left } else { left };
                if decided {
                    truth_value(left)
                } else {
                    truth_value(truth(&self.value(b, regs, mode, warnings)?))
                }
            }
            Node::Binary(op, a, b) => {
                let (a, mut b) = (
                    self.value(a, regs, mode, warnings)?,
                    self.value(b, regs, mode, warnings)?,
                );
                if mode == Evaluation::Sizing && matches!(op, Binary::Div | Binary::Rem) {
                    if let Some(zero) = b.as_integer().filter(|i| i.value() == 0) {
                        b = DebugValue::integer(Integer::new(zero.ty(), 1));
                    }
                }
                self.binary(*op, a, b, warnings)?
            }
            Node::Conditional(condition, chosen, otherwise) => {
                let holds = truth(&self.value(condition, regs, mode, warnings)?);
                let side = if holds { chosen } else { otherwise };
                self.value(side, regs, mode, warnings)?
            }
            Node::SizeOf(inner) => {
                let v = self.value(inner, regs, Evaluation::Sizing, warnings)?;
                size_value(self.type_size(&v)?)
            }
        })
    }

    /// The size in bytes of `v`'s type, for `sizeof`: a ref and text have
    /// no C type, and no size.
    fn type_size(&self, v: &DebugValue) -> Result<u32, DebugCommandError> {
        Ok(match v {
            DebugValue::I32(_) | DebugValue::F32(_) => 4,
            DebugValue::I64(_) | DebugValue::F64(_) => 8,
            DebugValue::Integer(i) => i.ty().bits() / 8,
            DebugValue::Ref(_) | DebugValue::Text(_) => {
                return Err(DebugCommandError(format!(
                    "cannot take the size of a {} in `{}`: only numbers have one",
                    v.type_name(),
                    self.text
                )))
            }
        })
    }

    fn unary(&self, op: Unary, v: DebugValue) -> Result<DebugValue, DebugCommandError> {
        if op == Unary::Not {
            return Ok(truth_value(!truth(&v)));
        }
        Ok(match (op, number(&v)) {
            // An integer operand is promoted first (`-(char)1` is an
            // `int`), and wraps in its type (`-1u` is 4294967295).
            (_, Some(Number::Int(i))) => {
                let i = i.to(i.ty().promoted());
                DebugValue::integer(match op {
                    Unary::Negate => Integer::new(i.ty(), i.value().wrapping_neg()),
                    Unary::Complement => Integer::new(i.ty(), !i.value()),
                    _ => i,
                })
            }
            // gdb negates a float as `0 - x` (`value_neg`): `-0.0` is 0
            // and a NaN keeps its sign (`-(0.0/0)` is x86's -nan).
            (Unary::Negate, Some(Number::F32(x))) => DebugValue::F32(0.0 - x),
            (Unary::Negate, Some(Number::F64(x))) => DebugValue::F64(0.0 - x),
            (Unary::Plus, Some(Number::F32(x))) => DebugValue::F32(x),
            (Unary::Plus, Some(Number::F64(x))) => DebugValue::F64(x),
            (Unary::Complement, Some(_)) => {
                return Err(DebugCommandError(
                    "Argument to complement operation not an integer, boolean.".into(),
                ))
            }
            _ => return Err(self.not_applicable(op, &v)),
        })
    }

    fn not_applicable(&self, op: Unary, v: &DebugValue) -> DebugCommandError {
        let symbol = match op {
            Unary::Negate => "-",
            Unary::Plus => "+",
            Unary::Not => "!",
            Unary::Complement => "~",
        };
        DebugCommandError(format!(
            "cannot apply `{symbol}` to a {} in `{}`",
            v.type_name(),
            self.text
        ))
    }

    /// `(TYPE) v`, as C converts: integers cut to the type's width,
    /// floats truncated toward zero, integers rounded to a float.
    fn cast(&self, ty: CastType, v: DebugValue) -> Result<DebugValue, DebugCommandError> {
        let Some(n) = number(&v) else {
            return Err(DebugCommandError(format!(
                "cannot cast a {} to {} in `{}`",
                v.type_name(),
                match ty {
                    CastType::Int(t) => t.name(),
                    CastType::F32 => "f32",
                    CastType::F64 => "f64",
                },
                self.text
            )));
        };
        Ok(match (ty, n) {
            (CastType::Int(t), Number::Int(i)) => DebugValue::integer(i.to(t)),
            (CastType::Int(t), Number::F32(x)) => {
                DebugValue::integer(Integer::from_float(t, x.into()))
            }
            (CastType::Int(t), Number::F64(x)) => DebugValue::integer(Integer::from_float(t, x)),
            (CastType::F32, Number::Int(i)) => DebugValue::F32(i.value() as f32),
            (CastType::F32, Number::F32(x)) => DebugValue::F32(x),
            (CastType::F32, Number::F64(x)) => DebugValue::F32(x as f32),
            (CastType::F64, Number::Int(i)) => DebugValue::F64(i.value() as f64),
            (CastType::F64, Number::F32(x)) => DebugValue::F64(x.into()),
            (CastType::F64, Number::F64(x)) => DebugValue::F64(x),
        })
    }

    fn binary(
        &self,
        op: Binary,
        a: DebugValue,
        b: DebugValue,
        warnings: &mut Vec<String>,
    ) -> Result<DebugValue, DebugCommandError> {
        if matches!(
            op,
            Binary::Eq | Binary::Ne | Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge
        ) {
            return self.compare(op, &a, &b);
        }
        let (Some(x), Some(y)) = (number(&a), number(&b)) else {
            return Err(DebugCommandError(format!(
                "cannot apply `{}` to {} and {} in `{}`",
                op.symbol(),
                a.type_name(),
                b.type_name(),
                self.text
            )));
        };
        let integer_only = matches!(
            op,
            Binary::Rem
                | Binary::Shl
                | Binary::Shr
                | Binary::BitAnd
                | Binary::BitXor
                | Binary::BitOr
        );
        Ok(match (x, y) {
            (Number::Int(x), Number::Int(y)) => {
                DebugValue::integer(integer_operation(op, x, y, warnings)?)
            }
            _ if integer_only => {
                return Err(DebugCommandError(
                    "Integer-only operation on floating point number.".into(),
                ))
            }
            (Number::F64(_), _) | (_, Number::F64(_)) => {
                DebugValue::F64(float_operation(op, x.as_f64(), y.as_f64())?)
            }
            _ => DebugValue::F32(float_operation(op, x.as_f32(), y.as_f32())?),
        })
    }

    /// A comparison: numbers by value after C's conversions (`-1 < 1u`
    /// compares two `unsigned int`s), refs by identity (`==`, `!=`; a ref
    /// and 0 compare as null or not).
    fn compare(
        &self,
        op: Binary,
        a: &DebugValue,
        b: &DebugValue,
    ) -> Result<DebugValue, DebugCommandError> {
        let refs_only = |equal: bool| match op {
            Binary::Eq => Ok(truth_value(equal)),
            Binary::Ne => Ok(truth_value(!equal)),
            _ => Err(DebugCommandError(format!(
                "refs compare only with == and != (in `{}`)",
                self.text
            ))),
        };
        let is_zero = |v: &DebugValue| v.as_integer().is_some_and(|i| i.value() == 0);
        let ordering = match (a, b) {
            (DebugValue::Ref(x), DebugValue::Ref(y)) => return refs_only(x.ptr_eq(y)),
            (DebugValue::Ref(x), z) | (z, DebugValue::Ref(x)) if is_zero(z) => {
                return refs_only(x.is_null())
            }
            _ => {
                let (Some(x), Some(y)) = (number(a), number(b)) else {
                    return Err(DebugCommandError(format!(
                        "cannot compare {} with {} in `{}`",
                        a.type_name(),
                        b.type_name(),
                        self.text
                    )));
                };
                match (x, y) {
                    (Number::Int(x), Number::Int(y)) => {
                        let common = IntType::common(x.ty(), y.ty());
                        Some(x.to(common).value().cmp(&y.to(common).value()))
                    }
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
        Ok(truth_value(result))
    }

    /// Whether it holds in a frame (a non-zero, non-null value).
    pub fn holds(&self, regs: &RegisterFile<'_>) -> Result<bool, DebugCommandError> {
        Ok(truth(&self.evaluate(regs)?))
    }
}

/// A number an operator takes: a C integer (a comparison's result is an
/// `int`), an f32 or an f64.
#[derive(Clone, Copy)]
enum Number {
    Int(Integer),
    F32(f32),
    F64(f64),
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i.value() as f64,
            Number::F32(x) => x.into(),
            Number::F64(x) => x,
        }
    }

    fn as_f32(self) -> f32 {
        match self {
            Number::Int(i) => i.value() as f32,
            Number::F32(x) => x,
            Number::F64(x) => x as f32,
        }
    }
}

fn number(v: &DebugValue) -> Option<Number> {
    match v {
        DebugValue::F32(x) => Some(Number::F32(*x)),
        DebugValue::F64(x) => Some(Number::F64(*x)),
        other => other.as_integer().map(Number::Int),
    }
}

/// A comparison's or a logical operator's result: an `int`, 1 or 0, as
/// in C and gdb (`whatis 1 < 2` is `int`), and as the VM's own `vm.cmp.*`
/// instructions give an i32.
fn truth_value(holds: bool) -> DebugValue {
    DebugValue::I32(i32::from(holds))
}

/// Whether a value counts as true (non-zero, non-null).
fn truth(v: &DebugValue) -> bool {
    match v {
        DebugValue::I32(x) => *x != 0,
        DebugValue::I64(x) => *x != 0,
        DebugValue::Integer(i) => i.value() != 0,
        DebugValue::F32(x) => *x != 0.0,
        DebugValue::F64(x) => *x != 0.0,
        DebugValue::Ref(r) => !Ref::is_null(r),
        DebugValue::Text(t) => !t.is_empty(),
    }
}

/// A float operator on two floats of one type.
fn float_operation<F>(op: Binary, x: F, y: F) -> Result<F, DebugCommandError>
where
    F: std::ops::Mul<Output = F>
        + std::ops::Div<Output = F>
        + std::ops::Add<Output = F>
        + std::ops::Sub<Output = F>,
{
    Ok(match op {
        Binary::Mul => x * y,
        Binary::Div => x / y,
        Binary::Add => x + y,
        Binary::Sub => x - y,
        _ => return unreachable_operator(op),
    })
}

/// Integer operator `op` on `x` and `y` as C computes it: both converted
/// to their common type (C's usual arithmetic conversions), the
/// operation made on their values and the result cut to that type's width
/// (wrapping; division, remainder and `>>` unsigned on unsigned types);
/// a shift is of the promoted left operand's type, its count bounded by
/// that width (gdb's warning added to `warnings` when it is not); or gdb's
/// `Division by zero`.
fn integer_operation(
    op: Binary,
    x: Integer,
    y: Integer,
    warnings: &mut Vec<String>,
) -> Result<Integer, DebugCommandError> {
    if matches!(op, Binary::Shl | Binary::Shr) {
        let x = x.to(x.ty().promoted());
        let (value, warning) = shift(x, y.value(), op == Binary::Shl);
        warnings.extend(warning);
        return Ok(value);
    }
    let ty = IntType::common(x.ty(), y.ty());
    let (x, y) = (x.to(ty).value(), y.to(ty).value());
    let division_by_zero = || DebugCommandError("Division by zero".into());
    // The values are at most 64 bits wide: no i128 operation but `*`
    // overflows, and that one wraps modulo 2^128, a multiple of the width's
    // modulus.
    let raw = match op {
        Binary::Mul => x.wrapping_mul(y),
        Binary::Div => x.checked_div(y).ok_or_else(division_by_zero)?,
        Binary::Rem => x.checked_rem(y).ok_or_else(division_by_zero)?,
        Binary::Add => x + y,
        Binary::Sub => x - y,
        Binary::BitAnd => x & y,
        Binary::BitXor => x ^ y,
        Binary::BitOr => x | y,
        _ => return unreachable_operator(op),
    };
    Ok(Integer::new(ty, raw))
}

/// `x << count` or `x >> count` (arithmetic for a signed `x`) in `x`'s
/// width: a count out of 0..width gives 0 (or, shifting a negative number
/// right, -1) and gdb 13's warning (`left shift count >= width of type`,
/// `right shift count is negative`), as gdb's do.
fn shift(x: Integer, count: i128, left: bool) -> (Integer, Option<String>) {
    let width = x.ty().bits();
    let direction = if left { "left" } else { "right" };
    let warning = if count < 0 {
        Some(format!("{direction} shift count is negative"))
    } else if count >= i128::from(width) {
        Some(format!("{direction} shift count >= width of type"))
    } else {
        None
    };
    let raw = match u32::try_from(count) {
        Ok(c) if c < width => {
            if left {
                x.value() << c
            } else {
                x.value() >> c
            }
        }
        _ if !left && x.value() < 0 => -1,
        _ => 0,
    };
    (Integer::new(x.ty(), raw), warning)
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
        assert_eq!(constant("3 > 2 > 1"), "i32 0");
        assert_eq!(constant("1 == 1"), "i32 1");
        assert_eq!(constant("0.5 && 1"), "i32 1");
        assert_eq!(constant("!5"), "i32 0");
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
        assert_eq!(constant("1 +"), "A syntax error in expression, near `'.");
        assert_eq!(
            constant("1 + ) * 2"),
            "A syntax error in expression, near `) * 2'."
        );
        assert!(constant("(1").contains("not closed"), "{}", constant("(1"));
        assert_eq!(constant("1)"), "Junk after end of expression.");
        assert_eq!(constant("1 2"), "A syntax error in expression, near `2'.");
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

    /// Each as gdb 13.1 prints `print EXPR` and `whatis EXPR` with an
    /// x86-64 C program loaded (C's names for the types: ui32 is
    /// `unsigned int`, ui64 `unsigned long`, i8 `char`).
    #[test]
    fn unsigned_and_sized_integers_convert_as_c_does() {
        assert_eq!(constant("0xFFFFFFFFFFFFFFFF"), "ui64 18446744073709551615");
        assert_eq!(constant("-1 < 1u"), "i32 0");
        assert_eq!(constant("-1L < 1u"), "i32 1");
        assert_eq!(constant("-1 < 1ul"), "i32 0");
        assert_eq!(constant("-1 / 2u"), "ui32 2147483647");
        assert_eq!(constant("-1 % 7u"), "ui32 3");
        assert_eq!(constant("10 % -3u"), "ui32 10");
        assert_eq!(constant("-1 >> 1u"), "i32 -1");
        assert_eq!(constant("0x80000000 >> 1"), "ui32 1073741824");
        assert_eq!(constant("1u << 31"), "ui32 2147483648");
        assert_eq!(constant("-1L / 2ul"), "ui64 9223372036854775807");
        assert_eq!(constant("-7L / 2u"), "i64 -3");
        assert_eq!(constant("1u - 2"), "ui32 4294967295");
        assert_eq!(constant("0xFFFFFFFFu + 1"), "ui32 0");
        assert_eq!(constant("1u * -1"), "ui32 4294967295");
        assert_eq!(constant("-1u"), "ui32 4294967295");
        assert_eq!(constant("~0u"), "ui32 4294967295");
        assert_eq!(constant("4294967295u == -1"), "i32 1");
        assert_eq!(constant("4294967295 == -1"), "i32 0");
        assert_eq!(
            constant("(unsigned long)1 - (long)2"),
            "ui64 18446744073709551615"
        );
        assert_eq!(constant("(unsigned int)1 - (long)2"), "i64 -1");
        assert_eq!(constant("(char)1 - (unsigned char)2"), "i32 -1");
        assert_eq!(constant("-(char)1"), "i32 -1");
        assert_eq!(constant("(char)65"), "i8 65 'A'");
        assert_eq!(constant("(char)200 == 200"), "i32 0");
        assert_eq!(constant("(unsigned char)200 == 200"), "i32 1");
        assert_eq!(constant("(unsigned char)300.7"), "ui8 44 ','");
        assert_eq!(constant("(short)70000"), "i16 4464");
        assert_eq!(constant("(unsigned short)-1"), "ui16 65535");
        assert_eq!(constant("(int)4294967295"), "i32 -1");
        assert_eq!(constant("(int)1e10"), "i32 1410065408");
        assert_eq!(constant("(unsigned int)-1.5"), "ui32 4294967295");
        assert_eq!(constant("(long)1e30"), "i64 9223372036854775807");
        assert_eq!(constant("(int) + 1"), "i32 1");
        assert_eq!(constant("(float)1/4"), "f32 0.25");
        assert_eq!(constant("(float)16777217 == 16777216"), "i32 1");
        assert_eq!(constant("1.5f + 1u"), "f32 2.5");
        assert_eq!(constant("1.5 + 1u"), "f64 2.5");
        assert_eq!(constant("(double)1.5f"), "f64 1.5");
        assert_eq!(
            constant("1.5f % 1"),
            "Integer-only operation on floating point number."
        );
        assert_eq!(constant("10f"), "Invalid number \"10f\".");
        assert_eq!(constant("1.5u"), "Invalid number \"1.5u\".");
        // A parenthesis of other words is no cast.
        assert!(constant("(nosuch)1").contains("`nosuch` is neither"));
        // Casts count against the nesting bound, as unary operators do.
        let casts = format!("{}1", "(int)".repeat(100_000));
        assert!(constant(&casts).contains("nested too deeply"));
        let mixed = format!("{}1", "((char)".repeat(50_000));
        assert!(constant(&mixed).contains("nested too deeply"));
    }

    /// Each as gdb 13.1 evaluates it (`print`, `whatis`).
    #[test]
    fn hex_floats_nan_casts_and_negated_floats_read_as_gdb_reads_them() {
        assert_eq!(constant("0x1.8p1"), "f64 3");
        assert_eq!(constant("0x1p-2 + 0"), "f64 0.25");
        assert_eq!(constant("0x1p3f"), "f32 8");
        assert_eq!(constant("0x1.8f"), "f32 1.5");
        assert_eq!(constant("0x1e-2"), "i32 28");
        assert_eq!(constant("(int)(0.0/0)"), "i32 -1");
        assert_eq!(constant("(long)(0.0/0)"), "i64 9223372036854775807");
        assert_eq!(constant("-0.0"), "f64 0");
        assert_eq!(constant("-1.5f"), "f32 -1.5");
        assert!(constant("0x1p3l").contains("is a long double"));
    }

    /// Each as gdb 13.1 prints `print EXPR` and `whatis EXPR` with an
    /// x86-64 C program loaded: the chosen side alone is evaluated, of its
    /// own type.
    #[test]
    fn the_conditional_operator_evaluates_as_gdb_does() {
        assert_eq!(constant("1 ? 2 : 3"), "i32 2");
        assert_eq!(constant("0?2:3"), "i32 3");
        assert_eq!(constant("1 ? 2 : 3 ? 4 : 5"), "i32 2");
        assert_eq!(constant("0 ? 2 : 0 ? 4 : 5"), "i32 5");
        assert_eq!(constant("1 ? 0 ? 5 : 6 : 7"), "i32 6");
        assert_eq!(constant("0 ? 1/0 : 5"), "i32 5");
        assert_eq!(constant("1 ? 5 : 1/0"), "i32 5");
        assert_eq!(constant("1 ? 1/0 : 5"), "Division by zero");
        assert_eq!(constant("1 ? 2 : 3.5"), "i32 2");
        assert_eq!(constant("1 ? 2u : -1"), "ui32 2");
        assert_eq!(constant("0 ? 2u : -1"), "i32 -1");
        assert_eq!(constant("1 ? 1.5f : 2.0"), "f32 1.5");
        assert_eq!(constant("1 ? (char)65 : (char)66"), "i8 65 'A'");
        assert_eq!(constant("1 + 1 ? 2 : 3"), "i32 2");
        assert_eq!(constant("1 || 0 ? 7 : 8"), "i32 7");
        assert_eq!(constant("0 ? 2 : 3 + 10"), "i32 13");
        assert_eq!(constant("(1 ? 2 : 3) * 4"), "i32 8");
        assert_eq!(constant("0.0 ? 1 : 2"), "i32 2");
        let near = |t: &str| format!("A syntax error in expression, near `{t}'.");
        assert_eq!(constant("1 ?"), near(""));
        assert_eq!(constant("1 ? 2"), near(""));
        assert_eq!(constant("1 ? 2 :"), near(""));
        assert_eq!(constant("1 ? : 3"), near(": 3"));
        assert_eq!(constant("1 ? 2 : 3 : 4"), near(": 4"));
        // A chain of them counts against the nesting bound.
        let chain = format!("{}1", "0 ? 1 : ".repeat(100_000));
        assert!(constant(&chain).contains("nested too deeply"));
        let fine = format!("{}1", "0 ? 1 : ".repeat(100));
        assert_eq!(constant(&fine), "i32 1");
    }

    /// Each as gdb 13.1 prints `print EXPR` and `whatis EXPR` with an
    /// x86-64 C program loaded: an `int` (gdb 13's C parser types
    /// `sizeof` so), its operand evaluated for its type alone.
    #[test]
    fn sizeof_gives_a_types_size_as_gdb_does() {
        assert_eq!(constant("sizeof(int)"), "i32 4");
        assert_eq!(constant("sizeof ( int )"), "i32 4");
        assert_eq!(constant("sizeof(char)"), "i32 1");
        assert_eq!(constant("sizeof(unsigned char)"), "i32 1");
        assert_eq!(constant("sizeof(short)"), "i32 2");
        assert_eq!(constant("sizeof(long long)"), "i32 8");
        assert_eq!(constant("sizeof(unsigned long)"), "i32 8");
        assert_eq!(constant("sizeof(float)"), "i32 4");
        assert_eq!(constant("sizeof(double)"), "i32 8");
        assert_eq!(constant("sizeof 1"), "i32 4");
        assert_eq!(constant("sizeof 1L"), "i32 8");
        assert_eq!(constant("sizeof 1.5"), "i32 8");
        assert_eq!(constant("sizeof 1.5f"), "i32 4");
        assert_eq!(constant("sizeof 'a'"), "i32 1");
        assert_eq!(constant("sizeof -1"), "i32 4");
        assert_eq!(constant("sizeof 1 + 1"), "i32 5");
        assert_eq!(constant("sizeof sizeof 1"), "i32 4");
        assert_eq!(constant("sizeof(1+1L)"), "i32 8");
        assert_eq!(constant("sizeof((char)1)"), "i32 1");
        assert_eq!(constant("sizeof(-(char)1)"), "i32 4");
        assert_eq!(constant("sizeof(1 < 2)"), "i32 4");
        assert_eq!(constant("sizeof(1u << 2L)"), "i32 4");
        assert_eq!(constant("sizeof(int) * 2"), "i32 8");
        assert_eq!(constant("-sizeof(int)"), "i32 -4");
        assert_eq!(constant("sizeof 1 ? 2 : 3"), "i32 2");
        // Evaluated for the type: a division by zero divides by one.
        assert_eq!(constant("sizeof(1/0)"), "i32 4");
        assert_eq!(constant("sizeof(1 % 0)"), "i32 4");
        assert_eq!(constant("sizeof(1/0 ? 1L : 2)"), "i32 8");
        assert_eq!(constant("sizeof(0 ? 1L : 2)"), "i32 4");
        assert_eq!(constant("sizeof(1 ? 2 : 1L)"), "i32 4");
        assert_eq!(
            constant("sizeof(1.5 % 1)"),
            "Integer-only operation on floating point number."
        );
        let near = |t: &str| format!("A syntax error in expression, near `{t}'.");
        assert_eq!(constant("sizeof"), near(""));
        assert_eq!(constant("sizeof()"), near(")"));
        assert_eq!(constant("sizeof (char)1"), near("1"));
        // A word that only starts with `sizeof` is no operator.
        assert!(constant("sizeofx").contains("`sizeofx` is neither"));
        let deep = format!("{}1", "sizeof ".repeat(100_000));
        assert!(constant(&deep).contains("nested too deeply"));
    }

    /// Each as gdb 13.1 prints `print EXPR` and `whatis EXPR`: gdb reads
    /// a float with glibc's `sscanf`, which takes an exponent mark without
    /// digits as no exponent.
    #[test]
    fn an_exponent_without_digits_reads_as_none_as_gdb_reads_it() {
        assert_eq!(constant("1.5e"), "f64 1.5");
        assert_eq!(constant("1e"), "f64 1");
        assert_eq!(constant("1.5e+"), "f64 1.5");
        assert_eq!(constant("1.5e-"), "f64 1.5");
        assert_eq!(constant("1.5E"), "f64 1.5");
        assert_eq!(constant("1.e"), "f64 1");
        assert_eq!(constant(".5e"), "f64 0.5");
        assert_eq!(constant("0x1p"), "f64 1");
        assert_eq!(constant("0x1p+"), "f64 1");
        assert_eq!(constant("0x1.8p"), "f64 1.5");
        assert_eq!(constant("1ef"), "f32 1");
        assert_eq!(constant("1.5e-f"), "f32 1.5");
        assert_eq!(constant("0x1pf"), "f32 1");
        assert_eq!(constant("1.5e+x"), "Invalid number \"1.5e+x\".");
        assert_eq!(constant("1.5e1x"), "Invalid number \"1.5e1x\".");
        assert_eq!(constant("1ee"), "Invalid number \"1ee\".");
        assert_eq!(constant("0xp"), "Invalid number \"0xp\".");
    }

    #[test]
    fn a_shift_out_of_its_width_warns_as_gdb_does() {
        let warnings = |text: &str| {
            let mut w = Vec::new();
            let v = Expr::parse(text)
                .and_then(|e| e.evaluate_constant_noting(&mut w))
                .map(|v| v.format(Default::default(), None));
            (v.ok(), w)
        };
        let too_far = |d: &str| format!("{d} shift count >= width of type");
        assert_eq!(warnings("1 << 31"), (Some("-2147483648".into()), vec![]));
        assert_eq!(
            warnings("1 << 32"),
            (Some("0".into()), vec![too_far("left")])
        );
        assert_eq!(
            warnings("1L >> 64"),
            (Some("0".into()), vec![too_far("right")])
        );
        assert_eq!(
            warnings("1 >> -1"),
            (
                Some("0".into()),
                vec!["right shift count is negative".to_string()]
            )
        );
        assert_eq!(
            warnings("(1 << 40) + (1 << 50)").1,
            vec![too_far("left"), too_far("left")]
        );
        // Warned before the error the evaluation then meets.
        assert_eq!(warnings("(1 << 40) / 0"), (None, vec![too_far("left")]));
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
