//! The `irpa` reader: IREE's parameter archive
//! (`runtime/src/iree/schemas/parameter_archive.h`), header version 0.
//!
//! A file holds one or more archives. Each starts with an 88-byte header
//! (magic `IRPA`, version, header size, the offset of the next header,
//! flags, the entry count and three segments: the entry table, the metadata
//! and the storage); every offset in an archive is relative to its own
//! header, so archives can be concatenated and linked without rewriting
//! them. The entry table holds variable-sized entries, each starting at a
//! multiple of 16 bytes: SKIP (an erased entry, not listed), SPLAT (a length
//! and a repeated pattern of up to 16 bytes) and DATA (a range of the
//! storage segment). Names and metadata are ranges of the metadata segment.
//!
//! Linked archives: IREE 3.13's parser checks each linked header's magic,
//! version and size at its own offset, but then takes the entry count and
//! segment table of the *first* header for every archive of the chain (it
//! casts the start of the file instead of the header's position) and
//! applies them at the linked header's position, so a linked file is
//! misread or refused (`tests/data/params/data.irpa` linked to
//! `splats.irpa`: "entry table truncated"). This reader reads each
//! archive's own header (`linked_archives_read_their_own_tables`, and
//! `tests/all/params.rs` against the reference tool).
//!
//! Every offset and size is 64-bit and checked: an entry past 4 GiB is
//! read as any other, and a range that wraps or leaves its segment or the
//! file is an error. What is allocated is bounded by the file's length: the
//! entries listed take at least 60 bytes of entry table each, and their
//! names and metadata together at most the file's length (entries that
//! share one name, which only a hostile file does, would otherwise copy it
//! once per entry).

use super::bytes::{align_up, slice, u16_at, u32_at, u64_at};
use super::{ArchiveEntry, ArchiveError, EntryData, Format};

/// `IRPA` read as a little-endian `u32`.
pub const MAGIC: u32 = 0x4150_5249;
/// Size of the header prefix every version shares (magic, version, header
/// size, next header offset, flags).
pub const PREFIX_SIZE: u64 = 32;
/// Size of the version 0 header.
pub const HEADER_SIZE: u64 = 88;
/// Size of the header every entry starts with.
pub const ENTRY_HEADER_SIZE: u64 = 60;
/// Size of a SPLAT entry.
pub const SPLAT_ENTRY_SIZE: u64 = 85;
/// Size of a DATA entry.
pub const DATA_ENTRY_SIZE: u64 = 76;
/// Size of an EXTERNAL entry (not supported, as in IREE).
pub const EXTERNAL_ENTRY_SIZE: u64 = 92;
/// Alignment of each entry in the entry table.
pub const ENTRY_ALIGNMENT: u64 = 16;
/// The longest splat pattern.
pub const MAX_PATTERN_LENGTH: usize = 16;

/// Entry types of the entry table.
pub mod entry_type {
    /// Erased: ignored by readers.
    pub const SKIP: u32 = 0;
    /// A repeated pattern.
    pub const SPLAT: u32 = 1;
    /// A range of the storage segment.
    pub const DATA: u32 = 2;
    /// A range of another file (IREE does not read these either).
    pub const EXTERNAL: u32 = 3;
}

/// One entry as the archive stores it, borrowing the file's bytes: what
/// `irvm params convert` needs to copy it exactly (the metadata bytes as
/// they are, which [`ArchiveEntry::info`] holds only as text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrpaEntry<'a> {
    /// The entry's name.
    pub key: &'a str,
    /// The entry's metadata blob (empty when it has none).
    pub metadata: &'a [u8],
    /// Its bytes, with absolute offsets.
    pub data: EntryData,
}

/// Reads every entry of a `.irpa` file.
pub fn read(bytes: &[u8]) -> Result<Vec<ArchiveEntry>, ArchiveError> {
    Ok(read_raw(bytes)?
        .into_iter()
        .map(|e| ArchiveEntry {
            key: e.key.to_string(),
            info: String::from_utf8_lossy(e.metadata).into_owned(),
            data: e.data,
        })
        .collect())
}

/// Reads every entry of a `.irpa` file, following the chain of linked
/// archives, in file order; SKIP entries are left out.
pub fn read_raw(bytes: &[u8]) -> Result<Vec<IrpaEntry<'_>>, ArchiveError> {
    let mut reader = Reader {
        bytes,
        file_len: bytes.len() as u64,
        entries: Vec::new(),
        entries_seen: 0,
        text_bytes: 0,
    };
    let mut base = 0u64;
    loop {
        let next = reader.archive(base)?;
        if next == 0 {
            return Ok(reader.entries);
        }
        base = base.checked_add(next).ok_or_else(|| {
            fail(
                base + 16,
                format!("linked header offset {next} from byte {base} overflows"),
            )
        })?;
    }
}

