//! Mutation test of the native (llvm-cpu) executable loader: the ELF
//! shared objects embedded in the committed model corpus
//! (`tests/models/embedded`, `tests/models/system`) are damaged outside
//! their machine code, and `irvm run` on each damaged module must refuse
//! it with an error or run it: never die of a signal, panic or hang.
//!
//! Only bytes outside the executable (`PF_X`) loadable segments are
//! damaged: the ELF and program headers, the dynamic section, the hash,
//! symbol and string tables, the relocations, the library table and its
//! strings and arrays, section headers and padding. Machine code is
//! trusted (damaging it may crash, as with any native code), and so are
//! the addresses of code the library holds (symbol values and relocation
//! addends pointing into code: see `locate`). The patch
//! keeps the module's length, so its flatbuffer stays valid and the
//! damage reaches the loader.
//!
//! The mutants are deterministic (fixed seed). `IRVM_ELF_MUTANTS=N` runs
//! N of them (default 300), `IRVM_ELF_SEED=S` picks another seed, and
//! `IRVM_ELF_KEEP=DIR` keeps each module that failed in DIR.

#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::common::bounded::{bounded, Outcome};

const MIB: u64 = 1 << 20;
const DEFAULT_MUTANTS: usize = 300;
const DEFAULT_SEED: u64 = 0x1ee7_e1f0_5eed_0001;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PF_X: u32 = 1;

fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models")
}

fn u16_at(b: &[u8], at: usize) -> u64 {
    u64::from(u16::from_le_bytes(b[at..at + 2].try_into().unwrap()))
}
fn u32_at(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(b[at..at + 4].try_into().unwrap()))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// splitmix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// A named field of the library, at an offset of the module file.
#[derive(Clone, Debug)]
struct Field {
    at: usize,
    width: usize,
    what: String,
}

/// One corpus module with its embedded library located.
struct Subject {
    name: String,
    module: Vec<u8>,
    args: Vec<String>,
    /// The library's bytes in `module`.
    elf: std::ops::Range<usize>,
    /// Module bytes of executable segments (never damaged).
    code: Vec<std::ops::Range<usize>>,
    /// Module bytes holding addresses of code: relocation addends and
    /// symbol values that point into an executable segment (never
    /// damaged, see `locate`).
    code_addresses: Vec<std::ops::Range<usize>>,
    /// Fields the loader reads, for targeted damage.
    fields: Vec<Field>,
    /// What the intact module prints.
    expected: String,
}

impl Subject {
    fn is_code(&self, at: usize, len: usize) -> bool {
        (self.code.iter())
            .chain(&self.code_addresses)
            .any(|c| at < c.end && at + len > c.start)
    }
}

