//! The `io_parameters` host module: `load`, `gather` and `scatter` with
//! IREE 3.13's calling conventions and semantics
//! (`runtime/src/iree/modules/io/parameters/module.c` and the index
//! provider it uses).
//!
//! Each call names its parameters indirectly, as the compiler emits them:
//! a key table of N × `{u32 offset, u32 length}` into key data, and N spans
//! of `{u64 parameter offset, u64 buffer offset, u64 length}`. Every table
//! is decoded with checked arithmetic.

use std::sync::Arc;

use irvm::{
    Buffer, ContextResources, HostRef, List, NativeModule, Ref, RefType, StatusCode, Trap, TypeDef,
    Value,
};
use irvm_hal::{signal_after, type_names, Args, HalBuffer};

use crate::archive::EntryData;
use crate::index::{no_provider, ParameterIndex, Resolved};

/// Version of the `io_parameters` module (IREE's is 0).
pub const IO_PARAMETERS_VERSION: u32 = 0;

/// A buffer over an archive's bytes is made without copying when they
/// start at this alignment (the hal allocator's, `irvm::BUFFER_ALIGNMENT`).
const ZERO_COPY_ALIGNMENT: usize = irvm::BUFFER_ALIGNMENT;

/// Per-context state: the index and the calling context's resources (the
/// memory budget copies are charged to, the fuel they cost).
pub struct ParametersState {
    index: Arc<ParameterIndex>,
    resources: ContextResources,
}

/// The `io_parameters` host module over `index`: register it (after the
/// `hal` module) in a context before modules that import it.
///
/// ```no_run
/// use std::sync::Arc;
/// use irvm::{Context, Module, TypeRegistry};
/// use irvm_io_parameters::{io_parameters_module, ParameterIndex};
///
/// let mut index = ParameterIndex::new();
/// index.add_file("model", "weights.irpa").unwrap();
/// let mut ctx = Context::new(&TypeRegistry::new());
/// ctx.register_host_module(&irvm_hal::hal_module().unwrap()).unwrap();
/// ctx.register_host_module(&io_parameters_module(Arc::new(index)).unwrap()).unwrap();
/// ctx.register_module(Module::from_file("model.vmfb").unwrap()).unwrap();
/// ```
pub fn io_parameters_module(
    index: Arc<ParameterIndex>,
) -> Result<NativeModule<ParametersState>, irvm::loader::AbiError> {
    let module =
        NativeModule::with_context_state("io_parameters", IO_PARAMETERS_VERSION, move |r| {
            ParametersState {
                index: index.clone(),
                resources: r.clone(),
            }
        });
    module
        .func_with_state("gather", "0rIrrrrrrr_v", |s: &mut ParametersState, v| {
            gather(s, &mut Args::in_module("io_parameters", "gather", v))
        })?
        .func_with_state("load", "0rIrrrIiirrr_r", |s: &mut ParametersState, v| {
            load(s, &mut Args::in_module("io_parameters", "load", v))
        })?
        .func_with_state("scatter", "0rIrrrrrrr_v", |s: &mut ParametersState, v| {
            scatter(s, &mut Args::in_module("io_parameters", "scatter", v))
        })
}

/// One parameter a call names: its key and span.
struct Span {
    /// The key's text ([`Name`]).
    key: String,
    /// Whether the key's bytes are UTF-8 (no archive key is otherwise).
    key_utf8: bool,
    parameter_offset: u64,
    buffer_offset: u64,
    length: u64,
}

