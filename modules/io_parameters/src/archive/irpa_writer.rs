//! The `irpa` writer: builds a parameter archive with the layout of IREE's
//! archive builder (`runtime/src/iree/io/formats/irpa/irpa_builder.c`), so
//! that the same entries give the same bytes as `iree-create-parameters`
//! and `iree-convert-parameters`:
//!
//! - the 88-byte header at 0, the entry table from byte 96, each entry at a
//!   multiple of 16 (the segment's length leaves out the padding after the
//!   last entry);
//! - the metadata segment right after the last entry: each entry's name
//!   then its metadata, in entry order;
//! - the storage segment at the next multiple of the first DATA entry's
//!   alignment (1 without DATA entries), each DATA entry at a multiple of
//!   its own alignment from the segment's start;
//! - the file padded with zeros to a multiple of 4096 bytes;
//! - every DATA entry records a minimum alignment of 64 (IREE's default,
//!   whatever alignment placed it), SPLAT entries 0; a splat's 16 pattern
//!   bytes are zero past its length.
//!
//! The writer lays the archive out first ([`ArchiveWriter::layout`]), then
//! writes it to a [`Output`] sized to its final length at once, so entries
//! of zeros cost nothing on a file system with sparse files.

use std::io::{self, Seek, SeekFrom, Write};

use super::bytes::align_up;
use super::irpa::{
    entry_type, DATA_ENTRY_SIZE, ENTRY_ALIGNMENT, HEADER_SIZE, MAGIC, MAX_PATTERN_LENGTH,
    SPLAT_ENTRY_SIZE,
};
use super::{ArchiveEntry, EntryData};

/// Alignment of the archive's total size.
pub const FILE_ALIGNMENT: u64 = 4096;
/// IREE's default alignment of DATA entries (and what every DATA entry
/// records as its minimum alignment).
pub const DEFAULT_DATA_ALIGNMENT: u64 = 64;

/// What a DATA entry's bytes are.
#[derive(Clone, Debug)]
pub enum Contents<'a> {
    /// Zeros (nothing is written: the file is sized with zeros).
    Zeros,
    /// `pattern` repeated over the entry's length (the last copy cut short).
    Fill(Vec<u8>),
    /// These bytes (as long as the entry).
    Bytes(&'a [u8]),
}

#[derive(Clone, Debug)]
enum Kind<'a> {
    Splat {
        pattern: Vec<u8>,
    },
    Data {
        alignment: u64,
        contents: Contents<'a>,
    },
}

#[derive(Clone, Debug)]
struct NewEntry<'a> {
    key: String,
    metadata: Vec<u8>,
    length: u64,
    kind: Kind<'a>,
}

/// Why an entry cannot be added.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// A splat pattern of other than 1, 2, 4, 8 or 16 bytes.
    #[error("splat pattern length {0} invalid; must be 1, 2, 4, 8, or 16 bytes")]
    PatternLength(usize),
    /// An alignment that is not a power of two.
    #[error("alignment {0} invalid; must be a power of two")]
    Alignment(u64),
    /// `Contents::Bytes` of another length than the entry's.
    #[error("entry `{key}`: {given} bytes given for a {length}-byte entry")]
    ContentsLength {
        /// The entry.
        key: String,
        /// Its length.
        length: u64,
        /// The bytes given.
        given: u64,
    },
    /// A fill pattern of no bytes for a non-empty entry.
    #[error("entry `{0}`: an empty fill pattern")]
    EmptyFill(String),
    /// The archive would not fit in 64-bit offsets.
    #[error("the archive would be larger than 2^64 bytes")]
    TooLarge,
}

/// Where everything goes: the header, entry table and metadata as bytes,
/// and the offset of each entry's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The archive's first bytes: header, entry table and metadata.
    pub head: Vec<u8>,
    /// The archive's total length (a multiple of [`FILE_ALIGNMENT`]).
    pub total_size: u64,
    /// The entries as a reader lists them (absolute offsets), in order.
    pub entries: Vec<ArchiveEntry>,
}

/// Builds one archive from entries, in the order they are added.
#[derive(Clone, Debug, Default)]
pub struct ArchiveWriter<'a> {
    entries: Vec<NewEntry<'a>>,
}

/// Where an archive is written: a file (sized with `File::set_len`) or a
/// buffer.
pub trait Output: Write + Seek {
    /// Makes the output `len` bytes long, zero-filled.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

impl Output for std::fs::File {
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        std::fs::File::set_len(self, len)
    }
}