fn fail(offset: u64, message: String) -> ArchiveError {
    ArchiveError::new(Format::Irpa, offset, message)
}

fn short(offset: u64, message: String) -> ArchiveError {
    ArchiveError::short(Format::Irpa, offset, message)
}

/// A `(offset, length)` pair of the format.
#[derive(Clone, Copy)]
struct Range {
    offset: u64,
    length: u64,
}

/// A segment of one archive, checked to lie in the file.
#[derive(Clone, Copy)]
struct Segment {
    /// Absolute offset of its first byte (meaningless when empty).
    start: u64,
    length: u64,
}

struct Reader<'a> {
    bytes: &'a [u8],
    file_len: u64,
    entries: Vec<IrpaEntry<'a>>,
    /// Entries of every type read so far, against the file's room for them.
    entries_seen: u64,
    /// Bytes of names and metadata listed so far.
    text_bytes: u64,
}

impl<'a> Reader<'a> {
    fn u32(&self, at: u64, what: &str) -> Result<u32, ArchiveError> {
        u32_at(self.bytes, at).ok_or_else(|| self.truncated(at, what))
    }

    fn u64(&self, at: u64, what: &str) -> Result<u64, ArchiveError> {
        u64_at(self.bytes, at).ok_or_else(|| self.truncated(at, what))
    }

    fn range(&self, at: u64, what: &str) -> Result<Range, ArchiveError> {
        Ok(Range {
            offset: self.u64(at, what)?,
            length: self.u64(at.saturating_add(8), what)?,
        })
    }

    fn truncated(&self, at: u64, what: &str) -> ArchiveError {
        short(
            at,
            format!(
                "file truncated: {what} at byte {at} is past the end of the {}-byte file",
                self.file_len
            ),
        )
    }

