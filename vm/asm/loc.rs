//! Source locations in assembly: the optional trailing `loc(...)` of an
//! instruction, parsed with MLIR's location syntax and interned into the
//! debug database's location table.
//!
//! ```text
//! loc("model.mlir":12:5)                         file, line, column
//! loc(callsite("a.mlir":3:1 at "b.mlir":9:2))    callee at caller
//! loc("relu"("model.mlir":12:5))                 a named location
//! loc(fused["a.mlir":1:1, "b.mlir":2:2])         several (also fused<"meta">[...])
//! loc(unknown)                                   no location
//! ```
//!
//! The assembly form (`irvm dump --output=assembly`) writes the table
//! itself instead, entry by entry, so that it reads back unchanged (order,
//! duplicates and iree-compile's NONE entries included): `vm.location[N] =
//! ENTRY` with `none` or one of the forms above, whose parts name other
//! entries as `loc[N]` ([`LocationTable::define`]).

use std::collections::HashMap;

use super::text::{find_word, parse_int, parse_quoted, split_commas};

/// Nesting deeper than this is rejected (the table must stay acyclic and
/// its renderer bounded).
const MAX_DEPTH: usize = 64;

/// One entry of the location table (indices refer to earlier entries).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LocEntry {
    /// `callsite(callee at caller)`.
    CallSite {
        /// Location of the callee.
        callee: i32,
        /// Location of the call.
        caller: i32,
    },
    /// `"file":line:col`.
    FileLineCol {
        /// File name.
        file: String,
        /// 1-based line.
        line: i32,
        /// 1-based column.
        col: i32,
    },
    /// `fused<"meta">[a, b]`.
    Fused {
        /// Optional metadata string.
        metadata: Option<String>,
        /// The fused locations.
        locations: Vec<i32>,
    },
    /// `"name"(child)` or `"name"`.
    Name {
        /// The name.
        name: String,
        /// The child location, if written.
        child: Option<i32>,
    },
    /// `none`: an entry of no kind (iree-compile writes one as entry 0).
    None,
}

/// The location table being built: entries in order, deduplicated.
#[derive(Default)]
pub struct LocationTable {
    /// Entries in table order.
    pub entries: Vec<LocEntry>,
    index: HashMap<LocEntry, i32>,
}

impl LocationTable {
    fn intern(&mut self, entry: LocEntry) -> Result<i32, String> {
        if let Some(&i) = self.index.get(&entry) {
            return Ok(i);
        }
        let i = i32::try_from(self.entries.len()).map_err(|_| "too many locations".to_string())?;
        self.entries.push(entry.clone());
        self.index.insert(entry, i);
        Ok(i)
    }

    /// Parses the inside of `loc(...)` and interns it; `Ok(None)` for
    /// `unknown`.
    pub fn parse(&mut self, text: &str) -> Result<Option<i32>, String> {
        self.parse_at(text.trim(), 0)
    }

    /// Appends entry `text` of a `vm.location[N] = ...` directive as it is
    /// (not interned: the table keeps the order and duplicates written).
    pub fn define(&mut self, text: &str) -> Result<(), String> {
        let text = text.trim();
        let entry = if text == "none" {
            LocEntry::None
        } else {
            self.parse_entry(text, 0)?
                .ok_or("a location table entry cannot be 'unknown' (write 'none')")?
        };
        self.entries.push(entry);
        Ok(())
    }

    /// The first `loc[N]` reference that names no entry of the finished
    /// table, as (referring entry, N).
    pub fn dangling_reference(&self) -> Option<(usize, i32)> {
        let len = self.entries.len();
        let bad = |i: &i32| usize::try_from(*i).map_or(true, |i| i >= len);
        self.entries.iter().enumerate().find_map(|(at, entry)| {
            let refs: Vec<i32> = match entry {
                LocEntry::CallSite { callee, caller } => vec![*callee, *caller],
                LocEntry::Fused { locations, .. } => locations.clone(),
                LocEntry::Name { child, .. } => child.iter().copied().collect(),
                LocEntry::FileLineCol { .. } | LocEntry::None => Vec::new(),
            };
            refs.into_iter().find(bad).map(|r| (at, r))
        })
    }

