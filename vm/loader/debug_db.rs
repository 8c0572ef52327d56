//! Lazy access to a module's debug database: the location table and the
//! per-function source maps. Nothing here is parsed at load time.
//!
//! Location entries are stored as a FlatBuffer union vector; each entry is
//! re-verified as its concrete table type when it is read, so a corrupt
//! entry yields a [`DebugError`] rather than undefined behaviour.

use std::fmt;

use flatbuffers::{Follow, Verifiable, Verifier, VerifierOptions};

use super::module::Module;
use super::schema;

/// Nesting limit for [`DebugDatabase::render`].
pub const MAX_RENDER_DEPTH: usize = 32;
/// Total entries [`DebugDatabase::render`] visits before eliding the rest.
pub const MAX_RENDER_NODES: usize = 1024;

/// One entry of the location table. Indices refer to other entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location<'a> {
    /// A source position.
    FileLineCol {
        /// Source file name.
        file: &'a str,
        /// 1-based line.
        line: i32,
        /// 1-based column.
        col: i32,
    },
    /// A named location, optionally wrapping another.
    Name {
        /// The name.
        name: &'a str,
        /// The wrapped location, when present.
        child: Option<i32>,
    },
    /// `callee` was reached from `caller`.
    CallSite {
        /// Location inside the callee.
        callee: i32,
        /// Location of the call.
        caller: i32,
    },
    /// Several locations merged into one.
    Fused {
        /// Optional printed metadata attribute.
        metadata: Option<&'a str>,
        /// The merged locations.
        locations: Vec<i32>,
    },
}

/// One entry of the location table as its (verified) FlatBuffer table, for
/// irvm's dump tool, which prints the stored fields exactly (e.g. whether
/// an optional field is present). Generated types: hidden, not part of the
/// API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum LocationDef<'a> {
    /// A `CallSiteLocDef`.
    CallSite(schema::CallSiteLocDef<'a>),
    /// A `FileLineColLocDef`.
    FileLineCol(schema::FileLineColLocDef<'a>),
    /// A `FusedLocDef`.
    Fused(schema::FusedLocDef<'a>),
    /// A `NameLocDef`.
    Name(schema::NameLocDef<'a>),
}

/// Why a location entry could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DebugError {
    /// The index is outside the location table.
    #[error("location {index} out of range: table has {len} entries")]
    OutOfRange {
        /// Requested index.
        index: i64,
        /// Table length.
        len: usize,
    },
    /// The entry's union tag is not a known location kind (or is NONE).
    #[error("location {index} has unknown kind {tag}")]
    UnknownKind {
        /// Entry index.
        index: usize,
        /// The union tag.
        tag: u8,
    },
    /// The entry failed verification as its declared kind.
    #[error("location {index} is malformed: {message}")]
    Malformed {
        /// Entry index.
        index: usize,
        /// Verifier message.
        message: String,
    },
}

/// The debug database of a [`Module`].
#[derive(Clone, Copy)]
pub struct DebugDatabase<'a> {
    module: &'a Module,
    def: schema::DebugDatabaseDef<'a>,
}

/// Source map of one function: `(bytecode_offset, location index)` pairs.
#[derive(Clone, Copy)]
pub struct SourceMap<'a> {
    def: schema::FunctionSourceMapDef<'a>,
}

/// A point in a source file, as the debugger and error messages show it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourcePosition {
    /// The file name as the compiler recorded it.
    pub file: String,
    /// 1-based line.
    pub line: i32,
    /// 1-based column.
    pub col: i32,
}

impl std::fmt::Display for SourcePosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

impl<'a> DebugDatabase<'a> {
    /// The source position a location points at: itself for a file
    /// position, the callee side of a call site, the wrapped location of a
    /// name, the first resolvable member of a fused location. Bounded in
    /// depth ([`MAX_RENDER_DEPTH`]) and in entries visited in total
    /// ([`MAX_RENDER_NODES`]), so cyclic, very deep or self-referencing
    /// fused tables (whose walk would otherwise branch exponentially) give
    /// `None`, never a hang.
    pub fn source_position(&self, index: i64) -> Option<SourcePosition> {
        let mut budget = MAX_RENDER_NODES;
        self.position_at_depth(index, 0, &mut budget)
    }

