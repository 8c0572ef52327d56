//! Reading native executables without running them: the ELF checks made
//! before the system loader sees the bytes, and a static reader of the
//! library tables for `irvm dump` (it lays the segments out, applies the
//! relative relocations and finds the library table by its shape, so no
//! code from the module runs).

use irvm::{StatusCode, Trap};

use super::abi::LIBRARY_VERSION;

/// `EM_X86_64`.
const MACHINE_X86_64: u16 = 62;
/// `ET_DYN`.
const TYPE_SHARED: u16 = 3;
/// Largest image the static reader lays out.
const MAX_IMAGE: u64 = 256 << 20;
/// The page size the loader maps segments with.
const PAGE: u64 = 4096;

/// IREE's optional footer after a system library: `IREEDBG\0`, version,
/// flags, then library offset/size and debug offset/size (u64 each).
const FOOTER_MAGIC: &[u8; 8] = b"IREEDBG\0";
const FOOTER_LEN: usize = 8 + 4 + 4 + 4 * 8;

pub(super) fn invalid(message: impl Into<String>) -> Trap {
    Trap::new(StatusCode::InvalidArgument, message.into())
}

/// The error for a library the layout checks refuse: an [`invalid`]
/// `native executable: {what}`.
pub(super) fn malformed(what: String) -> Trap {
    invalid(format!("native executable: {what}"))
}

pub(super) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}
pub(super) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}
pub(super) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// One loadable segment (`PT_LOAD`) as the loader maps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Where its bytes start in the file.
    pub offset: u64,
    /// Where it is mapped, relative to the load base.
    pub vaddr: u64,
    /// Bytes mapped from the file.
    pub filesz: u64,
    /// Bytes mapped in all (the rest zero).
    pub memsz: u64,
    /// `PF_X`: machine code.
    pub exec: bool,
    /// `PF_W`: written by relocations.
    pub write: bool,
}

/// The loadable segments of a checked library, in address order.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Its `PT_LOAD` segments.
    pub loads: Vec<Segment>,
}

impl Layout {
    /// Whether `len` bytes at `offset` from the load base lie in one
    /// segment (in a code segment with `code`).
    pub fn contains(&self, offset: u64, len: u64, code: bool) -> bool {
        self.loads.iter().any(|s| {
            offset >= s.vaddr
                && offset
                    .checked_add(len)
                    .is_some_and(|e| e <= s.vaddr + s.memsz)
                && (s.exec || !code)
        })
    }

    /// How many bytes from `offset` to the end of its segment (0 if
    /// `offset` is in none).
    pub fn remaining(&self, offset: u64) -> u64 {
        self.loads
            .iter()
            .find(|s| offset >= s.vaddr && offset < s.vaddr + s.memsz)
            .map_or(0, |s| s.vaddr + s.memsz - offset)
    }
}

/// The shared object inside executable `data` of `format`: all of it, or
/// for `system-elf-*` the part IREE's debug footer delimits.
pub fn library_bytes<'a>(format: &str, data: &'a [u8]) -> Result<&'a [u8], Trap> {
    if !format.starts_with("system-") || data.len() < FOOTER_LEN {
        return Ok(data);
    }
    let footer = &data[data.len() - FOOTER_LEN..];
    if &footer[..8] != FOOTER_MAGIC {
        return Ok(data);
    }
    // As IREE's system library loader: the library starts at the data's
    // first byte (the footer's library offset is not read) and the sizes
    // are checked against all of the data.
    let size = u64_at(footer, 24).unwrap_or(u64::MAX);
    let body = data.len() as u64;
    let debug_end = u64_at(footer, 32)
        .zip(u64_at(footer, 40))
        .and_then(|(o, s)| o.checked_add(s))
        .unwrap_or(u64::MAX);
    if size > body || debug_end > body {
        return Err(Trap::new(
            StatusCode::OutOfRange,
            "system library footer references out of range bytes",
        ));
    }
    Ok(&data[..size as usize])
}

/// Checks `image` is a 64-bit little-endian shared object for this host's
/// machine before the system loader maps it.
pub fn check_header(image: &[u8]) -> Result<(), Trap> {
    if image.len() < 64 || &image[..4] != b"\x7fELF" {
        return Err(invalid(
            "native executable is not an ELF file (no \\x7fELF magic)",
        ));
    }
    if image[4] != 2 || image[5] != 1 {
        return Err(invalid(
            "native executable is not a 64-bit little-endian ELF file",
        ));
    }
    let kind = u16_at(image, 0x10).unwrap_or(0);
    if kind != TYPE_SHARED {
        return Err(invalid(format!(
            "native executable is an ELF file of type {kind}, not a shared object"
        )));
    }
    let machine = u16_at(image, 0x12).unwrap_or(0);
    let host = if cfg!(target_arch = "x86_64") {
        MACHINE_X86_64
    } else {
        0
    };
    if machine != host {
        return Err(invalid(format!(
            "native executable is for ELF machine {machine}, not this host's"
        )));
    }
    Ok(())
}