    fn parse_at(&mut self, text: &str, depth: usize) -> Result<Option<i32>, String> {
        let text = text.trim();
        // A reference to an entry by number (the assembly form's table).
        if let Some(number) = text.strip_prefix("loc[").and_then(|t| t.strip_suffix(']')) {
            let index = parse_int(number)
                .and_then(|n| i32::try_from(n).ok())
                .filter(|n| *n >= 0)
                .ok_or_else(|| format!("expected a location number in '{text}'"))?;
            return Ok(Some(index));
        }
        match self.parse_entry(text, depth)? {
            Some(entry) => self.intern(entry).map(Some),
            None => Ok(None),
        }
    }

    /// One location (its parts interned), or `None` for `unknown`.
    fn parse_entry(&mut self, text: &str, depth: usize) -> Result<Option<LocEntry>, String> {
        if depth > MAX_DEPTH {
            return Err(format!("location nested deeper than {MAX_DEPTH} levels"));
        }
        let text = text.trim();
        if text == "unknown" {
            return Ok(None);
        }
        if let Some(inner) = text.strip_prefix("callsite(") {
            let inner = inner
                .strip_suffix(')')
                .ok_or("expected ')' to close callsite(")?;
            let at = find_word(inner, "at", true, true)
                .ok_or("expected 'callee at caller' in callsite(...)")?;
            let callee = self.required(&inner[..at], depth)?;
            let caller = self.required(&inner[at + 2..], depth)?;
            return Ok(Some(LocEntry::CallSite { callee, caller }));
        }
        if let Some(rest) = text.strip_prefix("fused") {
            let (metadata, rest) = match rest.trim_start().strip_prefix('<') {
                Some(meta) => {
                    let close = meta.find('>').ok_or("expected '>' after fused metadata")?;
                    let body = meta[..close].trim();
                    let metadata = match parse_quoted(body) {
                        Some((s, tail)) if tail.trim().is_empty() => s.into_owned(),
                        _ => body.to_string(),
                    };
                    (Some(metadata), &meta[close + 1..])
                }
                None => (None, rest),
            };
            let list = rest
                .trim()
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .ok_or("expected fused[...] location list")?;
            let mut locations = Vec::new();
            for item in split_commas(list) {
                if let Some(i) = self.parse_at(item, depth + 1)? {
                    locations.push(i);
                }
            }
            return Ok(Some(LocEntry::Fused {
                metadata,
                locations,
            }));
        }
        let (string, rest) =
            parse_quoted(text).ok_or_else(|| format!("expected a location, found '{text}'"))?;
        let rest = rest.trim();
        if rest.is_empty() {
            return Ok(Some(LocEntry::Name {
                name: string.to_string(),
                child: None,
            }));
        }
        if let Some(child) = rest.strip_prefix('(') {
            let child = child
                .strip_suffix(')')
                .ok_or("expected ')' to close a named location")?;
            let child = self.parse_at(child, depth + 1)?;
            return Ok(Some(LocEntry::Name {
                name: string.to_string(),
                child,
            }));
        }
        let mut parts = rest.strip_prefix(':').map(|r| r.splitn(2, ':'));
        let line_col = parts.as_mut().and_then(|p| {
            let line = i32::try_from(parse_int(p.next()?)?).ok()?;
            let col = i32::try_from(parse_int(p.next()?)?).ok()?;
            Some((line, col))
        });
        let (line, col) =
            line_col.ok_or_else(|| format!("expected \"file\":LINE:COLUMN, found '{text}'"))?;
        Ok(Some(LocEntry::FileLineCol {
            file: string.to_string(),
            line,
            col,
        }))
    }

    fn required(&mut self, text: &str, depth: usize) -> Result<i32, String> {
        self.parse_at(text, depth + 1)?
            .ok_or_else(|| "callsite parts cannot be 'unknown'".to_string())
    }
}