/// Reads the program headers and dynamic tables of the library in
/// `module` (at the `\x7fELF` magic) to list its code ranges and fields.
fn locate(name: &str, module: Vec<u8>, args: Vec<String>) -> Subject {
    let start = module
        .windows(4)
        .position(|w| w == b"\x7fELF")
        .unwrap_or_else(|| panic!("{name}: no embedded ELF"));
    // An IREE debug footer after a system library bounds it.
    let limit = match module.windows(8).rposition(|w| w == b"IREEDBG\0") {
        Some(f) if f > start => f,
        _ => module.len(),
    };
    let b = &module[start..limit];
    let phoff = u64_at(b, 0x20) as usize;
    let shoff = u64_at(b, 0x28) as usize;
    let phnum = u16_at(b, 0x38) as usize;
    let shnum = u16_at(b, 0x3c) as usize;
    let mut end = (shoff + 64 * shnum).max(phoff + 56 * phnum);
    let abs = |off: usize| start + off;
    let mut fields = Vec::new();
    let mut field = |at: usize, width: usize, what: String| {
        fields.push(Field {
            at: abs(at),
            width,
            what,
        })
    };
    for (at, width, what) in [
        (0x10, 2, "e_type"),
        (0x12, 2, "e_machine"),
        (0x20, 8, "e_phoff"),
        (0x28, 8, "e_shoff"),
        (0x34, 2, "e_ehsize"),
        (0x36, 2, "e_phentsize"),
        (0x38, 2, "e_phnum"),
        (0x3a, 2, "e_shentsize"),
        (0x3c, 2, "e_shnum"),
        (0x3e, 2, "e_shstrndx"),
    ] {
        field(at, width, what.into());
    }
    let mut loads = Vec::new();
    let mut code = Vec::new();
    let mut code_vaddrs = Vec::new();
    let mut dynamic = None;
    for k in 0..phnum {
        let p = phoff + 56 * k;
        let (kind, flags) = (u32_at(b, p) as u32, u32_at(b, p + 4) as u32);
        let (offset, vaddr, filesz) = (u64_at(b, p + 8), u64_at(b, p + 16), u64_at(b, p + 32));
        for (o, w, f) in [
            (0, 4, "p_type"),
            (4, 4, "p_flags"),
            (8, 8, "p_offset"),
            (16, 8, "p_vaddr"),
            (24, 8, "p_paddr"),
            (32, 8, "p_filesz"),
            (40, 8, "p_memsz"),
            (48, 8, "p_align"),
        ] {
            field(p + o, w, format!("phdr[{k}].{f}"));
        }
        end = end.max((offset + filesz) as usize);
        if kind == PT_LOAD {
            loads.push((offset, vaddr, filesz));
            if flags & PF_X != 0 {
                code.push(abs(offset as usize)..abs((offset + filesz) as usize));
                code_vaddrs.push(vaddr..vaddr + filesz);
            }
        }
        if kind == PT_DYNAMIC {
            dynamic = Some((offset as usize, filesz as usize));
        }
    }
    let file_of = |vaddr: u64| -> Option<usize> {
        loads
            .iter()
            .find(|&&(_, v, n)| vaddr >= v && vaddr < v + n)
            .map(|&(o, v, _)| (o + vaddr - v) as usize)
    };
    let (dyn_off, dyn_len) = dynamic.unwrap_or_else(|| panic!("{name}: no PT_DYNAMIC"));
    let mut tags = std::collections::HashMap::new();
    for i in 0..dyn_len / 16 {
        let at = dyn_off + 16 * i;
        let tag = u64_at(b, at);
        field(at, 8, format!("dynamic[{i}].tag {tag:#x}"));
        field(at + 8, 8, format!("dynamic[{i}].value (tag {tag:#x})"));
        if tag == 0 {
            break;
        }
        tags.insert(tag, u64_at(b, at + 8));
    }
    // Where the library keeps addresses of its code: the value of a
    // symbol and the addend of a relocation that point into code. The
    // loader and irvm can check such an address is in the code, not that
    // it is where a function starts (machine code has no marks for
    // that), so a damaged one runs code from the wrong place. They are
    // as trusted as the code itself and not damaged here.
    let in_code = |v: u64| code_vaddrs.iter().any(|c| c.contains(&v));
    let mut code_addresses = Vec::new();
    // DT_HASH: nbucket, nchain, buckets, chains.
    if let Some(at) = tags.get(&4).and_then(|&v| file_of(v)) {
        let (nbucket, nchain) = (u32_at(b, at) as usize, u32_at(b, at + 4) as usize);
        field(at, 4, "DT_HASH nbucket".into());
        field(at + 4, 4, "DT_HASH nchain".into());
        for i in 0..nbucket + nchain {
            field(at + 8 + 4 * i, 4, format!("DT_HASH word {i}"));
        }
    }
    // DT_GNU_HASH: nbuckets, symoffset, bloom size and shift, bloom words,
    // buckets, chains (one per hashed symbol).
    if let Some(at) = tags.get(&0x6fff_fef5).and_then(|&v| file_of(v)) {
        let nbuckets = u32_at(b, at) as usize;
        let bloom = u32_at(b, at + 8) as usize;
        for (o, f) in [
            (0, "nbuckets"),
            (4, "symoffset"),
            (8, "bloom_size"),
            (12, "bloom_shift"),
        ] {
            field(at + o, 4, format!("DT_GNU_HASH {f}"));
        }
        for i in 0..bloom {
            field(at + 16 + 8 * i, 8, format!("DT_GNU_HASH bloom {i}"));
        }
        let buckets = at + 16 + 8 * bloom;
        for i in 0..nbuckets + 2 {
            field(buckets + 4 * i, 4, format!("DT_GNU_HASH bucket/chain {i}"));
        }
    }
    // Symbols: as many as DT_HASH says, else up to the string table.
    if let (Some(sym), Some(&strtab)) = (tags.get(&6).and_then(|&v| file_of(v)), tags.get(&5)) {
        let count = tags
            .get(&4)
            .and_then(|&v| file_of(v))
            .map(|h| u32_at(b, h + 4))
            .unwrap_or((strtab.saturating_sub(tags[&6]) / 24).min(64)) as usize;
        for i in 0..count {
            let s = sym + 24 * i;
            if in_code(u64_at(b, s + 8)) {
                code_addresses.push(abs(s + 8)..abs(s + 16));
            }
            for (o, w, f) in [
                (0, 4, "st_name"),
                (4, 1, "st_info"),
                (5, 1, "st_other"),
                (6, 2, "st_shndx"),
                (8, 8, "st_value"),
                (16, 8, "st_size"),
            ] {
                field(s + o, w, format!("symbol[{i}].{f}"));
            }
        }
    }
    // Relocations: offset, info (type, symbol), addend.
    for (table, size, what) in [(7u64, 8u64, "RELA"), (23, 2, "JMPREL")] {
        let (Some(at), Some(&n)) = (tags.get(&table).and_then(|&v| file_of(v)), tags.get(&size))
        else {
            continue;
        };
        for i in 0..n as usize / 24 {
            let r = at + 24 * i;
            if in_code(u64_at(b, r + 16)) {
                code_addresses.push(abs(r + 16)..abs(r + 24));
            }
            field(r, 8, format!("{what}[{i}].r_offset"));
            field(r + 8, 4, format!("{what}[{i}].r_info type"));
            field(r + 12, 4, format!("{what}[{i}].r_info symbol"));
            field(r + 16, 8, format!("{what}[{i}].r_addend"));
        }
    }
    let elf = start..(start + end).min(limit);
    let trusted: Vec<_> = code.iter().chain(&code_addresses).cloned().collect();
    fields.retain(|f| {
        f.at + f.width <= elf.end
            && !trusted
                .iter()
                .any(|c| f.at < c.end && f.at + f.width > c.start)
    });
    Subject {
        name: name.into(),
        module,
        args,
        elf,
        code,
        code_addresses,
        fields,
        expected: String::new(),
    }
}

