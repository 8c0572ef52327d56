//! The dynamic section checked before the system loader reads it.
//!
//! glibc's loader trusts a library's dynamic tables: a hash table with no
//! buckets divides by zero, a chain or symbol index past its table reads
//! unmapped memory, a relocation writes wherever its offset says. Every
//! table the loader walks for an executable library is checked here
//! against the segments it will map, so a corrupted or hostile library is
//! refused with a message instead of killing the process inside `dlopen`.
//! (The library's machine code is another matter: see
//! docs/HOSTILE_INPUT.md.)

use irvm::Trap;

use super::elf::{malformed, u32_at, u64_at, Segment};

const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_PLTRELSZ: u64 = 2;
const DT_PLTGOT: u64 = 3;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_RELA: u64 = 7;
const DT_RELASZ: u64 = 8;
const DT_RELAENT: u64 = 9;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;
const DT_INIT: u64 = 12;
const DT_FINI: u64 = 13;
const DT_SONAME: u64 = 14;
const DT_RPATH: u64 = 15;
const DT_REL: u64 = 17;
const DT_PLTREL: u64 = 20;
const DT_TEXTREL: u64 = 22;
const DT_JMPREL: u64 = 23;
const DT_INIT_ARRAY: u64 = 25;
const DT_FINI_ARRAY: u64 = 26;
const DT_RUNPATH: u64 = 29;
const DT_PREINIT_ARRAY: u64 = 32;
const DT_RELRSZ: u64 = 35;
const DT_RELR: u64 = 36;
const DT_RELRENT: u64 = 37;
const DT_RELACOUNT: u64 = 0x6fff_fff9;
const DT_GNU_HASH: u64 = 0x6fff_fef5;
const DT_VERSYM: u64 = 0x6fff_fff0;
const DT_FLAGS_1: u64 = 0x6fff_fffb;
const DT_VERDEF: u64 = 0x6fff_fffc;
const DT_VERNEED: u64 = 0x6fff_fffe;
/// `DF_1_NODELETE`.
const NODELETE: u64 = 0x8;

/// Relocation types the loader may apply: `R_X86_64_NONE`, `_64`,
/// `_GLOB_DAT`, `_JUMP_SLOT`, `_RELATIVE`.
const RELOCATIONS: [u32; 5] = [0, 1, 6, 7, 8];
/// Which of those name a symbol.
const SYMBOL_RELOCATIONS: [u32; 3] = [1, 6, 7];

/// Bytes of one `Elf64_Sym` and one `Elf64_Rela`.
const SYM: u64 = 24;
const RELA: u64 = 24;
/// The most symbols or relocations walked.
const MAX_ENTRIES: u64 = 1 << 22;

/// The segments as the loader maps them, for address checks.
struct Memory<'a> {
    image: &'a [u8],
    loads: &'a [Segment],
}

impl Memory<'_> {
    /// The file bytes at `addr..addr + len`, all inside one segment's file
    /// part (what the loader maps from the file).
    fn file(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let s = self.loads.iter().find(|s| {
            addr >= s.vaddr
                && addr
                    .checked_add(len)
                    .is_some_and(|e| e <= s.vaddr + s.filesz)
        })?;
        let start = usize::try_from(s.offset + (addr - s.vaddr)).ok()?;
        self.image
            .get(start..start.checked_add(usize::try_from(len).ok()?)?)
    }

    /// The segment holding all of `addr..addr + len` in memory.
    fn segment(&self, addr: u64, len: u64) -> Option<&Segment> {
        self.loads.iter().find(|s| {
            addr >= s.vaddr
                && addr
                    .checked_add(len)
                    .is_some_and(|e| e <= s.vaddr + s.memsz)
        })
    }
}