    /// Reads the archive whose header is at `base`; returns its
    /// next-header offset (relative to `base`, 0 for none).
    fn archive(&mut self, base: u64) -> Result<u64, ArchiveError> {
        let prefix_end = base
            .checked_add(PREFIX_SIZE)
            .filter(|e| *e <= self.file_len);
        if prefix_end.is_none() {
            // INVALID_ARGUMENT, as IREE's parser says it (a header cut
            // short after its prefix is OUT_OF_RANGE there).
            return Err(fail(
                base,
                format!(
                    "not enough bytes for a header at byte {base} (a header prefix takes {PREFIX_SIZE}; the file has {}): the file is empty or truncated",
                    self.file_len
                ),
            ));
        }
        let magic = self.u32(base, "the magic")?;
        if magic != MAGIC {
            return Err(fail(
                base,
                format!("magic missing or invalid: {magic:08X}, expected {MAGIC:08X} (`IRPA`)"),
            ));
        }
        // In IREE's order (irpa_parser.c): a header that says it ends past
        // the end of the file is OUT_OF_RANGE whatever its version, then a
        // version other than 0.0 is UNIMPLEMENTED, then a version 0 header
        // of another size INVALID_ARGUMENT (compared with iree.runtime 3.13).
        let major = u16_at(self.bytes, base + 4).unwrap_or(0);
        let minor = u16_at(self.bytes, base + 6).unwrap_or(0);
        let header_size = self.u64(base + 8, "the header size")?;
        if base
            .checked_add(header_size)
            .is_none_or(|end| end > self.file_len)
        {
            return Err(short(
                base,
                format!(
                    "file truncated: the header at byte {base} says it is {header_size} bytes, past the end of the {}-byte file",
                    self.file_len
                ),
            ));
        }
        if major != 0 || minor != 0 {
            return Err(ArchiveError::unsupported(
                Format::Irpa,
                base + 4,
                format!("version {major}.{minor} is not supported (this reader reads version 0.0)"),
            ));
        }
        if header_size != HEADER_SIZE {
            return Err(fail(
                base + 8,
                format!(
                    "a version 0 header is {HEADER_SIZE} bytes, but this one says {header_size}"
                ),
            ));
        }
        let next = self.u64(base + 16, "the next header offset")?;
        let entry_count = self.u64(base + 32, "the entry count")?;
        let table = self.segment(base, base + 40, "entry table")?;
        let metadata = self.segment(base, base + 56, "metadata segment")?;
        let storage = self.segment(base, base + 72, "storage segment")?;

        let mut at = table.start;
        let mut remaining = table.length;
        for i in 0..entry_count {
            self.entries_seen += 1;
            if remaining < ENTRY_HEADER_SIZE
                || self.entries_seen > self.file_len / ENTRY_HEADER_SIZE
            {
                return Err(short(
                    at,
                    format!(
                        "entry table truncated: entry {i} of {entry_count} needs {ENTRY_HEADER_SIZE} bytes and the table has {remaining} left"
                    ),
                ));
            }
            let entry_size = self.u64(at, "an entry")?;
            if entry_size < ENTRY_HEADER_SIZE || entry_size > remaining {
                return Err(fail(
                    at,
                    format!(
                        "entry {i} says it is {entry_size} bytes; it must be at least {ENTRY_HEADER_SIZE} and at most the {remaining} bytes left in the entry table"
                    ),
                ));
            }
            let kind = self.u32(at + 8, "an entry")?;
            let name_ref = self.range(at + 20, "an entry")?;
            let metadata_ref = self.range(at + 36, "an entry")?;
            let name = self.metadata_bytes(metadata, name_ref, at + 20, "name")?;
            let meta = self.metadata_bytes(metadata, metadata_ref, at + 36, "metadata")?;
            let data = match kind {
                entry_type::SKIP => None,
                entry_type::SPLAT => Some(self.splat(at, entry_size, i)?),
                entry_type::DATA => Some(self.data(at, entry_size, i, storage)?),
                // UNIMPLEMENTED, as IREE's parser says both.
                entry_type::EXTERNAL => {
                    return Err(ArchiveError::unsupported(
                        Format::Irpa,
                        at + 8,
                        format!("entry {i} is an EXTERNAL entry (type 3): entries in other files are not supported (nor by IREE)"),
                    ))
                }
                other => {
                    return Err(ArchiveError::unsupported(
                        Format::Irpa,
                        at + 8,
                        format!("entry {i} has unknown type {other}"),
                    ));
                }
            };
            if let Some(data) = data {
                let key = std::str::from_utf8(name).map_err(|e| {
                    fail(
                        at + 20,
                        format!(
                            "entry {i}'s name is not UTF-8 (invalid byte at {})",
                            e.valid_up_to()
                        ),
                    )
                })?;
                self.text_bytes = self
                    .text_bytes
                    .saturating_add(name_ref.length)
                    .saturating_add(metadata_ref.length);
                if self.text_bytes > self.file_len {
                    return Err(fail(
                        at + 20,
                        format!("entry {i}: the entries' names and metadata overlap: together they are longer than the file"),
                    ));
                }
                self.entries.push(IrpaEntry {
                    key,
                    metadata: meta,
                    data,
                });
            }
            // The last entry need not be padded to the alignment.
            let aligned = align_up(entry_size, ENTRY_ALIGNMENT).unwrap_or(u64::MAX);
            at = at.saturating_add(aligned);
            remaining = remaining.saturating_sub(aligned);
        }
        Ok(next)
    }

    /// The segment whose (offset, length) pair is at `at`, relative to the
    /// header at `base`, checked to lie in the file (an empty one is not
    /// checked, as IREE does not).
    fn segment(&self, base: u64, at: u64, what: &str) -> Result<Segment, ArchiveError> {
        let r = self.range(at, what)?;
        if r.length == 0 {
            return Ok(Segment {
                start: 0,
                length: 0,
            });
        }
        let start = base.checked_add(r.offset);
        match start.and_then(|s| s.checked_add(r.length)) {
            Some(end) if end <= self.file_len => Ok(Segment {
                start: base + r.offset,
                length: r.length,
            }),
            _ => Err(short(
                at,
                format!(
                    "{what} out of range: {} bytes at offset {} from the header at byte {base} end past the end of the {}-byte file",
                    r.length, r.offset, self.file_len
                ),
            )),
        }
    }