/// Checks what the system loader will map and read before it maps it:
/// the program headers lie in `image`; every loadable segment is
/// readable, in address order, without overlap, and its file bytes are in
/// `image` (a segment reaching past the end would be mapped past the end
/// of the file, and touching it would kill the process with SIGBUS);
/// every other segment the loader reads lies in a loadable one; and the
/// dynamic section with every table it points the loader at is sound
/// (`dynamic.rs`). This catches truncated, corrupted and misassembled
/// libraries; it cannot make arbitrary machine code safe (see
/// docs/HOSTILE_INPUT.md).
pub fn check_layout(image: &[u8]) -> Result<Layout, Trap> {
    check_header(image)?;
    let (phoff, phnum) = program_header_table(image)?;
    let headers = read_program_headers(image, phoff, phnum)?;
    let layout = Layout {
        loads: headers.loads,
    };
    check_other_segments(&layout, &headers.others)?;
    check_relro(&layout, headers.relro)?;
    let (dyn_addr, dyn_len) = headers
        .dynamic
        .ok_or_else(|| malformed("no dynamic segment".into()))?;
    super::dynamic::check(image, &layout.loads, dyn_addr, dyn_len)?;
    Ok(layout)
}

/// Bytes of one `Elf64_Phdr`.
const PHDR: u64 = 56;

/// The program headers, sorted by what the loader does with them.
struct ProgramHeaders {
    /// `PT_LOAD`, checked.
    loads: Vec<Segment>,
    /// The other segments the loader reads: (index, type, address, size).
    others: Vec<(u64, u32, u64, u64)>,
    /// `PT_DYNAMIC`: (address, file size).
    dynamic: Option<(u64, u64)>,
    /// `PT_GNU_RELRO`: (index, address, size).
    relro: Option<(u64, u64, u64)>,
}

/// The program header table's offset and entry count, checked to lie in
/// `image`.
fn program_header_table(image: &[u8]) -> Result<(u64, u64), Trap> {
    let phoff = u64_at(image, 0x20).unwrap_or(u64::MAX);
    let phentsize = u64::from(u16_at(image, 0x36).unwrap_or(0));
    let phnum = u64::from(u16_at(image, 0x38).unwrap_or(0));
    if phentsize != PHDR || phnum == 0 {
        return Err(malformed("no usable program headers".into()));
    }
    let end = phnum
        .checked_mul(phentsize)
        .and_then(|n| n.checked_add(phoff))
        .unwrap_or(u64::MAX);
    if end > image.len() as u64 {
        return Err(malformed(format!(
            "program headers end at byte {end}, past the {} bytes of the file",
            image.len()
        )));
    }
    Ok((phoff, phnum))
}

/// Reads the `phnum` program headers at `phoff`, checking each loadable
/// segment against the ones before it and refusing thread-local storage
/// and a second dynamic segment.
fn read_program_headers(image: &[u8], phoff: u64, phnum: u64) -> Result<ProgramHeaders, Trap> {
    let mut headers = ProgramHeaders {
        loads: Vec::new(),
        others: Vec::new(),
        dynamic: None,
        relro: None,
    };
    for k in 0..phnum {
        let at = (phoff + k * PHDR) as usize;
        let p_type = u32_at(image, at).unwrap_or(0);
        let flags = u32_at(image, at + 4).unwrap_or(0);
        let field = |o: usize| u64_at(image, at + o).unwrap_or(u64::MAX);
        let (offset, vaddr, filesz, memsz) = (field(8), field(16), field(32), field(40));
        match p_type {
            // PT_NULL, PT_GNU_STACK: nothing is read.
            0 | 0x6474_e551 => {}
            // PT_GNU_RELRO: the pages the loader makes read-only after
            // relocating (checked by `check_relro`).
            0x6474_e552 => headers.relro = Some((k, vaddr, memsz)),
            // PT_LOAD
            1 => {
                let segment = Segment {
                    offset,
                    vaddr,
                    filesz,
                    memsz,
                    exec: flags & 1 != 0,
                    write: flags & 2 != 0,
                };
                check_load(image, k, flags, &segment, headers.loads.last())?;
                headers.loads.push(segment);
            }
            // PT_DYNAMIC
            2 => {
                if headers.dynamic.replace((vaddr, filesz)).is_some() {
                    return Err(malformed("two dynamic segments".into()));
                }
            }
            // PT_TLS: thread-local storage, which executable libraries
            // never have.
            7 => {
                return Err(malformed(
                    "the library has thread-local storage (PT_TLS)".into(),
                ))
            }
            // PT_INTERP, PT_NOTE, PT_PHDR, PT_GNU_EH_FRAME, PT_GNU_PROPERTY
            // and the rest: must lie in the pages the loads map.
            _ => headers.others.push((k, p_type, vaddr, memsz)),
        }
    }
    if headers.loads.is_empty() {
        return Err(malformed("no loadable segments".into()));
    }
    Ok(headers)
}