/// What the dynamic section says, tag by tag (the last of each wins, as
/// the loader takes them).
#[derive(Default)]
struct Tags {
    strtab: Option<u64>,
    strsz: Option<u64>,
    symtab: Option<u64>,
    syment: Option<u64>,
    hash: Option<u64>,
    gnu_hash: Option<u64>,
    rela: Option<u64>,
    relasz: Option<u64>,
    relaent: Option<u64>,
    relacount: Option<u64>,
    jmprel: Option<u64>,
    pltrelsz: Option<u64>,
    pltrel: Option<u64>,
    pltgot: Option<u64>,
    versym: Option<u64>,
    init: Option<u64>,
    fini: Option<u64>,
    strings: Vec<(u64, u64)>,
}

/// Checks the dynamic section at `dyn_addr` (`len` bytes) of `image`,
/// whose loadable segments are `loads`.
pub(super) fn check(image: &[u8], loads: &[Segment], dyn_addr: u64, len: u64) -> Result<(), Trap> {
    let mem = Memory { image, loads };
    let section = mem
        .file(dyn_addr, len)
        .ok_or_else(|| malformed("the dynamic section is outside the loaded file bytes".into()))?;
    let tags = read_tags(section)?;
    let (strtab, strsz, symtab) = required_tags(&tags)?;
    check_string_table(&mem, strtab, strsz)?;
    check_entry_sizes(&tags)?;
    check_string_tags(&tags, strsz)?;
    check_init_fini(&mem, &tags)?;
    let symbols = symbol_count(&mem, &tags)?;
    let table = check_symbols(&mem, symtab, symbols, strsz)?;
    check_symbol_versions(&mem, &tags, symbols)?;
    let tables = relocation_tables(&tags)?;
    check_relative_relocations(&mem, &tags, &tables)?;
    check_plt_slots(&mem, &tags, &tables)?;
    for (what, at, size) in tables {
        check_relocations(&mem, at, size, table)
            .map_err(|why| malformed(format!("{what} relocations at {at:#x}: {why}")))?;
    }
    Ok(())
}

/// Reads the dynamic section's tags up to its `DT_NULL`, refusing those
/// IREE's executable libraries never have.
fn read_tags(section: &[u8]) -> Result<Tags, Trap> {
    let mut tags = Tags::default();
    for entry in section.chunks_exact(16) {
        let (tag, val) = (u64_at(entry, 0).unwrap_or(0), u64_at(entry, 8).unwrap_or(0));
        match tag {
            DT_NULL => return Ok(tags),
            DT_STRTAB => tags.strtab = Some(val),
            DT_STRSZ => tags.strsz = Some(val),
            DT_SYMTAB => tags.symtab = Some(val),
            DT_SYMENT => tags.syment = Some(val),
            DT_HASH => tags.hash = Some(val),
            DT_GNU_HASH => tags.gnu_hash = Some(val),
            DT_RELA => tags.rela = Some(val),
            DT_RELASZ => tags.relasz = Some(val),
            DT_RELAENT => tags.relaent = Some(val),
            DT_RELACOUNT => tags.relacount = Some(val),
            DT_JMPREL => tags.jmprel = Some(val),
            DT_PLTRELSZ => tags.pltrelsz = Some(val),
            DT_PLTREL => tags.pltrel = Some(val),
            DT_PLTGOT => tags.pltgot = Some(val),
            DT_VERSYM => tags.versym = Some(val),
            DT_INIT => tags.init = Some(val),
            DT_FINI => tags.fini = Some(val),
            DT_NEEDED | DT_SONAME | DT_RPATH | DT_RUNPATH => tags.strings.push((tag, val)),
            DT_REL | DT_TEXTREL => {
                return Err(malformed(format!(
                    "dynamic tag {tag:#x} (REL relocations or text relocations), which x86-64 \
                     executable libraries never have"
                )))
            }
            // glibc applies RELR relocations without the checks RELA ones
            // get here.
            DT_RELRSZ | DT_RELR | DT_RELRENT => {
                return Err(malformed(format!(
                    "dynamic tag {tag:#x}: the library has RELR relocations, which IREE's \
                     executable libraries never have"
                )))
            }
            DT_INIT_ARRAY | DT_FINI_ARRAY | DT_PREINIT_ARRAY => {
                return Err(malformed(format!(
                    "dynamic tag {tag:#x}: the library has initializer or finalizer arrays, \
                     which IREE's executable libraries never have"
                )))
            }
            DT_VERDEF | DT_VERNEED => {
                return Err(malformed(format!(
                    "dynamic tag {tag:#x}: the library has symbol versions, which IREE's \
                     executable libraries never have"
                )))
            }
            DT_FLAGS_1 if val & NODELETE != 0 => {
                return Err(malformed(
                    "library asks never to be unloaded (DF_1_NODELETE)".into(),
                ))
            }
            _ => {}
        }
    }
    Err(malformed("the dynamic section has no DT_NULL end".into()))
}