    fn position_at_depth(
        &self,
        index: i64,
        depth: usize,
        budget: &mut usize,
    ) -> Option<SourcePosition> {
        if depth >= MAX_RENDER_DEPTH || *budget == 0 {
            return None;
        }
        *budget -= 1;
        match self.location(index).ok()? {
            Location::FileLineCol { file, line, col } => Some(SourcePosition {
                file: file.to_string(),
                line,
                col,
            }),
            Location::Name { child, .. } => {
                self.position_at_depth(child? as i64, depth + 1, budget)
            }
            Location::CallSite { callee, .. } => {
                self.position_at_depth(callee as i64, depth + 1, budget)
            }
            Location::Fused { locations, .. } => locations
                .iter()
                .find_map(|&l| self.position_at_depth(l as i64, depth + 1, budget)),
        }
    }

    /// The chain of positions of a location, innermost first: the position
    /// itself, then for each enclosing call site the position it was called
    /// from ("called from" lines of a backtrace). Bounded like
    /// [`DebugDatabase::source_position`].
    pub fn call_chain(&self, index: i64) -> Vec<SourcePosition> {
        let mut chain = Vec::new();
        let mut at = index;
        for _ in 0..MAX_RENDER_DEPTH {
            let Ok(loc) = self.location(at) else { break };
            match loc {
                Location::CallSite { callee, caller } => {
                    if let Some(p) = self.source_position(callee as i64) {
                        chain.push(p);
                    }
                    at = caller as i64;
                }
                Location::Name { child: Some(c), .. } => at = c as i64,
                _ => {
                    if let Some(p) = self.source_position(at) {
                        chain.push(p);
                    }
                    break;
                }
            }
        }
        chain
    }

    pub(crate) fn new(module: &'a Module, def: schema::DebugDatabaseDef<'a>) -> Self {
        DebugDatabase { module, def }
    }

    /// Number of entries in the location table.
    pub fn location_count(&self) -> usize {
        let tags = self.def.location_table_type().map_or(0, |v| v.len());
        let entries = self.def.location_table().map_or(0, |v| v.len());
        tags.min(entries)
    }