/// Checks loadable segment `k` (program header `flags`): its file bytes
/// are in `image`, it is readable, and it comes after `previous` in
/// address and file order without sharing a page with it.
fn check_load(
    image: &[u8],
    k: u64,
    flags: u32,
    s: &Segment,
    previous: Option<&Segment>,
) -> Result<(), Trap> {
    let (offset, vaddr, filesz, memsz) = (s.offset, s.vaddr, s.filesz, s.memsz);
    let file_end = offset.saturating_add(filesz);
    let mem_end = vaddr.saturating_add(memsz);
    if file_end > image.len() as u64 || filesz > memsz || mem_end > MAX_IMAGE {
        return Err(malformed(format!(
            "loadable segment {k} (file bytes {offset}..{file_end}, memory \
             {vaddr}..{mem_end}) does not fit the {} bytes of the file",
            image.len()
        )));
    }
    if flags & 4 == 0 {
        return Err(malformed(format!("loadable segment {k} is not readable")));
    }
    // The loader maps whole pages: a page shared with the segment before
    // would be mapped twice, with one protection.
    if previous.is_some_and(|p| vaddr / PAGE * PAGE < (p.vaddr + p.memsz).div_ceil(PAGE) * PAGE) {
        return Err(malformed(format!(
            "loadable segment {k} at {vaddr:#x} is out of address order or \
             shares a page with the one before"
        )));
    }
    // File bytes in the same order, each mapped once: a segment whose
    // offset points at another's bytes (code mapped from data) is damage.
    if previous.is_some_and(|p| offset < p.offset + p.filesz) {
        return Err(malformed(format!(
            "loadable segment {k}'s file bytes at {offset:#x} are out of order or \
             overlap the segment before's"
        )));
    }
    // Code past its file bytes would be zero bytes run as code.
    if s.exec && filesz != memsz {
        return Err(malformed(format!(
            "executable segment {k} has {filesz} bytes in the file but {memsz} \
             in memory"
        )));
    }
    Ok(())
}

/// Checks the segments that are not loaded (`others`, as
/// [`ProgramHeaders`] lists them) lie in the pages the loads map.
fn check_other_segments(layout: &Layout, others: &[(u64, u32, u64, u64)]) -> Result<(), Trap> {
    let in_pages = |vaddr: u64, memsz: u64| {
        layout.loads.iter().any(|s| {
            let end = (s.vaddr + s.memsz).div_ceil(4096) * 4096;
            vaddr >= s.vaddr && vaddr.checked_add(memsz).is_some_and(|e| e <= end)
        })
    };
    for &(k, p_type, vaddr, memsz) in others {
        if memsz > 0 && !in_pages(vaddr, memsz) {
            return Err(malformed(format!(
                "segment {k} (type {p_type:#x}) at {vaddr:#x} is outside the loaded segments"
            )));
        }
    }
    Ok(())
}

/// Checks `PT_GNU_RELRO` (index, address, size), when present, covers
/// only pages of one writable data segment.
fn check_relro(layout: &Layout, relro: Option<(u64, u64, u64)>) -> Result<(), Trap> {
    // The loader makes the whole pages inside PT_GNU_RELRO read-only,
    // wherever they are: they must be pages of one writable data segment
    // (never code, nor memory outside the library). Segments share no
    // pages (checked by `check_load`).
    let Some((k, vaddr, memsz)) = relro else {
        return Ok(());
    };
    let (start, end) = (
        vaddr / PAGE * PAGE,
        vaddr.saturating_add(memsz) / PAGE * PAGE,
    );
    let inside = start >= end
        || layout.loads.iter().any(|s| {
            s.write
                && !s.exec
                && start >= s.vaddr / PAGE * PAGE
                && end <= (s.vaddr + s.memsz).div_ceil(PAGE) * PAGE
        });
    if !inside {
        return Err(malformed(format!(
            "the read-only-after-relocation segment {k} (PT_GNU_RELRO, {vaddr:#x}, \
             {memsz} bytes) is not inside one writable data segment"
        )));
    }
    Ok(())
}