    /// The bytes `r` names in the metadata segment.
    fn metadata_bytes(
        &self,
        metadata: Segment,
        r: Range,
        at: u64,
        what: &str,
    ) -> Result<&'a [u8], ArchiveError> {
        if r.length == 0 {
            return Ok(&[]);
        }
        let inside = r
            .offset
            .checked_add(r.length)
            .is_some_and(|end| end <= metadata.length);
        let bytes = inside
            .then(|| slice(self.bytes, metadata.start + r.offset, r.length))
            .flatten();
        bytes.ok_or_else(|| {
            short(
                at,
                format!(
                    "entry {what} out of range: {} bytes at offset {} of a {}-byte metadata segment",
                    r.length, r.offset, metadata.length
                ),
            )
        })
    }

    fn splat(&self, at: u64, entry_size: u64, i: u64) -> Result<EntryData, ArchiveError> {
        if entry_size < SPLAT_ENTRY_SIZE {
            return Err(fail(
                at,
                format!("entry {i} is a SPLAT entry of {entry_size} bytes; one takes {SPLAT_ENTRY_SIZE}"),
            ));
        }
        let length = self.u64(at + 60, "a splat entry")?;
        let pattern = slice(self.bytes, at + 68, MAX_PATTERN_LENGTH as u64)
            .ok_or_else(|| self.truncated(at + 68, "a splat pattern"))?;
        let pattern_length = slice(self.bytes, at + 84, 1)
            .ok_or_else(|| self.truncated(at + 84, "a splat pattern length"))?[0]
            as usize;
        if pattern_length == 0 || pattern_length > MAX_PATTERN_LENGTH {
            return Err(fail(
                at + 84,
                format!("entry {i}'s splat pattern is {pattern_length} bytes; it must be 1 to {MAX_PATTERN_LENGTH}"),
            ));
        }
        Ok(EntryData::Splat {
            pattern: pattern[..pattern_length].to_vec(),
            length,
        })
    }

    fn data(
        &self,
        at: u64,
        entry_size: u64,
        i: u64,
        storage: Segment,
    ) -> Result<EntryData, ArchiveError> {
        if entry_size < DATA_ENTRY_SIZE {
            return Err(fail(
                at,
                format!(
                    "entry {i} is a DATA entry of {entry_size} bytes; one takes {DATA_ENTRY_SIZE}"
                ),
            ));
        }
        let r = self.range(at + 60, "a data entry")?;
        if r.length == 0 {
            // As IREE: an empty entry has no place in the file.
            return Ok(EntryData::Data {
                offset: 0,
                length: 0,
            });
        }
        if r.offset
            .checked_add(r.length)
            .is_none_or(|end| end > storage.length)
        {
            return Err(short(
                at + 60,
                format!(
                    "entry {i}'s data out of range: {} bytes at offset {} of a {}-byte storage segment",
                    r.length, r.offset, storage.length
                ),
            ));
        }
        Ok(EntryData::Data {
            offset: storage.start + r.offset,
            length: r.length,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::irpa_writer::{ArchiveWriter, Contents};

    /// Made by `iree-create-parameters --splat=s=2xi32=5 --data=d=4xf32
    /// --data=e=3xi8` (IREE 3.13).
    const REFERENCE: &[u8] = include_bytes!("../../../../tests/data/params/data.irpa");

    fn put(bytes: &mut [u8], at: usize, v: u64) {
        bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn message(bytes: &[u8]) -> String {
        read(bytes).unwrap_err().message
    }

    /// An archive of a splat `s`, data `d` (4 bytes of 0xD0) and data `e`.
    fn sample() -> Vec<u8> {
        let mut w = ArchiveWriter::new();
        w.add_splat("s", b"m", &[5, 0, 0, 0], 8).unwrap();
        w.add_data("d", b"", 64, 4, Contents::Fill(vec![0xD0]))
            .unwrap();
        w.add_data("e", b"", 64, 3, Contents::Zeros).unwrap();
        let mut out = std::io::Cursor::new(Vec::new());
        w.write(&mut out).unwrap();
        out.into_inner()
    }

    /// Offset of entry `i`'s header in a file written by the writer.
    fn entry_at(bytes: &[u8], i: usize) -> usize {
        let mut at = 96;
        for _ in 0..i {
            let size = u64_at(bytes, at as u64).unwrap() as usize;
            at += size.div_ceil(16) * 16;
        }
        at
    }

    #[test]
    fn reads_the_reference_tools_archive() {
        let entries = read(REFERENCE).unwrap();
        let keys: Vec<_> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["s", "d", "e"]);
        assert_eq!(
            entries[0].data,
            EntryData::Splat {
                pattern: vec![5, 0, 0, 0],
                length: 8
            }
        );
        assert_eq!(
            entries[1].data,
            EntryData::Data {
                offset: 384,
                length: 16
            }
        );
        assert_eq!(
            entries[2].data,
            EntryData::Data {
                offset: 448,
                length: 3
            }
        );
    }

    #[test]
    fn skip_entries_are_not_listed_and_external_ones_are_refused() {
        let mut bytes = sample();
        let d = entry_at(&bytes, 1);
        bytes[d + 8..d + 12].copy_from_slice(&entry_type::SKIP.to_le_bytes());
        let keys: Vec<_> = read(&bytes).unwrap().into_iter().map(|e| e.key).collect();
        assert_eq!(keys, ["s", "e"]);
        bytes[d + 8..d + 12].copy_from_slice(&entry_type::EXTERNAL.to_le_bytes());
        assert!(message(&bytes).contains("EXTERNAL"));
        assert!(read(&bytes).unwrap_err().unsupported);
        bytes[d + 8..d + 12].copy_from_slice(&9u32.to_le_bytes());
        assert!(message(&bytes).contains("unknown type 9"));
        assert!(read(&bytes).unwrap_err().unsupported);
    }

    #[test]
    fn truncated_at_every_byte_is_an_error() {
        let bytes = sample();
        // The writer pads to 4096 bytes; cut the padding off first.
        let EntryData::Data { offset, length } = read(&bytes).unwrap()[2].data else {
            panic!()
        };
        let end = (offset + length) as usize;
        assert_eq!(read(&bytes[..end]).unwrap().len(), 3);
        for n in 0..end {
            let e = read(&bytes[..n]).unwrap_err();
            // IREE calls a file that ends early OUT_OF_RANGE, but one too
            // short for a header prefix INVALID_ARGUMENT (irpa_parser.c,
            // compared with iree.runtime 3.13).
            assert_eq!(e.out_of_range, n >= PREFIX_SIZE as usize, "{n} bytes: {e}");
        }
    }

    #[test]
    fn magic_and_versions() {
        let mut bytes = sample();
        bytes[0] = b'X';
        assert!(message(&bytes).contains("magic"));
        for (major, minor) in [(1u16, 0u16), (0, 1)] {
            let mut bytes = sample();
            bytes[4..6].copy_from_slice(&major.to_le_bytes());
            bytes[6..8].copy_from_slice(&minor.to_le_bytes());
            assert!(message(&bytes).contains(&format!("version {major}.{minor}")));
            // UNIMPLEMENTED, as IREE's parser says it.
            assert!(read(&bytes).unwrap_err().unsupported);
            // A header size past the end of the file is OUT_OF_RANGE first.
            let past_the_end = bytes.len() as u64 + 1;
            put(&mut bytes, 8, past_the_end);
            assert!(read(&bytes).unwrap_err().out_of_range);
        }
        assert!(message(&[]).contains("empty or truncated"));
    }

    #[test]
    fn lying_sizes_are_errors() {
        let mut bytes = sample();
        put(&mut bytes, 8, 96);
        assert!(message(&bytes).contains("88 bytes"));
        assert!(!read(&bytes).unwrap_err().out_of_range);
        // One that ends past the end of the file (IREE: OUT_OF_RANGE).
        for size in [bytes.len() as u64 + 1, 1 << 40, u64::MAX] {
            put(&mut bytes, 8, size);
            let e = read(&bytes).unwrap_err();
            assert!(
                e.out_of_range && e.message.contains("past the end"),
                "{size}: {e}"
            );
        }
        // Entry table, metadata and storage segments past the end.
        for at in [48, 64, 80] {
            let mut bytes = sample();
            put(&mut bytes, at, 1 << 40);
            assert!(message(&bytes).contains("out of range"), "{at}");
        }
        // An entry larger than the table, or smaller than a header.
        let mut bytes = sample();
        put(&mut bytes, 96, 1 << 20);
        assert!(message(&bytes).contains("at most"));
        put(&mut bytes, 96, 59);
        assert!(message(&bytes).contains("at least"));
        // A SPLAT entry too short for its fields, a DATA entry too.
        put(&mut bytes, 96, 64);
        assert!(message(&bytes).contains("SPLAT entry of 64 bytes"));
        let mut bytes = sample();
        let d = entry_at(&bytes, 1);
        put(&mut bytes, d, 64);
        assert!(message(&bytes).contains("DATA entry of 64 bytes"));
        // A name or data range outside its segment.
        let mut bytes = sample();
        put(&mut bytes, d + 28, 1 << 30);
        assert!(message(&bytes).contains("name out of range"));
        let mut bytes = sample();
        put(&mut bytes, d + 68, 1 << 30);
        assert!(message(&bytes).contains("data out of range"));
        // A splat pattern longer than 16 bytes, or empty.
        for len in [0u8, 17] {
            let mut bytes = sample();
            bytes[96 + 84] = len;
            assert!(message(&bytes).contains("splat pattern is"), "{len}");
        }
    }

    #[test]
    fn offsets_that_wrap_are_errors() {
        // Segments, a name, a data range and a linked header whose offset
        // plus length (or plus the header's position) wraps past 2^64.
        for (at, value) in [
            (40usize, u64::MAX - 8),
            (56, u64::MAX),
            (72, u64::MAX - 100),
        ] {
            let mut bytes = sample();
            put(&mut bytes, at, value);
            assert!(message(&bytes).contains("out of range"), "{at}");
        }
        let mut bytes = sample();
        let d = entry_at(&bytes, 1);
        put(&mut bytes, d + 20, u64::MAX);
        assert!(message(&bytes).contains("out of range"));
        let mut bytes = sample();
        put(&mut bytes, d + 60, u64::MAX - 1);
        assert!(message(&bytes).contains("out of range"));
        let mut bytes = sample();
        put(&mut bytes, 16, u64::MAX);
        assert!(read(&bytes).is_err());
    }

    #[test]
    fn huge_entry_counts_fail_fast() {
        let mut bytes = sample();
        put(&mut bytes, 32, u64::MAX);
        assert!(message(&bytes).contains("entry table truncated"));
    }

    #[test]
    fn overlapping_data_is_allowed_as_the_format_says() {
        let mut bytes = sample();
        let (d, e) = (entry_at(&bytes, 1), entry_at(&bytes, 2));
        let d_offset = u64_at(&bytes, d as u64 + 60).unwrap();
        put(&mut bytes, e + 60, d_offset + 1);
        let entries = read(&bytes).unwrap();
        let (EntryData::Data { offset: a, .. }, EntryData::Data { offset: b, .. }) =
            (&entries[1].data, &entries[2].data)
        else {
            panic!()
        };
        assert_eq!(*b, a + 1);
    }

    #[test]
    fn names_must_be_utf8() {
        let mut bytes = sample();
        let meta = u64_at(&bytes, 56).unwrap() as usize;
        bytes[meta] = 0xFF;
        assert!(message(&bytes).contains("not UTF-8"));
    }

    #[test]
    fn names_shared_by_many_entries_are_refused() {
        // Two thousand entries all naming the same 1000-byte name would list
        // 2 MB of names from a 130 KB file.
        let name = "n".repeat(1000);
        let mut w = ArchiveWriter::new();
        for _ in 0..2000 {
            w.add_splat("", b"", &[0], 1).unwrap();
        }
        w.add_splat(&name, b"", &[0], 1).unwrap();
        let mut out = std::io::Cursor::new(Vec::new());
        w.write(&mut out).unwrap();
        let mut bytes = out.into_inner();
        for i in 0..2000 {
            let at = 96 + i * 96;
            put(&mut bytes, at + 28, 1000);
        }
        assert!(message(&bytes).contains("overlap"));
    }

    /// Two archives in one file: the second at byte 4096, linked from the
    /// first's header.
    fn linked() -> Vec<u8> {
        let mut a = sample();
        let mut w = ArchiveWriter::new();
        w.add_data("x", b"", 64, 2, Contents::Fill(vec![0x58]))
            .unwrap();
        let mut out = std::io::Cursor::new(Vec::new());
        w.write(&mut out).unwrap();
        let len = a.len() as u64;
        put(&mut a, 16, len);
        a.extend_from_slice(&out.into_inner());
        a
    }

    #[test]
    fn linked_archives_read_their_own_tables() {
        let bytes = linked();
        let entries = read(&bytes).unwrap();
        let keys: Vec<_> = entries.iter().map(|e| e.key.as_str()).collect();
        // IREE 3.13 misreads this file (see the module doc).
        assert_eq!(keys, ["s", "d", "e", "x"]);
        let EntryData::Data { offset, length } = entries[3].data else {
            panic!()
        };
        assert!(offset > 4096);
        assert_eq!(&bytes[offset as usize..(offset + length) as usize], b"XX");
        // A link past the end, and a link to something that is not a header.
        let mut bad = bytes.clone();
        put(&mut bad, 16, 1 << 20);
        assert!(message(&bad).contains("not enough bytes for a header"));
        let mut bad = bytes;
        put(&mut bad, 16, 8);
        assert!(message(&bad).contains("magic"));
    }
}
