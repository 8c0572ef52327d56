//! What a function's `iree.abi.declaration` reflection attribute says about
//! its arguments and results (`sync func @predict(%input0: tensor<4x8xf32>)
//! -> (%output0: tensor<4x3xf32>)`): names, tensor shapes (`?` for a dynamic
//! dimension) and element types, so arguments are checked, and lists and
//! scalars converted, before the call.

use irvm_hal::ElementType;

/// One declared argument or result.
#[derive(Clone, Debug, PartialEq)]
pub struct Declared {
    /// The name (`input0`), without `%`.
    pub name: String,
    /// The type as written (`tensor<4x8xf32>`, `i32`).
    pub text: String,
    /// For a tensor: its dimensions (`None` for `?`) and element type.
    pub tensor: Option<(Vec<Option<i64>>, ElementType)>,
}

/// The arguments and results a declaration lists, or `None` when it is
/// missing or not of the form iree-compile writes.
pub fn parse(declaration: &str) -> Option<(Vec<Declared>, Vec<Declared>)> {
    let at = declaration.find('@')?;
    let rest = &declaration[at..];
    let open = rest.find('(')?;
    let (args, after) = balanced(&rest[open..])?;
    let results = match after.trim_start().strip_prefix("->") {
        Some(r) => {
            let r = r.trim_start();
            if r.starts_with('(') {
                balanced(r)?.0
            } else {
                r
            }
        }
        None => "",
    };
    Some((list(args)?, list(results)?))
}

/// The text inside the parentheses `text` starts with, and what follows.
fn balanced(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[1..i], &text[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// `%a: T, %b: U` split at top-level commas.
fn list(text: &str) -> Option<Vec<Declared>> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let mut pieces = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&text[start..]);
    for (k, piece) in pieces.into_iter().enumerate() {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (name, ty) = match piece.split_once(':') {
            Some((n, t)) if n.trim_start().starts_with('%') => (n.trim()[1..].to_string(), t),
            _ => (format!("{k}"), piece),
        };
        // Attributes after the type (`{iree.abi.name = ...}`) are not part of it.
        let ty = ty.trim();
        let ty = match ty.find(" {") {
            Some(i) => ty[..i].trim(),
            None => ty,
        };
        items.push(Declared {
            name,
            text: ty.to_string(),
            tensor: tensor(ty),
        });
    }
    Some(items)
}

/// `tensor<4x?xf32>` as dimensions and element type.
fn tensor(ty: &str) -> Option<(Vec<Option<i64>>, ElementType)> {
    let inner = ty.strip_prefix("tensor<")?.strip_suffix('>')?;
    // An encoding (`tensor<4xf32, #enc>`) is not part of the element type.
    let inner = inner.split(',').next()?.trim();
    let mut parts: Vec<&str> = inner.split('x').collect();
    let element = parts.pop()?;
    let element = match ElementType::parse(element).ok()? {
        // `i1` tensors travel as IREE's 8-bit booleans.
        t if t.numerical() == irvm_hal::numerical::INTEGER && t.bits() == 1 => {
            ElementType::new(irvm_hal::numerical::BOOLEAN, 8)
        }
        t => t,
    };
    let dims = parts
        .into_iter()
        .map(|d| match d {
            "?" => Some(None),
            d => d.parse::<i64>().ok().map(Some),
        })
        .collect::<Option<Vec<_>>>()?;
    Some((dims, element))
}

/// `4x?x8` for dimensions as declared.
pub fn dims_text(dims: &[Option<i64>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or("?".to_string(), |d| d.to_string()))
        .collect();
    parts.join("x")
}
