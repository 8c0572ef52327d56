//! Log messages of logpoints (DAP's `logMessage`): text with `{EXPR}`
//! parts, each replaced by the expression's value where the breakpoint is
//! reached; the program goes on without stopping.

use crate::expr::{Format, RegisterFile};
use crate::expression::Expr;
use crate::DebugCommandError;

/// A parsed log message.
#[derive(Clone, Debug)]
pub struct LogMessage {
    pieces: Vec<Piece>,
}

#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    Value(Expr),
}

impl LogMessage {
    /// Parses `text`: `{EXPR}` is an expression ([`Expr`]); `{{` and `}}`
    /// are braces.
    pub fn parse(text: &str) -> Result<LogMessage, DebugCommandError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let inner: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    let expr = Expr::parse(&inner).map_err(|e| {
                        DebugCommandError(format!("in the log message, `{{{inner}}}`: {}", e.0))
                    })?;
                    pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    pieces.push(Piece::Value(expr));
                }
                _ => literal.push(c),
            }
        }
        pieces.push(Piece::Text(literal));
        Ok(LogMessage { pieces })
    }

    /// The message with the values of its expressions.
    pub(crate) fn render(&self, regs: &RegisterFile<'_>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Value(e) => match e.evaluate(regs) {
                    Ok(v) => out.push_str(&v.format(Format::Natural, None)),
                    Err(err) => out.push_str(&format!("<{}>", err.0)),
                },
            }
        }
        out
    }
}