/// Splits a trailing ` loc(...)` off an instruction line (comments already
/// removed): returns the instruction text and the inside of `loc(...)`.
pub fn split_trailing_loc(line: &str) -> (&str, Option<&str>) {
    let trimmed = line.trim_end();
    if !trimmed.ends_with(')') {
        return (line, None);
    }
    // The last top-level `loc(` whose parenthesis closes at the end.
    let mut search = 0;
    let mut found = None;
    while let Some(pos) = find_word(&trimmed[search..], "loc(", true, false) {
        found = Some(search + pos);
        search += pos + 4;
        if search >= trimmed.len() {
            break;
        }
    }
    match found {
        Some(start) => (&line[..start], Some(&trimmed[start + 4..trimmed.len() - 1])),
        None => (line, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_intern() {
        let mut table = LocationTable::default();
        let a = table.parse("\"a.mlir\":3:5").unwrap().unwrap();
        assert_eq!(table.parse(" \"a.mlir\":3:5 ").unwrap(), Some(a));
        let c = table
            .parse("callsite(\"b.mlir\":1:2 at \"a.mlir\":3:5)")
            .unwrap()
            .unwrap();
        assert_eq!(
            table.entries[c as usize],
            LocEntry::CallSite {
                callee: 1,
                caller: a
            }
        );
        let n = table.parse("\"relu\"(\"a.mlir\":3:5)").unwrap().unwrap();
        assert_eq!(
            table.entries[n as usize],
            LocEntry::Name {
                name: "relu".into(),
                child: Some(a)
            }
        );
        let f = table
            .parse("fused<\"m\">[\"a.mlir\":3:5, unknown, \"x\"]")
            .unwrap()
            .unwrap();
        assert!(
            matches!(&table.entries[f as usize], LocEntry::Fused { metadata: Some(m), locations } if m == "m" && locations.len() == 2)
        );
        assert_eq!(table.parse("unknown").unwrap(), None);
        assert!(table.parse("\"a.mlir\":x:1").is_err());
        assert!(table.parse("callsite(\"a\":1:1)").is_err());
        let deep = format!("{}\"a\":1:1{}", "\"n\"(".repeat(100), ")".repeat(100));
        assert!(table.parse(&deep).unwrap_err().contains("deeper"));
    }

    #[test]
    fn a_defined_table_keeps_order_duplicates_and_none() {
        let mut table = LocationTable::default();
        table.define("none").unwrap();
        table.define("\"a.mlir\":1:1").unwrap();
        table.define("\"a.mlir\":1:1").unwrap();
        table.define("callsite(loc[1] at loc[2])").unwrap();
        table.define("fused<\"m\\\"x\">[loc[3], loc[0]]").unwrap();
        table.define("\"n\"(loc[4])").unwrap();
        assert_eq!(table.entries.len(), 6);
        assert_eq!(table.entries[0], LocEntry::None);
        assert_eq!(table.entries[1], table.entries[2]);
        assert_eq!(
            table.entries[3],
            LocEntry::CallSite {
                callee: 1,
                caller: 2
            }
        );
        assert!(
            matches!(&table.entries[4], LocEntry::Fused { metadata: Some(m), locations } if m == "m\"x" && locations == &[3, 0])
        );
        assert_eq!(table.dangling_reference(), None);
        table.define("\"n\"(loc[9])").unwrap();
        assert_eq!(table.dangling_reference(), Some((6, 9)));
        assert!(table.define("unknown").is_err());
        assert!(table.define("loc[x]").is_err());
    }

    #[test]
    fn trailing_loc_is_split_off() {
        let (inst, loc) = split_trailing_loc("%i0 = vm.add.i32 %i1, %i1 loc(\"a.mlir\":1:2)");
        assert_eq!(inst.trim_end(), "%i0 = vm.add.i32 %i1, %i1");
        assert_eq!(loc, Some("\"a.mlir\":1:2"));
        let (inst, loc) = split_trailing_loc("vm.trace \"loc(\"(%i0)");
        assert_eq!(inst, "vm.trace \"loc(\"(%i0)");
        assert_eq!(loc, None);
    }
}