/// One export as the library table describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportInfo {
    /// Entry point name.
    pub name: String,
    /// Push constants it takes.
    pub constants: u8,
    /// Buffer bindings it takes.
    pub bindings: u8,
    /// Workgroup local memory, in 4 KiB pages.
    pub local_memory_pages: u16,
}

/// What the static reader found in a library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryInfo {
    /// The library's own name.
    pub name: String,
    /// Export table, in ordinal order.
    pub exports: Vec<ExportInfo>,
    /// Import symbols (a leading `?`: optional).
    pub imports: Vec<String>,
    /// Executable-level constants it requires.
    pub constants: u32,
    /// Bytes of executable (code) segments.
    pub code_bytes: u64,
}

/// Reads the library table of shared object `image` without running it.
pub fn inspect(image: &[u8]) -> Result<LibraryInfo, Trap> {
    check_header(image)?;
    let bad = |what: &str| invalid(format!("native executable: {what}"));
    let phoff = u64_at(image, 0x20).ok_or_else(|| bad("truncated header"))?;
    let phentsize = u16_at(image, 0x36).ok_or_else(|| bad("truncated header"))? as u64;
    let phnum = u16_at(image, 0x38).ok_or_else(|| bad("truncated header"))? as u64;
    if phentsize < 56 {
        return Err(bad("program header entries too small"));
    }
    let mut loads = Vec::new();
    let mut dynamic = None;
    let mut code_bytes = 0u64;
    for k in 0..phnum {
        let at = phoff
            .checked_add(k * phentsize)
            .and_then(|a| usize::try_from(a).ok())
            .ok_or_else(|| bad("program header out of range"))?;
        let field =
            |o: usize| u64_at(image, at + o).ok_or_else(|| bad("program header out of range"));
        let p_type = u32_at(image, at).ok_or_else(|| bad("program header out of range"))?;
        let flags = u32_at(image, at + 4).ok_or_else(|| bad("program header out of range"))?;
        let (offset, vaddr, filesz, memsz) = (field(8)?, field(16)?, field(32)?, field(40)?);
        match p_type {
            1 => {
                if filesz > memsz
                    || offset
                        .checked_add(filesz)
                        .is_none_or(|e| e > image.len() as u64)
                    || vaddr.checked_add(memsz).is_none_or(|e| e > MAX_IMAGE)
                {
                    return Err(bad("loadable segment out of range"));
                }
                if flags & 1 != 0 {
                    code_bytes += filesz;
                }
                loads.push((offset, vaddr, filesz, memsz));
            }
            2 => dynamic = Some((vaddr, memsz)),
            _ => {}
        }
    }
    let size = loads.iter().map(|l| l.1 + l.3).max().unwrap_or(0) as usize;
    let mut mem = vec![0u8; size];
    for &(offset, vaddr, filesz, _) in &loads {
        let (o, v, n) = (offset as usize, vaddr as usize, filesz as usize);
        mem[v..v + n].copy_from_slice(&image[o..o + n]);
    }
    // Relative relocations make the tables' pointers image offsets.
    if let Some((dyn_at, dyn_len)) = dynamic {
        let (mut rela, mut relasz, mut relaent) = (0u64, 0u64, 24u64);
        let mut at = dyn_at as usize;
        let end = (dyn_at + dyn_len).min(size as u64) as usize;
        while at + 16 <= end {
            let (tag, val) = (
                u64_at(&mem, at).unwrap_or(0),
                u64_at(&mem, at + 8).unwrap_or(0),
            );
            match tag {
                0 => break,
                7 => rela = val,
                8 => relasz = val,
                9 => relaent = val.max(24),
                _ => {}
            }
            at += 16;
        }
        let mut r = rela;
        while relasz > 0
            && r.checked_add(24)
                .is_some_and(|e| e <= rela.saturating_add(relasz))
        {
            let at = r as usize;
            let (off, info, addend) = match (
                u64_at(&mem, at),
                u64_at(&mem, at + 8),
                u64_at(&mem, at + 16),
            ) {
                (Some(a), Some(b), Some(c)) => (a, b, c),
                _ => break,
            };
            // R_X86_64_RELATIVE: base (0 here) + addend.
            if info & 0xffff_ffff == 8 && off.checked_add(8).is_some_and(|e| e <= size as u64) {
                mem[off as usize..off as usize + 8].copy_from_slice(&addend.to_le_bytes());
            }
            r += relaent;
        }
    }
    find_table(&mem, code_bytes).ok_or_else(|| bad("no executable library table found"))
}