/// The string table's address and size and the symbol table's address,
/// which every library has.
fn required_tags(tags: &Tags) -> Result<(u64, u64, u64), Trap> {
    let need = |v: Option<u64>, what: &str| v.ok_or_else(|| malformed(format!("no {what} tag")));
    let strtab = need(tags.strtab, "DT_STRTAB")?;
    let strsz = need(tags.strsz, "DT_STRSZ")?;
    let symtab = need(tags.symtab, "DT_SYMTAB")?;
    Ok((strtab, strsz, symtab))
}

/// Checks the string table lies in the file and ends with a NUL.
fn check_string_table(mem: &Memory<'_>, strtab: u64, strsz: u64) -> Result<(), Trap> {
    match mem.file(strtab, strsz) {
        Some(strings) if strings.last() == Some(&0) => Ok(()),
        Some(_) => Err(malformed("the string table does not end with a NUL".into())),
        None => Err(malformed(format!(
            "string table at {strtab:#x} ({strsz} bytes) is outside the loaded file bytes"
        ))),
    }
}

/// Checks symbol and relocation entries have the x86-64 sizes.
fn check_entry_sizes(tags: &Tags) -> Result<(), Trap> {
    if tags.syment.is_some_and(|e| e != SYM) || tags.relaent.is_some_and(|e| e != RELA) {
        return Err(malformed(
            "symbol or relocation entries are not 24 bytes".into(),
        ));
    }
    Ok(())
}

/// Checks the tags that name strings (`DT_NEEDED`, `DT_SONAME`, ...)
/// name them inside the string table.
fn check_string_tags(tags: &Tags, strsz: u64) -> Result<(), Trap> {
    for &(tag, at) in &tags.strings {
        if at >= strsz {
            return Err(malformed(format!(
                "dynamic tag {tag:#x} names string {at}, past the {strsz}-byte string table"
            )));
        }
    }
    Ok(())
}

/// Checks `DT_INIT` and `DT_FINI`, when present, are in the library's code.
fn check_init_fini(mem: &Memory<'_>, tags: &Tags) -> Result<(), Trap> {
    for (what, at) in [("DT_INIT", tags.init), ("DT_FINI", tags.fini)] {
        if let Some(at) = at {
            if !mem.segment(at, 1).is_some_and(|s| s.exec) {
                return Err(malformed(format!(
                    "{what} at {at:#x} is not in the library's code"
                )));
            }
        }
    }
    Ok(())
}

/// The symbol count: the hash tables bound every lookup the loader makes.
fn symbol_count(mem: &Memory<'_>, tags: &Tags) -> Result<u64, Trap> {
    let mut symbols = None;
    if let Some(at) = tags.hash {
        symbols = Some(check_hash(mem, at).ok_or_else(|| {
            malformed(format!(
                "the DT_HASH table at {at:#x} is malformed (no buckets, an index past its \
                 chains, or a chain that loops) or outside the file"
            ))
        })?);
    }
    if let Some(at) = tags.gnu_hash {
        let n = check_gnu_hash(mem, at).ok_or_else(|| {
            malformed(format!(
                "the DT_GNU_HASH table at {at:#x} is malformed or outside the file"
            ))
        })?;
        symbols = Some(symbols.map_or(n, |m: u64| m.max(n)));
    }
    symbols.ok_or_else(|| malformed("no DT_HASH or DT_GNU_HASH symbol hash table".into()))
}