    /// Reads location `index`.
    pub fn location(&self, index: i64) -> Result<Location<'a>, DebugError> {
        Ok(match self.location_def(index)? {
            LocationDef::FileLineCol(loc) => Location::FileLineCol {
                file: loc.filename().unwrap_or(""),
                line: loc.line(),
                col: loc.column(),
            },
            LocationDef::Name(loc) => {
                // Like IREE, a child is only shown when the field is stored.
                let present = loc._tab.vtable().get(schema::NameLocDef::VT_CHILD_LOCATION) != 0;
                Location::Name {
                    name: loc.name().unwrap_or(""),
                    child: present.then(|| loc.child_location()),
                }
            }
            LocationDef::CallSite(loc) => Location::CallSite {
                callee: loc.callee(),
                caller: loc.caller(),
            },
            LocationDef::Fused(loc) => Location::Fused {
                metadata: loc.metadata(),
                locations: loc.locations().iter().flatten().collect(),
            },
        })
    }

    /// Reads location `index` as its FlatBuffer table, verified as the kind
    /// its union tag names.
    #[doc(hidden)]
    pub fn location_def(&self, index: i64) -> Result<LocationDef<'a>, DebugError> {
        let len = self.location_count();
        let out_of_range = DebugError::OutOfRange { index, len };
        let i = usize::try_from(index).map_err(|_| out_of_range.clone())?;
        if i >= len {
            return Err(out_of_range);
        }
        let (Some(tags), Some(entries)) =
            (self.def.location_table_type(), self.def.location_table())
        else {
            return Err(out_of_range);
        };
        let tag = tags.get(i);
        let table = entries.get(i)._tab;
        let malformed = |message: String| DebugError::Malformed { index: i, message };
        Ok(match tag {
            schema::LocationTypeDef_::FileLineColLocDef => {
                LocationDef::FileLineCol(verified_entry(table).map_err(malformed)?)
            }
            schema::LocationTypeDef_::NameLocDef => {
                LocationDef::Name(verified_entry(table).map_err(malformed)?)
            }
            schema::LocationTypeDef_::CallSiteLocDef => {
                LocationDef::CallSite(verified_entry(table).map_err(malformed)?)
            }
            schema::LocationTypeDef_::FusedLocDef => {
                LocationDef::Fused(verified_entry(table).map_err(malformed)?)
            }
            other => {
                return Err(DebugError::UnknownKind {
                    index: i,
                    tag: other.0,
                })
            }
        })
    }

    /// Number of function source maps stored (may be fewer than functions).
    pub fn source_map_count(&self) -> usize {
        self.def.functions().map_or(0, |v| v.len())
    }

    /// Source map at position `index` of the stored list.
    pub fn source_map(&self, index: usize) -> Option<SourceMap<'a>> {
        let maps = self.def.functions()?;
        (index < maps.len()).then(|| SourceMap {
            def: maps.get(index),
        })
    }

    /// The source map stored at position `function_ordinal`, when the
    /// database has one per function (only then does a position name a
    /// function: iree-compile 3.13 stores only the last function's map, at
    /// position 0, and IREE's runtime, which reads maps by position, then
    /// gives the first function the last one's name and locations).
    pub fn positional_source_map(&self, function_ordinal: usize) -> Option<SourceMap<'a>> {
        if self.source_map_count() != self.module.function_count() {
            return None;
        }
        self.source_map(function_ordinal)
    }

    /// Source map of internal function `function_ordinal`.
    ///
    /// When the database has one source map per function they are matched
    /// by position. iree-compile 3.13 writes fewer (only the last function's),
    /// so otherwise the map is matched by `local_name`, falling back to the
    /// name of an export of that function.
    pub fn source_map_for(
        &self,
        function_ordinal: usize,
        local_name: Option<&str>,
    ) -> Option<SourceMap<'a>> {
        let count = self.source_map_count();
        if count == self.module.function_count() {
            let map = self.source_map(function_ordinal)?;
            if local_name.is_none_or(|name| map.local_name() == name) {
                return Some(map);
            }
        }
        let exported;
        let name = match local_name {
            Some(name) => name,
            None => {
                exported = self
                    .module
                    .exports()
                    .into_iter()
                    .find(|e| e.internal_ordinal == function_ordinal)?;
                exported.local_name
            }
        };
        (0..count)
            .filter_map(|i| self.source_map(i))
            .find(|m| m.local_name() == name)
    }

    /// Location index for `bytecode_offset` inside internal function
    /// `function_ordinal`: the last source map entry at or before it.
    pub fn location_at(&self, function_ordinal: usize, bytecode_offset: u32) -> Option<i32> {
        self.source_map_for(function_ordinal, None)?
            .location_at(bytecode_offset)
    }

    /// MLIR-style text for location `index`: `"file.mlir":12:3`,
    /// `callsite(A at B)`, `"name"(child)`, `fused<meta>[a, b]`.
    ///
    /// Bounded: nesting deeper than [`MAX_RENDER_DEPTH`] prints `...`,
    /// revisiting an entry on the current path prints `<cycle N>`, output
    /// after [`MAX_RENDER_NODES`] entries prints `...`, and unreadable entries
    /// print `<error: ...>`.
    pub fn render(&self, index: i64) -> String {
        let mut out = String::new();
        let mut state = RenderState {
            path: Vec::new(),
            nodes: 0,
        };
        self.render_into(index, &mut state, &mut out);
        out
    }

    fn render_into(&self, index: i64, state: &mut RenderState, out: &mut String) {
        use fmt::Write as _;
        if state.path.len() >= MAX_RENDER_DEPTH || state.nodes >= MAX_RENDER_NODES {
            out.push_str("...");
            return;
        }
        if state.path.contains(&index) {
            let _ = write!(out, "<cycle {index}>");
            return;
        }
        state.nodes += 1;
        let location = match self.location(index) {
            Ok(location) => location,
            Err(err) => {
                let _ = write!(out, "<error: {err}>");
                return;
            }
        };
        state.path.push(index);
        match location {
            Location::FileLineCol { file, line, col } => {
                let _ = write!(out, "{file:?}:{line}:{col}");
            }
            Location::Name { name, child } => {
                let _ = write!(out, "{name:?}");
                if let Some(child) = child {
                    out.push('(');
                    self.render_into(child.into(), state, out);
                    out.push(')');
                }
            }
            Location::CallSite { callee, caller } => {
                out.push_str("callsite(");
                self.render_into(callee.into(), state, out);
                out.push_str(" at ");
                self.render_into(caller.into(), state, out);
                out.push(')');
            }
            Location::Fused {
                metadata,
                locations,
            } => {
                out.push_str("fused");
                if let Some(metadata) = metadata {
                    let _ = write!(out, "<{metadata}>");
                }
                out.push('[');
                for (i, child) in locations.into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.render_into(child.into(), state, out);
                }
                out.push(']');
            }
        }
        state.path.pop();
    }
}