/// The corpus: every native module with its model's base `.args`.
fn subjects() -> Vec<Subject> {
    let dir = models_dir();
    let mut out = Vec::new();
    for variant in ["embedded", "system"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join(variant))
            .expect("corpus directory")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "vmfb"))
            .collect();
        paths.sort();
        for p in paths {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let Ok(args) = std::fs::read_to_string(dir.join(format!("{stem}.args"))) else {
                continue;
            };
            // Archives are the corpus's input files (`in--FILE`).
            let archive = |file: &str| dir.join(format!("in--{file}")).display().to_string();
            let args = args
                .lines()
                .filter(|l| !l.is_empty())
                .map(|l| match l.strip_prefix("--parameters=") {
                    Some(v) => match v.split_once('=') {
                        Some((scope, file)) => format!("--parameters={scope}={}", archive(file)),
                        None => format!("--parameters={}", archive(v)),
                    },
                    None => l.to_string(),
                })
                .collect();
            let name = format!("{variant}/{stem}");
            out.push(locate(&name, std::fs::read(&p).unwrap(), args));
        }
    }
    out
}

/// A new value for a `width`-byte field holding `v`.
fn damage(rng: &mut Rng, width: usize, v: u64) -> u64 {
    let max = if width == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    };
    let large = [1 << 31, 1 << 32, 1 << 40, 1 << 63, max >> 1];
    let small = 2 + rng.next() % 63;
    let bit = rng.next() % (8 * width as u64);
    let value = match rng.below(12) {
        0 => 0,
        1 => 1,
        2 => small,
        3 => *rng.pick(&large),
        4 => max,
        5 => v.wrapping_add(1),
        6 => v.wrapping_sub(1),
        7 => v ^ (1 << bit),
        8 => v.wrapping_add(0x1000),
        9 => v.wrapping_sub(8),
        10 => v.wrapping_add(8 * small),
        _ => rng.next(),
    };
    value & max
}

/// One mutant: the damaged module bytes and what was damaged.
struct Mutant {
    subject: usize,
    at: usize,
    bytes: Vec<u8>,
    what: String,
}