/// Checks the `symbols` symbols at `symtab`: in the file, named inside the
/// string table, of no type the loader would mishandle; returns their bytes.
fn check_symbols<'m>(
    mem: &'m Memory<'_>,
    symtab: u64,
    symbols: u64,
    strsz: u64,
) -> Result<&'m [u8], Trap> {
    let table = mem.file(symtab, symbols * SYM).ok_or_else(|| {
        malformed(format!(
            "{symbols} symbols at {symtab:#x} are outside the file"
        ))
    })?;
    for (i, sym) in table.chunks_exact(SYM as usize).enumerate() {
        if u64::from(u32_at(sym, 0).unwrap_or(u32::MAX)) >= strsz {
            return Err(malformed(format!(
                "symbol {i} has a name past the string table"
            )));
        }
        // STT_TLS needs thread-local storage the library does not have;
        // the loader calls an STT_GNU_IFUNC symbol's value as a function
        // while relocating and in dlsym.
        if matches!(sym[4] & 0xf, 6 | 10) {
            return Err(malformed(format!(
                "symbol {i} is of type {} (thread-local or indirect function), which IREE's \
                 executable libraries never have",
                sym[4] & 0xf
            )));
        }
    }
    Ok(table)
}

/// Checks the symbol version table, when present, is in the file.
fn check_symbol_versions(mem: &Memory<'_>, tags: &Tags, symbols: u64) -> Result<(), Trap> {
    if let Some(at) = tags.versym {
        if mem.file(at, symbols * 2).is_none() {
            return Err(malformed(format!(
                "symbol versions at {at:#x} are outside the file"
            )));
        }
    }
    Ok(())
}

/// The relocation tables the loader applies (name, address, size), with
/// the tags each needs present.
fn relocation_tables(tags: &Tags) -> Result<Vec<(&'static str, u64, u64)>, Trap> {
    // The loader reads a table's size and entry size without checking
    // they are there (a missing one is a null dereference inside dlopen),
    // and asserts DT_PLTREL is DT_RELA whenever it is present.
    let mut tables = Vec::new();
    if let Some(at) = tags.rela {
        let size = tags
            .relasz
            .ok_or_else(|| malformed("DT_RELA without DT_RELASZ".into()))?;
        if tags.relaent.is_none() {
            return Err(malformed("DT_RELA without DT_RELAENT".into()));
        }
        tables.push(("DT_RELA", at, size));
    }
    if tags.jmprel.is_some() || tags.pltrel.is_some() {
        if tags.pltrel != Some(DT_RELA) {
            return Err(malformed(
                "PLT relocations that are not DT_RELA (DT_PLTREL)".into(),
            ));
        }
        let at = tags
            .jmprel
            .ok_or_else(|| malformed("DT_PLTREL without DT_JMPREL".into()))?;
        let size = tags
            .pltrelsz
            .ok_or_else(|| malformed("DT_JMPREL without DT_PLTRELSZ".into()))?;
        tables.push(("DT_JMPREL", at, size));
    }
    Ok(tables)
}

