//! The debug database: a location table (MLIR locations) and per-function
//! source maps from bytecode offsets to locations. Read lazily from the
//! mapping: nothing here runs until a tool asks for a location.
//!
//! Quirk of the reference compiler: `iree-compile` 3.13 writes a source map
//! only for the last function, so `functions` can be shorter than the
//! function table. Source maps are matched to functions by `local_name` when
//! the lengths differ (by ordinal otherwise).

use super::module::Module;
use super::schema;
use flatbuffers::Verifiable;

/// Longest chain of nested locations followed when rendering; deeper (or
/// cyclic) chains are cut with `...`.
pub const MAX_LOCATION_DEPTH: usize = 32;

/// One entry of the location table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location<'a> {
    /// `"file":line:col`
    FileLineCol {
        /// Source file name.
        file: &'a str,
        /// 1-based line.
        line: i32,
        /// 1-based column.
        column: i32,
    },
    /// `"name"(child)`
    Name {
        /// The name.
        name: &'a str,
        /// Location table index of the child, if any.
        child: Option<usize>,
    },
    /// `callsite(callee at caller)`
    CallSite {
        /// Index of the callee location.
        callee: usize,
        /// Index of the caller location.
        caller: usize,
    },
    /// `fused[a, b, ...]`
    Fused {
        /// Optional metadata string.
        metadata: Option<&'a str>,
        /// Indices of the fused locations.
        locations: Vec<usize>,
    },
    /// An entry that is missing, malformed, or of an unknown kind.
    Unknown,
}

/// A function's source map.
#[derive(Clone, Copy)]
pub struct SourceMap<'a> {
    /// The function's name in the source.
    pub local_name: Option<&'a str>,
    entries: Option<flatbuffers::Vector<'a, schema::BytecodeLocationDef>>,
}

impl<'a> SourceMap<'a> {
    /// Number of (offset, location) entries.
    pub fn len(&self) -> usize {
        self.entries.map(|e| e.len()).unwrap_or(0)
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as (bytecode offset, location index).
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize)> + 'a {
        self.entries
            .into_iter()
            .flat_map(|v| v.iter())
            .filter(|e| e.bytecode_offset() >= 0 && e.location() >= 0)
            .map(|e| (e.bytecode_offset() as usize, e.location() as usize))
    }

    /// The location index of the instruction at `pc`: the entry with the
    /// greatest offset not above `pc`.
    pub fn location_index_at(&self, pc: usize) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for (off, loc) in self.entries() {
            if off <= pc && best.is_none_or(|(b, _)| off >= b) {
                best = Some((off, loc));
            }
        }
        best.map(|(_, l)| l)
    }
}

/// The debug database of a module.
#[derive(Clone, Copy)]
pub struct DebugDatabase<'a> {
    def: schema::DebugDatabaseDef<'a>,
    fb: &'a [u8],
}

impl<'a> DebugDatabase<'a> {
    pub(crate) fn new(def: schema::DebugDatabaseDef<'a>, fb: &'a [u8]) -> Self {
        DebugDatabase { def, fb }
    }

    /// Number of entries in the location table.
    pub fn location_count(&self) -> usize {
        self.def.location_table().map(|v| v.len()).unwrap_or(0)
    }

    /// Number of function source maps.
    pub fn source_map_count(&self) -> usize {
        self.def.functions().map(|v| v.len()).unwrap_or(0)
    }