/// A NUL-terminated string at image offset `at` (at most 4 KiB).
fn string_at(mem: &[u8], at: u64) -> Option<String> {
    let start = usize::try_from(at).ok()?;
    let tail = mem.get(start..)?;
    let len = tail.iter().take(4096).position(|&b| b == 0)?;
    std::str::from_utf8(&tail[..len]).ok().map(str::to_string)
}

/// Finds the v0 library table by its shape: a header pointer to a header
/// of this version with a name, and export tables whose entries are in
/// the image with named exports.
fn find_table(mem: &[u8], code_bytes: u64) -> Option<LibraryInfo> {
    let ptr = |at: u64| u64_at(mem, usize::try_from(at).ok()?);
    let word = |at: u64| u32_at(mem, usize::try_from(at).ok()?);
    let inside =
        |p: u64, len: u64| p != 0 && p.checked_add(len).is_some_and(|e| e <= mem.len() as u64);
    (0..mem.len().saturating_sub(128) as u64)
        .step_by(8)
        .find_map(|t| {
            let header = ptr(t)?;
            if !inside(header, 24) || header % 8 != 0 {
                return None;
            }
            let version = word(header)?;
            if version == 0 || version > LIBRARY_VERSION {
                return None;
            }
            let name = string_at(mem, ptr(header + 8)?)?;
            let count = u64::from(word(t + 24)?);
            if count > 1 << 16 {
                return None;
            }
            let (ptrs, attrs, names) = (ptr(t + 32)?, ptr(t + 40)?, ptr(t + 64)?);
            if count > 0
                && !(inside(ptrs, 8 * count)
                    && inside(attrs, 64 * count)
                    && inside(names, 8 * count))
            {
                return None;
            }
            let mut exports = Vec::new();
            for i in 0..count {
                let a = attrs + 64 * i;
                exports.push(ExportInfo {
                    name: string_at(mem, ptr(names + 8 * i)?).filter(|n| !n.is_empty())?,
                    local_memory_pages: u16_at(mem, (a + 8) as usize)?,
                    constants: *mem.get((a + 10) as usize)?,
                    bindings: *mem.get((a + 11) as usize)?,
                });
            }
            let import_count = u64::from(word(t + 8)?);
            let mut imports = Vec::new();
            if import_count > 0 {
                let symbols = ptr(t + 16)?;
                if import_count > 1 << 16 || !inside(symbols, 8 * import_count) {
                    return None;
                }
                for i in 0..import_count {
                    imports.push(string_at(mem, ptr(symbols + 8 * i)?)?);
                }
            }
            Some(LibraryInfo {
                name,
                exports,
                imports,
                constants: word(t + 104)?,
                code_bytes,
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footers_delimit_system_libraries() {
        let mut data = b"\x7fELF-library-bytes".to_vec();
        let lib_len = data.len() as u64;
        data.extend_from_slice(b"debug");
        data.extend_from_slice(FOOTER_MAGIC);
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&0u32.to_le_bytes());
        for v in [0, lib_len, lib_len, 5] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let lib = library_bytes("system-elf-x86_64", &data).unwrap();
        assert_eq!(lib, b"\x7fELF-library-bytes");
        // Embedded libraries are taken whole.
        assert_eq!(
            library_bytes("embedded-elf-x86_64", &data).unwrap().len(),
            data.len()
        );
        // A footer pointing past the data is refused.
        let n = data.len();
        data[n - 24..n - 16].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = library_bytes("system-elf-x86_64", &data).unwrap_err();
        assert_eq!(e.code, StatusCode::OutOfRange);
    }

    #[test]
    fn headers_are_checked_before_loading() {
        assert!(check_header(b"not an elf").is_err());
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 1;
        assert!(check_header(&h).unwrap_err().message.contains("64-bit"));
        h[4] = 2;
        h[5] = 1;
        h[0x10] = 2;
        assert!(check_header(&h).unwrap_err().message.contains("type 2"));
        h[0x10] = 3;
        h[0x12] = 183;
        assert!(check_header(&h)
            .unwrap_err()
            .message
            .contains("machine 183"));
        // Truncated or absurd program headers are errors, not panics.
        h[0x12] = MACHINE_X86_64 as u8;
        h[0x20] = 0xff;
        h[0x36] = 56;
        h[0x38] = 3;
        assert!(inspect(&h).is_err());
    }
}