/// Checks the first `DT_RELACOUNT` relocations are relative ones.
fn check_relative_relocations(
    mem: &Memory<'_>,
    tags: &Tags,
    tables: &[(&str, u64, u64)],
) -> Result<(), Trap> {
    // The loader takes DT_RELASZ to include the PLT relocations when both
    // tables end at the same address, and subtracts DT_PLTRELSZ from it.
    let mut relative_room = tags.relasz.unwrap_or(0);
    if let [(_, rela, relasz), (_, jmprel, pltrelsz)] = tables[..] {
        if rela.checked_add(relasz) == jmprel.checked_add(pltrelsz) {
            relative_room = relasz.checked_sub(pltrelsz).ok_or_else(|| {
                malformed(format!(
                    "DT_RELA ({relasz} bytes) and DT_JMPREL ({pltrelsz} bytes) end together, \
                     but the PLT relocations are the larger"
                ))
            })?;
        }
    }
    // The first DT_RELACOUNT relocations are applied as relative ones, and
    // the loader asserts (aborting the process) that they are.
    if let Some(count) = tags.relacount {
        let (Some(at), true) = (tags.rela, count <= relative_room / RELA) else {
            return Err(malformed(format!(
                "DT_RELACOUNT {count} is more than the DT_RELA relocations"
            )));
        };
        for i in 0..count {
            let info = mem
                .file(at + i * RELA + 8, 8)
                .and_then(|b| u64_at(b, 0))
                .unwrap_or(0);
            if info & 0xffff_ffff != 8 {
                return Err(malformed(format!(
                    "DT_RELACOUNT {count}, but DT_RELA relocation {i} is not R_X86_64_RELATIVE"
                )));
            }
        }
    }
    Ok(())
}

/// Checks every PLT relocation is the jump slot of its GOT slot.
fn check_plt_slots(mem: &Memory<'_>, tags: &Tags, tables: &[(&str, u64, u64)]) -> Result<(), Trap> {
    // glibc resolves the PLT's GOT slots only through DT_JMPREL (with
    // RTLD_NOW no lazy resolver is installed): every PLT relocation is a
    // jump slot, the slots in order after the three reserved words at
    // DT_PLTGOT, as linkers lay them out. (A slot without its relocation
    // would be a jump to address 0 when the code calls it.)
    if let Some(&(_, at, size)) = tables.iter().find(|t| t.0 == "DT_JMPREL") {
        let got = tags
            .pltgot
            .ok_or_else(|| malformed("DT_JMPREL without DT_PLTGOT".into()))?;
        for i in 0..size / RELA {
            let entry = mem.file(at + i * RELA, 16).unwrap_or(&[]);
            let (offset, info) = (u64_at(entry, 0), u64_at(entry, 8));
            let slot = got.checked_add(24 + 8 * i);
            if info.map(|v| v & 0xffff_ffff) != Some(7) || offset != slot {
                return Err(malformed(format!(
                    "DT_JMPREL relocation {i} is not the R_X86_64_JUMP_SLOT of GOT slot {} \
                     (DT_PLTGOT {got:#x})",
                    i + 3
                )));
            }
        }
    }
    Ok(())
}

/// Checks the relocation table at `at` (`size` bytes): every entry is of
/// a type the loader applies, writes inside a writable segment, and names
/// a symbol of `symtab` (the symbols the hash table holds) that the loader
/// can resolve.
fn check_relocations(mem: &Memory<'_>, at: u64, size: u64, symtab: &[u8]) -> Result<(), String> {
    let symbols = (symtab.len() as u64) / SYM;
    if size % RELA != 0 || size / RELA > MAX_ENTRIES {
        return Err(format!("{size} bytes is not a whole number of entries"));
    }
    let table = mem
        .file(at, size)
        .ok_or("the table is outside the loaded file bytes")?;
    for (i, entry) in table.chunks_exact(RELA as usize).enumerate() {
        let offset = u64_at(entry, 0).unwrap_or(u64::MAX);
        let info = u64_at(entry, 8).unwrap_or(u64::MAX);
        let (kind, symbol) = ((info & 0xffff_ffff) as u32, info >> 32);
        if !RELOCATIONS.contains(&kind) {
            return Err(format!(
                "entry {i} has type {kind}, which irvm does not let the loader apply"
            ));
        }
        if kind == 0 {
            continue;
        }
        if !mem.segment(offset, 8).is_some_and(|s| s.write) {
            return Err(format!(
                "entry {i} writes at {offset:#x}, outside the library's writable segments"
            ));
        }
        if SYMBOL_RELOCATIONS.contains(&kind) && (symbol == 0 || symbol >= symbols) {
            return Err(format!(
                "entry {i} names symbol {symbol}, not one of the {symbols} the hash table holds"
            ));
        }
        // A symbol bound locally (STB_LOCAL, or a visibility other than
        // the default) is not looked up elsewhere: for an undefined one
        // the loader takes the load base as its address.
        if SYMBOL_RELOCATIONS.contains(&kind) {
            let sym = &symtab[(symbol * SYM) as usize..][..SYM as usize];
            let local = sym[4] >> 4 == 0 || sym[5] & 3 != 0;
            if local && u16::from_le_bytes([sym[6], sym[7]]) == 0 {
                return Err(format!(
                    "entry {i} names symbol {symbol}, undefined but bound locally or with \
                     non-default visibility"
                ));
            }
        }
    }
    Ok(())
}