impl Output for io::Cursor<Vec<u8>> {
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "archive too large"))?;
        self.get_mut().resize(len, 0);
        Ok(())
    }
}

impl<'a> ArchiveWriter<'a> {
    /// An archive of no entries.
    pub fn new() -> ArchiveWriter<'a> {
        ArchiveWriter::default()
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds a SPLAT entry: `length` bytes repeating `pattern` (1, 2, 4, 8 or
    /// 16 bytes, as IREE's builder requires).
    pub fn add_splat(
        &mut self,
        key: &str,
        metadata: &[u8],
        pattern: &[u8],
        length: u64,
    ) -> Result<(), WriteError> {
        if pattern.is_empty()
            || pattern.len() > MAX_PATTERN_LENGTH
            || !pattern.len().is_power_of_two()
        {
            return Err(WriteError::PatternLength(pattern.len()));
        }
        self.entries.push(NewEntry {
            key: key.to_string(),
            metadata: metadata.to_vec(),
            length,
            kind: Kind::Splat {
                pattern: pattern.to_vec(),
            },
        });
        Ok(())
    }

    /// Adds a DATA entry of `length` bytes stored at a multiple of
    /// `alignment` (a power of two) from the storage segment's start.
    pub fn add_data(
        &mut self,
        key: &str,
        metadata: &[u8],
        alignment: u64,
        length: u64,
        contents: Contents<'a>,
    ) -> Result<(), WriteError> {
        if !alignment.is_power_of_two() {
            return Err(WriteError::Alignment(alignment));
        }
        match &contents {
            Contents::Bytes(b) if b.len() as u64 != length => {
                return Err(WriteError::ContentsLength {
                    key: key.to_string(),
                    length,
                    given: b.len() as u64,
                })
            }
            Contents::Fill(p) if p.is_empty() && length > 0 => {
                return Err(WriteError::EmptyFill(key.to_string()))
            }
            _ => {}
        }
        self.entries.push(NewEntry {
            key: key.to_string(),
            metadata: metadata.to_vec(),
            length,
            kind: Kind::Data {
                alignment,
                contents,
            },
        });
        Ok(())
    }

    /// Lays the archive out.
    pub fn layout(&self) -> Result<Layout, WriteError> {
        let big = || WriteError::TooLarge;
        let add = |a: u64, b: u64| a.checked_add(b).ok_or(WriteError::TooLarge);
        let table_start = align_up(HEADER_SIZE, ENTRY_ALIGNMENT).ok_or_else(big)?;
        // Sizes and the storage offsets relative to the storage segment.
        let mut table_len = 0u64;
        let mut metadata_len = 0u64;
        let mut storage_len = 0u64;
        let mut storage_alignment = None;
        let mut relative = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let entry_size = match e.kind {
                Kind::Splat { .. } => SPLAT_ENTRY_SIZE,
                Kind::Data { .. } => DATA_ENTRY_SIZE,
            };
            table_len = add(
                align_up(table_len, ENTRY_ALIGNMENT).ok_or_else(big)?,
                entry_size,
            )?;
            metadata_len = add(
                metadata_len,
                add(e.key.len() as u64, e.metadata.len() as u64)?,
            )?;
            if let Kind::Data { alignment, .. } = e.kind {
                let at = align_up(storage_len, alignment).ok_or_else(big)?;
                storage_len = add(at, e.length)?;
                storage_alignment.get_or_insert(alignment);
                relative.push(at);
            } else {
                relative.push(0);
            }
        }
        let metadata_start = add(table_start, table_len)?;
        let storage_start = align_up(
            add(metadata_start, metadata_len)?,
            storage_alignment.unwrap_or(1),
        )
        .ok_or_else(big)?;
        let total_size =
            align_up(add(storage_start, storage_len)?, FILE_ALIGNMENT).ok_or_else(big)?;

        let head_len = usize::try_from(add(metadata_start, metadata_len)?).map_err(|_| big())?;
        let mut head = Vec::with_capacity(head_len);
        let put = |head: &mut Vec<u8>, v: u64| head.extend_from_slice(&v.to_le_bytes());
        head.extend_from_slice(&MAGIC.to_le_bytes());
        head.extend_from_slice(&0u16.to_le_bytes()); // version major
        head.extend_from_slice(&0u16.to_le_bytes()); // version minor
        put(&mut head, HEADER_SIZE);
        put(&mut head, 0); // next header offset
        put(&mut head, 0); // flags
        put(&mut head, self.entries.len() as u64);
        for (offset, length) in [
            (table_start, table_len),
            (metadata_start, metadata_len),
            (storage_start, storage_len),
        ] {
            put(&mut head, offset);
            put(&mut head, length);
        }

        // The entry table starts aligned, even when it is empty.
        head.resize(usize::try_from(table_start).map_err(|_| big())?, 0);
        let mut entries = Vec::with_capacity(self.entries.len());
        let mut meta_at = 0u64;
        for (e, at) in self.entries.iter().zip(relative) {
            head.resize(
                align_up(head.len() as u64, ENTRY_ALIGNMENT).ok_or_else(big)? as usize,
                0,
            );
            let name = (meta_at, e.key.len() as u64);
            meta_at += e.key.len() as u64;
            let metadata = if e.metadata.is_empty() {
                (0, 0)
            } else {
                (meta_at, e.metadata.len() as u64)
            };
            meta_at += e.metadata.len() as u64;
            let (size, kind, min_alignment) = match e.kind {
                Kind::Splat { .. } => (SPLAT_ENTRY_SIZE, entry_type::SPLAT, 0),
                Kind::Data { .. } => (DATA_ENTRY_SIZE, entry_type::DATA, DEFAULT_DATA_ALIGNMENT),
            };
            put(&mut head, size);
            head.extend_from_slice(&kind.to_le_bytes());
            put(&mut head, 0); // flags
            put(&mut head, name.0);
            put(&mut head, name.1);
            put(&mut head, metadata.0);
            put(&mut head, metadata.1);
            put(&mut head, min_alignment);
            let data = match &e.kind {
                Kind::Splat { pattern } => {
                    put(&mut head, e.length);
                    let mut bytes = [0u8; MAX_PATTERN_LENGTH];
                    bytes[..pattern.len()].copy_from_slice(pattern);
                    head.extend_from_slice(&bytes);
                    head.push(pattern.len() as u8);
                    EntryData::Splat {
                        pattern: pattern.clone(),
                        length: e.length,
                    }
                }
                Kind::Data { .. } => {
                    put(&mut head, at);
                    put(&mut head, e.length);
                    EntryData::Data {
                        offset: storage_start + at,
                        length: e.length,
                    }
                }
            };
            entries.push(ArchiveEntry {
                key: e.key.clone(),
                data,
                info: String::from_utf8_lossy(&e.metadata).into_owned(),
            });
        }
        for e in &self.entries {
            head.extend_from_slice(e.key.as_bytes());
            head.extend_from_slice(&e.metadata);
        }
        debug_assert_eq!(head.len(), head_len);
        Ok(Layout {
            head,
            total_size,
            entries,
        })
    }