    /// Location table entry `index`. Each entry is verified as the table its
    /// kind names before it is read; anything malformed is [`Location::Unknown`].
    pub fn location(&self, index: usize) -> Location<'a> {
        let (Some(kinds), Some(table)) =
            (self.def.location_table_type(), self.def.location_table())
        else {
            return Location::Unknown;
        };
        if index >= kinds.len() || index >= table.len() {
            return Location::Unknown;
        }
        let kind = kinds.get(index);
        let loc = table.get(index)._tab.loc();
        let opts = flatbuffers::VerifierOptions::default();
        let mut v = flatbuffers::Verifier::new(&opts, self.fb);
        let index_of = |i: i32| usize::try_from(i).ok();
        macro_rules! verified {
            ($t:ty) => {{
                if <$t>::run_verifier(&mut v, loc).is_err() {
                    return Location::Unknown;
                }
                // SAFETY: the table at `loc` was just verified as `$t` over
                // the same immutable buffer.
                unsafe { <$t>::init_from_table(flatbuffers::Table::new(self.fb, loc)) }
            }};
        }
        match schema::LocationTypeDef(kind) {
            schema::LocationTypeDef::CallSiteLocDef => {
                let t = verified!(schema::CallSiteLocDef);
                match (index_of(t.callee()), index_of(t.caller())) {
                    (Some(callee), Some(caller)) => Location::CallSite { callee, caller },
                    _ => Location::Unknown,
                }
            }
            schema::LocationTypeDef::FileLineColLocDef => {
                let t = verified!(schema::FileLineColLocDef);
                Location::FileLineCol {
                    file: t.filename().unwrap_or(""),
                    line: t.line(),
                    column: t.column(),
                }
            }
            schema::LocationTypeDef::FusedLocDef => {
                let t = verified!(schema::FusedLocDef);
                Location::Fused {
                    metadata: t.metadata(),
                    locations: t
                        .locations()
                        .map(|l| l.iter().filter_map(index_of).collect())
                        .unwrap_or_default(),
                }
            }
            schema::LocationTypeDef::NameLocDef => {
                let t = verified!(schema::NameLocDef);
                Location::Name {
                    name: t.name().unwrap_or(""),
                    child: index_of(t.child_location()),
                }
            }
            _ => Location::Unknown,
        }
    }

    /// The source map of internal function `ordinal` of `module` (by
    /// ordinal when the map count equals the function count, else by name).
    pub fn source_map(&self, module: &'a Module, ordinal: usize) -> Option<SourceMap<'a>> {
        let maps = self.def.functions()?;
        let as_map = |m: schema::FunctionSourceMapDef<'a>| SourceMap {
            local_name: m.local_name(),
            entries: m.locations(),
        };
        if maps.len() == module.function_count() {
            return (ordinal < maps.len()).then(|| as_map(maps.get(ordinal)));
        }
        let name = module
            .exports()
            .into_iter()
            .find(|e| e.internal_ordinal == ordinal)
            .map(|e| e.local_name)?;
        maps.iter()
            .find(|m| m.local_name() == Some(name))
            .map(as_map)
    }

    /// The source map whose `local_name` is `name`.
    pub fn source_map_named(&self, name: &str) -> Option<SourceMap<'a>> {
        let maps = self.def.functions()?;
        maps.iter()
            .find(|m| m.local_name() == Some(name))
            .map(|m| SourceMap {
                local_name: m.local_name(),
                entries: m.locations(),
            })
    }

    /// Renders location `index` as MLIR prints locations.
    pub fn render(&self, index: usize) -> String {
        let mut out = String::new();
        self.render_into(index, 0, &mut out);
        out
    }

    fn render_into(&self, index: usize, depth: usize, out: &mut String) {
        use std::fmt::Write;
        if depth >= MAX_LOCATION_DEPTH {
            out.push_str("...");
            return;
        }
        match self.location(index) {
            Location::FileLineCol { file, line, column } => {
                let _ = write!(out, "\"{file}\":{line}:{column}");
            }
            Location::Name { name, child } => {
                let _ = write!(out, "\"{name}\"");
                if let Some(c) = child {
                    out.push('(');
                    self.render_into(c, depth + 1, out);
                    out.push(')');
                }
            }
            Location::CallSite { callee, caller } => {
                out.push_str("callsite(");
                self.render_into(callee, depth + 1, out);
                out.push_str(" at ");
                self.render_into(caller, depth + 1, out);
                out.push(')');
            }
            Location::Fused {
                metadata,
                locations,
            } => {
                out.push_str("fused");
                if let Some(m) = metadata {
                    let _ = write!(out, "<\"{m}\">");
                }
                out.push('[');
                for (i, l) in locations.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.render_into(*l, depth + 1, out);
                }
                out.push(']');
            }
            Location::Unknown => out.push_str("unknown"),
        }
    }

    /// The innermost `file:line:col` of location `index` (following names,
    /// the callee of call sites and the first of fused locations).
    pub fn primary_file_line_col(&self, index: usize) -> Option<(&'a str, i32, i32)> {
        let mut idx = index;
        for _ in 0..MAX_LOCATION_DEPTH {
            match self.location(idx) {
                Location::FileLineCol { file, line, column } => return Some((file, line, column)),
                Location::Name { child: Some(c), .. } => idx = c,
                Location::CallSite { callee, .. } => idx = callee,
                Location::Fused { locations, .. } => idx = *locations.first()?,
                _ => return None,
            }
        }
        None
    }

    /// The call-site chain of location `index`: the callee location first,
    /// then each caller ("called from").
    pub fn call_chain(&self, index: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut idx = index;
        for _ in 0..MAX_LOCATION_DEPTH {
            match self.location(idx) {
                Location::CallSite { callee, caller } => {
                    chain.push(callee);
                    idx = caller;
                }
                Location::Name { child: Some(c), .. }
                    if matches!(self.location(c), Location::CallSite { .. }) =>
                {
                    idx = c;
                }
                _ => {
                    chain.push(idx);
                    return chain;
                }
            }
        }
        chain
    }
}