/// Decodes the key table, key data and spans of a call.
fn spans(key_table: &Ref, key_data: &Ref, spans: &Ref) -> Result<Vec<Span>, Trap> {
    const SPAN_BYTES: usize = 24;
    const KEY_BYTES: usize = 8;
    let spans = spans.buffer("parameter spans")?;
    let table = key_table.buffer("parameter key table")?;
    let data = key_data.buffer("parameter key data")?;
    if spans.len() % SPAN_BYTES != 0 {
        return Err(Trap::new(
            StatusCode::InvalidArgument,
            format!(
                "buffer span storage must be a whole number of 24-byte span entries \
                 (it has {} bytes)",
                spans.len()
            ),
        ));
    }
    let count = spans.len() / SPAN_BYTES;
    if table.len() / KEY_BYTES < count {
        return Err(Trap::new(
            StatusCode::InvalidArgument,
            format!(
                "key string table must have enough data to service all defined spans \
                 ({count} spans, {} bytes of key table)",
                table.len()
            ),
        ));
    }
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let u64_at = |b: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let keys: Vec<(u32, u32)> = table.with_bytes(|t| {
        (0..count)
            .map(|i| (u32_at(t, i * KEY_BYTES), u32_at(t, i * KEY_BYTES + 4)))
            .collect()
    });
    let data_len = data.len();
    let mut out = Vec::with_capacity(count);
    for (i, (offset, length)) in keys.into_iter().enumerate() {
        let end = u64::from(offset) + u64::from(length);
        if u64::from(offset) > data_len as u64 || end > data_len as u64 {
            return Err(Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "key {i} lies outside the key data (offset={offset}, length={length}, \
                     data_capacity={data_len})"
                ),
            ));
        }
        let key = data.with_bytes(|d| Name::of(&d[offset as usize..end as usize]));
        let (parameter_offset, buffer_offset, length) = spans.with_bytes(|s| {
            let at = i * SPAN_BYTES;
            (u64_at(s, at), u64_at(s, at + 8), u64_at(s, at + 16))
        });
        out.push(Span {
            key: key.text,
            key_utf8: key.utf8,
            parameter_offset,
            buffer_offset,
            length,
        });
    }
    Ok(out)
}

/// A scope or key as a program names it. Bytes that are not UTF-8 name
/// nothing (every archive key and scope is text): their `text` shows them
/// with each stray byte as `\xNN`, as IREE prints them.
struct Name {
    text: String,
    utf8: bool,
}

impl Name {
    fn of(bytes: &[u8]) -> Name {
        match std::str::from_utf8(bytes) {
            Ok(text) => Name {
                text: text.to_string(),
                utf8: true,
            },
            Err(_) => {
                let mut text = String::new();
                for chunk in bytes.utf8_chunks() {
                    text.push_str(chunk.valid());
                    for b in chunk.invalid() {
                        text.push_str(&format!("\\x{b:02x}"));
                    }
                }
                Name { text, utf8: false }
            }
        }
    }
}

/// The scope a call names: a `!vm.buffer`'s bytes, or null (the empty
/// scope, as IREE reads a null buffer).
fn scope(a: &mut Args) -> Result<Name, Trap> {
    let r = a.any_ref()?;
    if r.is_null() {
        return Ok(Name::of(b""));
    }
    let b = r.buffer("parameter scope")?;
    Ok(b.with_bytes(Name::of))
}

/// The parameter `span` names in `scope`: NOT_FOUND, in the reference's
/// words, when it is not there.
fn lookup<'i>(index: &'i ParameterIndex, scope: &Name, span: &Span) -> Result<Resolved<'i>, Trap> {
    if !span.key_utf8 {
        return Err(Trap::new(
            StatusCode::NotFound,
            format!("no parameter found in index with key '{}'", span.key),
        ));
    }
    index.lookup(&scope.text, &span.key)
}

/// The key table, key data and span table every export ends with.
struct SpanTables {
    keys: Ref,
    key_data: Ref,
    spans: Ref,
}

impl SpanTables {
    fn read(a: &mut Args) -> Result<SpanTables, Trap> {
        Ok(SpanTables {
            keys: a.vm_buffer()?.clone(),
            key_data: a.vm_buffer()?.clone(),
            spans: a.vm_buffer()?.clone(),
        })
    }

    /// The spans, decoded once `scope` is known to be in the index
    /// (NOT_FOUND in the reference's words otherwise).
    fn decode(&self, index: &ParameterIndex, scope: &Name) -> Result<Vec<Span>, Trap> {
        if !scope.utf8 || !index.has_scope(&scope.text) {
            return Err(no_provider(&scope.text));
        }
        spans(&self.keys, &self.key_data, &self.spans)
    }
}

/// Checks that `span` lies inside the parameter.
fn check_range(r: &Resolved<'_>, span: &Span) -> Result<(), Trap> {
    let size = r.entry.data.length();
    if span
        .parameter_offset
        .checked_add(span.length)
        .is_none_or(|end| end > size)
    {
        return Err(Trap::new(
            StatusCode::OutOfRange,
            format!(
                "parameter `{}` range out of bounds (offset={}, length={}, size={size})",
                span.key, span.parameter_offset, span.length
            ),
        ));
    }
    Ok(())
}