    /// Writes the archive to `out` (from its start) and returns its layout.
    pub fn write(&self, out: &mut impl Output) -> io::Result<Layout> {
        let layout = self
            .layout()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        out.set_len(0)?;
        out.set_len(layout.total_size)?;
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&layout.head)?;
        for (e, placed) in self.entries.iter().zip(&layout.entries) {
            let (Kind::Data { contents, .. }, EntryData::Data { offset, length }) =
                (&e.kind, &placed.data)
            else {
                continue;
            };
            match contents {
                Contents::Zeros => {}
                Contents::Bytes(bytes) => {
                    out.seek(SeekFrom::Start(*offset))?;
                    out.write_all(bytes)?;
                }
                Contents::Fill(pattern) => {
                    out.seek(SeekFrom::Start(*offset))?;
                    fill(out, pattern, *length)?;
                }
            }
        }
        out.flush()?;
        Ok(layout)
    }
}

/// Writes `length` bytes of `pattern` repeated.
fn fill(out: &mut impl Write, pattern: &[u8], length: u64) -> io::Result<()> {
    if length == 0 {
        return Ok(());
    }
    // A chunk of whole patterns, about 64 KiB.
    let copies = (65536 / pattern.len()).max(1);
    let chunk: Vec<u8> = pattern
        .iter()
        .copied()
        .cycle()
        .take(copies * pattern.len())
        .collect();
    let mut left = length;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        out.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::irpa;

    fn build(w: &ArchiveWriter<'_>) -> Vec<u8> {
        let mut out = io::Cursor::new(Vec::new());
        w.write(&mut out).unwrap();
        out.into_inner()
    }

    #[test]
    fn an_empty_archive_is_a_header_in_a_page() {
        let bytes = build(&ArchiveWriter::new());
        assert_eq!(bytes.len(), 4096);
        assert_eq!(&bytes[..4], b"IRPA");
        // The entry table would start at 96; metadata and storage follow it.
        assert_eq!(u64::from_le_bytes(bytes[40..48].try_into().unwrap()), 96);
        assert_eq!(u64::from_le_bytes(bytes[72..80].try_into().unwrap()), 96);
        assert!(irpa::read(&bytes).unwrap().is_empty());
    }

    #[test]
    fn written_archives_read_back() {
        let data = [7u8; 10];
        let mut w = ArchiveWriter::new();
        w.add_splat("s", b"meta", &[1, 2, 3, 4], 12).unwrap();
        w.add_data("d", b"", 64, 10, Contents::Bytes(&data))
            .unwrap();
        w.add_data("f", b"", 64, 5, Contents::Fill(vec![0xAB, 0xCD]))
            .unwrap();
        w.add_data("z", b"", 64, 3, Contents::Zeros).unwrap();
        let bytes = build(&w);
        let entries = irpa::read(&bytes).unwrap();
        let keys: Vec<_> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["s", "d", "f", "z"]);
        assert_eq!(entries[0].info, "meta");
        assert_eq!(
            entries[0].data,
            EntryData::Splat {
                pattern: vec![1, 2, 3, 4],
                length: 12
            }
        );
        let at = |e: &ArchiveEntry| match e.data {
            EntryData::Data { offset, length } => {
                &bytes[offset as usize..(offset + length) as usize]
            }
            _ => panic!("not data"),
        };
        assert_eq!(at(&entries[1]), &data);
        assert_eq!(at(&entries[2]), &[0xAB, 0xCD, 0xAB, 0xCD, 0xAB]);
        assert_eq!(at(&entries[3]), &[0, 0, 0]);
        // Each DATA entry at a multiple of 64 from the segment (itself at a
        // multiple of 64).
        for e in &entries[1..] {
            let EntryData::Data { offset, .. } = e.data else {
                panic!()
            };
            assert_eq!(offset % 64, 0);
        }
        assert_eq!(bytes.len() % 4096, 0);
        assert_eq!(w.layout().unwrap().entries, entries);
    }

    #[test]
    fn same_bytes_as_iree_create_parameters() {
        // `iree-create-parameters --splat=s=2xi32=5 --data=d=4xf32
        // --data=e=3xi8` (IREE 3.13); and `--splat=a=4xf32=1.5
        // --splat=b=2x3xi16=7`.
        let reference = include_bytes!("../../../../tests/data/params/data.irpa");
        let mut w = ArchiveWriter::new();
        w.add_splat("s", b"", &5i32.to_le_bytes(), 8).unwrap();
        w.add_data("d", b"", 64, 16, Contents::Zeros).unwrap();
        w.add_data("e", b"", 64, 3, Contents::Zeros).unwrap();
        assert_eq!(build(&w), reference);
        let reference = include_bytes!("../../../../tests/data/params/splats.irpa");
        let mut w = ArchiveWriter::new();
        w.add_splat("a", b"", &1.5f32.to_le_bytes(), 16).unwrap();
        w.add_splat("b", b"", &7i16.to_le_bytes(), 12).unwrap();
        assert_eq!(build(&w), reference);
    }

    #[test]
    fn bad_patterns_and_alignments_are_refused() {
        let mut w = ArchiveWriter::new();
        assert_eq!(
            w.add_splat("a", b"", &[1, 2, 3], 3),
            Err(WriteError::PatternLength(3))
        );
        assert_eq!(
            w.add_splat("a", b"", &[], 3),
            Err(WriteError::PatternLength(0))
        );
        assert_eq!(
            w.add_splat("a", b"", &[0; 17], 3),
            Err(WriteError::PatternLength(17))
        );
        assert_eq!(
            w.add_data("a", b"", 0, 3, Contents::Zeros),
            Err(WriteError::Alignment(0))
        );
        assert_eq!(
            w.add_data("a", b"", 48, 3, Contents::Zeros),
            Err(WriteError::Alignment(48))
        );
        assert!(matches!(
            w.add_data("a", b"", 64, 3, Contents::Bytes(&[1])),
            Err(WriteError::ContentsLength { .. })
        ));
        assert!(w.is_empty());
    }

    #[test]
    fn sizes_that_overflow_are_refused() {
        let mut w = ArchiveWriter::new();
        w.add_data("a", b"", 64, u64::MAX - 10, Contents::Zeros)
            .unwrap();
        assert_eq!(w.layout(), Err(WriteError::TooLarge));
    }
}