/// Checks a SysV hash table; returns its symbol count (`nchain`). The
/// loader follows a chain until symbol 0 without counting steps, so the
/// chains must not loop: no symbol is reached twice.
fn check_hash(mem: &Memory<'_>, at: u64) -> Option<u64> {
    let head = mem.file(at, 8)?;
    let (nbucket, nchain) = (u64::from(u32_at(head, 0)?), u64::from(u32_at(head, 4)?));
    if nbucket == 0 || nchain > MAX_ENTRIES || nbucket > MAX_ENTRIES {
        return None;
    }
    let words = mem.file(at, 4 * (2 + nbucket + nchain))?;
    let word = |i: u64| u64::from(u32_at(words, (4 * (2 + i)) as usize).unwrap_or(u32::MAX));
    if (0..nbucket + nchain).any(|i| word(i) >= nchain) {
        return None;
    }
    let mut seen = vec![false; nchain as usize];
    for b in 0..nbucket {
        let mut symbol = word(b);
        while symbol != 0 {
            if std::mem::replace(&mut seen[symbol as usize], true) {
                return None;
            }
            symbol = word(nbucket + symbol);
        }
    }
    Some(nchain)
}

/// Checks a GNU hash table; returns one more than the highest symbol its
/// chains reach (at least its first hashed symbol).
fn check_gnu_hash(mem: &Memory<'_>, at: u64) -> Option<u64> {
    let head = mem.file(at, 16)?;
    let nbuckets = u64::from(u32_at(head, 0)?);
    let symoffset = u64::from(u32_at(head, 4)?);
    let bloom = u64::from(u32_at(head, 8)?);
    if nbuckets == 0 || nbuckets > MAX_ENTRIES || !bloom.is_power_of_two() || bloom > MAX_ENTRIES {
        return None;
    }
    let buckets_at = at + 16 + 8 * bloom;
    let buckets = mem.file(buckets_at, 4 * nbuckets)?;
    let chains_at = buckets_at + 4 * nbuckets;
    let mut count = symoffset;
    // Buckets may share a chain; the walk is bounded all the same.
    let mut steps = 0u64;
    for b in buckets.chunks_exact(4) {
        let mut symbol = u64::from(u32_at(b, 0)?);
        if symbol == 0 {
            continue;
        }
        if symbol < symoffset {
            return None;
        }
        // Walk the chain to its end bit; each step must stay in the file.
        loop {
            steps += 1;
            if symbol - symoffset > MAX_ENTRIES || steps > 4 * MAX_ENTRIES {
                return None;
            }
            let word = u32_at(mem.file(chains_at + 4 * (symbol - symoffset), 4)?, 0)?;
            count = count.max(symbol + 1);
            if word & 1 == 1 {
                break;
            }
            symbol += 1;
        }
    }
    Some(count)
}