/// The archive bytes of `span` of a DATA parameter (checked: readers
/// keep every entry inside its file, and `check_range` the span inside the
/// entry).
fn data_range(r: &Resolved<'_>, span: &Span) -> Option<std::ops::Range<usize>> {
    match r.entry.data {
        EntryData::Data { offset, .. } => {
            let start = offset.checked_add(span.parameter_offset)?;
            let end = start.checked_add(span.length)?;
            Some(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
        }
        EntryData::Splat { .. } => None,
    }
}

/// Fills `bytes` with `pattern` repeated (the last repetition cut short).
fn splat(bytes: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    for chunk in bytes.chunks_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
}

/// Writes the bytes of `span` of parameter `r` into `target` at the
/// span's buffer offset (OUT_OF_RANGE past its end), charging the copy to
/// the caller's fuel.
fn read_into(
    state: &ParametersState,
    r: &Resolved<'_>,
    span: &Span,
    target: &HalBuffer,
) -> Result<(), Trap> {
    let length = i64::try_from(span.length).map_err(|_| {
        Trap::new(
            StatusCode::OutOfRange,
            format!(
                "parameter `{}`: length {} is too large",
                span.key, span.length
            ),
        )
    })?;
    let part = target.subspan(span.buffer_offset, length)?;
    state.resources.charge_bulk(span.length)?;
    match &r.entry.data {
        EntryData::Data { .. } => {
            let range = data_range(r, span).ok_or_else(|| out_of_file(r, span))?;
            part.with_bytes_mut(|b| r.file.read_at(range.start as u64, b))?
                .map_err(|e| {
                    Trap::new(
                        StatusCode::DataLoss,
                        format!("parameter `{}`: {e}", span.key),
                    )
                })
        }
        EntryData::Splat { pattern, .. } => {
            // The pattern continues from the parameter offset.
            let shift = (span.parameter_offset % pattern.len().max(1) as u64) as usize;
            let mut rotated = pattern.clone();
            rotated.rotate_left(shift);
            part.with_bytes_mut(|b| splat(b, &rotated))
        }
    }
}

fn out_of_file(r: &Resolved<'_>, span: &Span) -> Trap {
    Trap::new(
        StatusCode::OutOfRange,
        format!(
            "parameter `{}` lies outside its archive {}",
            span.key,
            r.file.name()
        ),
    )
}

/// `io_parameters.load(device, affinity, wait, signal, scope, target
/// affinity, memory types, buffer usage, key table, key data, spans) ->
/// !vm.list<!hal.buffer>`: one buffer per span. A DATA parameter whose
/// bytes in the mapped archive meet the allocator's alignment becomes a
/// read-only buffer over the mapping (no copy); anything else is copied
/// once into a buffer of the device's allocator; a splat is a fill.
fn load(state: &mut ParametersState, a: &mut Args) -> Result<Vec<Value>, Trap> {
    let (device, signal) = a.queue_prologue()?;
    let scope = scope(a)?;
    let (_target_affinity, _memory_types, _usage) = (a.i64()?, a.i32()?, a.i32()?);
    let tables = SpanTables::read(a)?;
    let result = (|| {
        let spans = tables.decode(&state.index, &scope)?;
        let count = u32::try_from(spans.len())
            .map_err(|_| Trap::new(StatusCode::OutOfRange, "too many parameters in one load"))?;
        let list = List::new(TypeDef::Ref(RefType::named(type_names::BUFFER)), count)?;
        for span in &spans {
            let r = lookup(&state.index, &scope, span)?;
            check_range(&r, span)?;
            let buffer = match mapped(&r, span) {
                Some(b) => b,
                None => {
                    let b = device
                        .allocator
                        .allocate(span.length as i64, &state.resources)?;
                    read_into(state, &r, span, &b)?;
                    b
                }
            };
            list.push(Value::Ref(
                HostRef::new(type_names::BUFFER, buffer).to_ref(),
            ))?;
        }
        Ok(list)
    })();
    let list = signal_after(signal, result)?;
    Ok(vec![Value::Ref(Ref::from(list))])
}

/// A read-only buffer over the mapped bytes of `span`, when it is a DATA
/// parameter at buffer offset 0 whose first byte meets
/// [`ZERO_COPY_ALIGNMENT`] in memory.
fn mapped(r: &Resolved<'_>, span: &Span) -> Option<HalBuffer> {
    if span.buffer_offset != 0 {
        return None;
    }
    let range = data_range(r, span)?;
    let all = r.file.bytes();
    let start = all.get(range.clone())?.as_ptr();
    if (start as usize) % ZERO_COPY_ALIGNMENT != 0 {
        return None;
    }
    let buffer = Buffer::borrowed(r.file.shared_bytes(), range).ok()?;
    HalBuffer::over(Ref::from(buffer)).ok()
}

/// `io_parameters.gather(device, affinity, wait, signal, scope, target
/// buffer, key table, key data, spans)`: reads each span of its parameter
/// into the target buffer at the span's buffer offset.
fn gather(state: &mut ParametersState, a: &mut Args) -> Result<Vec<Value>, Trap> {
    let (_, signal) = a.queue_prologue()?;
    let scope = scope(a)?;
    let target = a.buffer()?;
    let tables = SpanTables::read(a)?;
    let result = (|| {
        for span in tables.decode(&state.index, &scope)? {
            let r = lookup(&state.index, &scope, &span)?;
            check_range(&r, &span)?;
            read_into(state, &r, &span, &target)?;
        }
        Ok(())
    })();
    signal_after(signal, result)?;
    Ok(Vec::new())
}

/// `io_parameters.scatter(device, affinity, wait, signal, source buffer,
/// scope, key table, key data, spans)`: archives are opened read-only, as
/// by IREE's tools, so writing any parameter is PERMISSION_DENIED; keys
/// and ranges are checked first, as the reference does.
fn scatter(state: &mut ParametersState, a: &mut Args) -> Result<Vec<Value>, Trap> {
    let (_, signal) = a.queue_prologue()?;
    let _source = a.buffer()?;
    let scope = scope(a)?;
    let tables = SpanTables::read(a)?;
    let result = (|| {
        // The first parameter named decides: it is missing, or read-only.
        if let Some(span) = tables.decode(&state.index, &scope)?.first() {
            lookup(&state.index, &scope, span)?;
            return Err(Trap::new(
                StatusCode::PermissionDenied,
                format!(
                    "parameter `{}` storage does not support the requested access type; \
                     parameter allows READ, operation requires WRITE",
                    span.key
                ),
            ));
        }
        Ok(())
    })();
    signal_after(signal, result)?;
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_parameters_of_a_mapped_archive_are_not_copied() {
        let _slots = crate::index::tests::hold_guard_slots();
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/params/run/wb.irpa"
        );
        let mut index = ParameterIndex::new();
        index.add_file("", path).expect("the test archive reads");
        let r = index.lookup("", "w").expect("w is there");
        let span = Span {
            key: "w".into(),
            key_utf8: true,
            parameter_offset: 0,
            buffer_offset: 0,
            length: 16,
        };
        let b = mapped(&r, &span).expect("aligned in the mapping: a buffer over it");
        let storage = b.storage.buffer("storage").expect("a buffer");
        assert!(!storage.is_mutable(), "read-only");
        let range = data_range(&r, &span).expect("a DATA entry");
        let start = r.file.bytes()[range].as_ptr();
        storage.with_bytes(|bytes| assert_eq!(bytes.as_ptr(), start, "the mapping itself"));
        // Four bytes in, the bytes are no longer aligned: copied instead.
        let inner = Span {
            parameter_offset: 4,
            length: 8,
            ..span
        };
        assert!(mapped(&r, &inner).is_none());
    }

    #[test]
    fn names_that_are_not_utf8_name_nothing_and_print_escaped() {
        let n = Name::of(b"k\xf8");
        assert!(!n.utf8);
        assert_eq!(n.text, "k\\xf8");
        let n = Name::of("w\u{e9}".as_bytes());
        assert!(n.utf8);
        assert_eq!(n.text, "w\u{e9}");
        // An escaped key does not find an archive key spelled that way.
        let mut writer = crate::archive::irpa_writer::ArchiveWriter::new();
        writer.add_splat("k\\xf8", b"", &[1], 4).unwrap();
        let mut bytes = std::io::Cursor::new(Vec::new());
        writer.write(&mut bytes).unwrap();
        let mut index = ParameterIndex::new();
        index
            .add_bytes(
                "",
                "k.irpa",
                crate::archive::Format::Irpa,
                bytes.into_inner(),
            )
            .unwrap();
        let span = Span {
            key: Name::of(b"k\xf8").text,
            key_utf8: false,
            parameter_offset: 0,
            buffer_offset: 0,
            length: 4,
        };
        let e = lookup(&index, &Name::of(b""), &span)
            .err()
            .expect("not found");
        assert_eq!(e.code, StatusCode::NotFound);
        assert!(e.message.contains("key 'k\\xf8'"), "{}", e.message);
        assert!(lookup(
            &index,
            &Name::of(b""),
            &Span {
                key_utf8: true,
                ..span
            }
        )
        .is_ok());
    }

    #[test]
    fn a_splat_repeats_its_pattern_and_cuts_the_last_short() {
        let mut b = [0u8; 7];
        splat(&mut b, &[1, 2, 3]);
        assert_eq!(b, [1, 2, 3, 1, 2, 3, 1]);
    }
}