struct RenderState {
    path: Vec<i64>,
    nodes: usize,
}

impl fmt::Debug for DebugDatabase<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DebugDatabase")
            .field("locations", &self.location_count())
            .field("source_maps", &self.source_map_count())
            .finish()
    }
}

/// What the VM asks of a module's debug database when it names a frame
/// (backtraces, debuggers, execution traces).
impl DebugDatabase<'_> {
    /// The name the source map of function `ordinal` gives it, when the
    /// database has one map per function and that map names it.
    pub(crate) fn function_local_name(&self, ordinal: u32) -> Option<String> {
        let map = self.positional_source_map(ordinal as usize)?;
        let n = map.local_name();
        (!n.is_empty()).then(|| n.to_string())
    }

    /// The location-table index of bytecode `offset` in internal function
    /// `ordinal`. The function's source map is matched by its local name:
    /// the one its positional source map gives, else `names[ordinal]` (the
    /// caller's name for it, if any), else the name of an export of it.
    pub(crate) fn location_index(
        &self,
        ordinal: u32,
        offset: u32,
        names: &[Option<String>],
    ) -> Option<i64> {
        let lname = self
            .function_local_name(ordinal)
            .or_else(|| names.get(ordinal as usize).cloned().flatten())
            .or_else(|| {
                self.module
                    .exports()
                    .iter()
                    .find(|e| e.internal_ordinal == ordinal as usize)
                    .map(|e| e.local_name.to_string())
            })?;
        let map = self.source_map_for(ordinal as usize, Some(&lname))?;
        let loc = map.location_at(offset)?;
        // An entry without a kind (union tag NONE) is an unknown location:
        // iree-compile 3.13 writes one for `__init`'s first instructions.
        // (An index past the table stays, for the frame to say so.)
        let unknown = self.def.location_table_type().is_some_and(|tags| {
            usize::try_from(loc)
                .ok()
                .filter(|&i| i < tags.len())
                .is_some_and(|i| tags.get(i) == schema::LocationTypeDef_::NONE)
        });
        (!unknown).then_some(loc as i64)
    }
}

impl<'a> SourceMap<'a> {
    /// Name of the function this map describes.
    pub fn local_name(&self) -> &'a str {
        self.def.local_name().unwrap_or("")
    }

    /// `(bytecode_offset, location index)` pairs in stored order.
    pub fn entries(&self) -> impl Iterator<Item = (i32, i32)> + 'a {
        self.def
            .locations()
            .into_iter()
            .flatten()
            .map(|l| (l.bytecode_offset(), l.location()))
    }

    /// Location of the last entry whose offset is `<= bytecode_offset`
    /// (the entry with the greatest such offset, later entries winning ties).
    pub fn location_at(&self, bytecode_offset: u32) -> Option<i32> {
        let pc = i64::from(bytecode_offset);
        let mut best: Option<(i32, i32)> = None;
        for (offset, location) in self.entries() {
            if i64::from(offset) <= pc && best.is_none_or(|(b, _)| offset >= b) {
                best = Some((offset, location));
            }
        }
        best.map(|(_, location)| location)
    }
}

impl fmt::Debug for SourceMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceMap")
            .field("local_name", &self.local_name())
            .field("entries", &self.entries().count())
            .finish()
    }
}

/// Verifies `table` as a `T` and returns the typed view.
fn verified_entry<'a, T>(table: flatbuffers::Table<'a>) -> Result<T, String>
where
    T: Follow<'a, Inner = T> + Verifiable + 'a,
{
    let (buf, loc) = (table.buf(), table.loc());
    let opts = VerifierOptions {
        max_depth: 8,
        max_tables: 16,
        max_apparent_size: buf.len(),
        ignore_missing_null_terminator: false,
    };
    let mut verifier = Verifier::new(&opts, buf);
    T::run_verifier(&mut verifier, loc).map_err(|e| e.to_string())?;
    // SAFETY: the verifier just checked, against this same `buf`, that a `T`
    // table at `loc` and everything it references is in bounds and well
    // formed, which is the precondition of `Follow::follow`.
    Ok(unsafe { T::follow(buf, loc) })
}