fn make_mutant(subjects: &[Subject], rng: &mut Rng) -> Mutant {
    loop {
        let si = rng.below(subjects.len());
        let s = &subjects[si];
        let (at, width, what) = match rng.below(10) {
            // A byte anywhere outside code.
            0..=2 => (s.elf.start + rng.below(s.elf.len()), 1, "byte".to_string()),
            // An aligned 32- or 64-bit word.
            3 => {
                let at = s.elf.start + (rng.below(s.elf.len()) & !3);
                (at, 4, "u32".to_string())
            }
            4 => {
                let at = s.elf.start + (rng.below(s.elf.len()) & !7);
                (at, 8, "u64".to_string())
            }
            // A field the loader reads.
            _ => {
                let f = rng.pick(&s.fields);
                (f.at, f.width, f.what.clone())
            }
        };
        if at + width > s.elf.end || s.is_code(at, width) {
            continue;
        }
        let old = s.module[at..at + width]
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let new = if width == 1 && rng.below(2) == 0 {
            let random = rng.next() & 0xff;
            *rng.pick(&[0x00, 0xff, random])
        } else {
            damage(rng, width, old)
        };
        if new == old {
            continue;
        }
        let bytes = new.to_le_bytes()[..width].to_vec();
        let what = format!(
            "{}: {what} at library byte {:#x} {old:#x} -> {new:#x}",
            s.name,
            at - s.elf.start
        );
        return Mutant {
            subject: si,
            at,
            bytes,
            what,
        };
    }
}

fn run(module: &Path, args: &[String]) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_irvm"));
    cmd.arg("run")
        .arg("--device=local-sync")
        .arg(format!("--module={}", module.display()))
        .args(args)
        .stdin(Stdio::null());
    bounded(cmd, 1024 * MIB, Duration::from_secs(30))
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

#[test]
fn damaged_libraries_are_refused_or_run_never_crash() {
    let mut subjects = subjects();
    assert!(subjects.len() >= 20, "{} corpus modules", subjects.len());
    let work = tempfile::tempdir().unwrap();
    // The intact modules run (else the harness tests nothing).
    for (i, s) in subjects.iter_mut().enumerate() {
        assert!(!s.code.is_empty() && s.fields.len() > 50, "{}", s.name);
        let p = work.path().join(format!("intact{i}.vmfb"));
        std::fs::write(&p, &s.module).unwrap();
        let o = run(&p, &s.args);
        assert_eq!(o.code, Some(0), "{}: intact module fails: {o:#?}", s.name);
        s.expected = o.stdout;
    }
    let count = env_number("IRVM_ELF_MUTANTS").map_or(DEFAULT_MUTANTS, |n| n as usize);
    let seed = env_number("IRVM_ELF_SEED").unwrap_or(DEFAULT_SEED);
    let keep = std::env::var_os("IRVM_ELF_KEEP").map(PathBuf::from);
    let mut rng = Rng(seed);
    let mutants: Vec<Mutant> = (0..count)
        .map(|_| make_mutant(&subjects, &mut rng))
        .collect();
    let (refused, same, different) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let failures = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for worker in 0..2 {
            let (subjects, mutants, work, keep) = (&subjects, &mutants, work.path(), &keep);
            let (next, failures) = (&next, &failures);
            let (refused, same, different) = (&refused, &same, &different);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(m) = mutants.get(k) else { break };
                let s = &subjects[m.subject];
                let mut bytes = s.module.clone();
                bytes[m.at..m.at + m.bytes.len()].copy_from_slice(&m.bytes);
                let p = work.join(format!("mutant{worker}.vmfb"));
                std::fs::write(&p, &bytes).unwrap();
                let o = run(&p, &s.args);
                let clean = !o.timed_out && o.signal.is_none() && matches!(o.code, Some(0 | 1));
                if !clean {
                    if let Some(dir) = keep {
                        std::fs::create_dir_all(dir).unwrap();
                        std::fs::write(dir.join(format!("mutant{k}.vmfb")), &bytes).unwrap();
                    }
                    let tail: String = o
                        .stderr
                        .lines()
                        .rev()
                        .take(3)
                        .collect::<Vec<_>>()
                        .join(" | ");
                    failures.lock().unwrap().push(format!(
                        "mutant {k}: {}: exit {:?} signal {:?} timed out {}: {tail}\n  \
                         irvm run --module=mutant.vmfb {}",
                        m.what,
                        o.code,
                        o.signal,
                        o.timed_out,
                        s.args.join(" ")
                    ));
                } else if o.code == Some(1) {
                    refused.fetch_add(1, Ordering::Relaxed);
                } else if o.stdout == s.expected {
                    same.fetch_add(1, Ordering::Relaxed);
                } else {
                    different.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "{count} mutants (seed {seed:#x}): {} refused, {} ran with the intact output, {} ran \
         with another output, {} crashed or hung",
        refused.into_inner(),
        same.into_inner(),
        different.into_inner(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
