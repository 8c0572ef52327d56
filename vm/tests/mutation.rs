//! Deterministic mutation testing of the loader, verifier and interpreter:
//! every module this repository ships (and the shared modules when
//! `../shared` is present) is mutated thousands of times — bit flips, byte
//! substitutions, truncations, FlatBuffer offset tweaks, and mutations aimed
//! at the function bytecode — and every mutant must either fail to load or
//! register with an error, or run each export to completion or an error
//! under a fuel limit. A panic is a failure; a hang would stop the suite
//! (every run is bounded by fuel, depth and allocation limits).
//!
//! `IRVM_MUTANTS=N` changes the total (default 100,000).
//!
//! A test binary of its own, not a module of `vm/tests/all`: to keep the
//! expected panics quiet it replaces the process's panic hook for the whole
//! run, which would hide the panic messages of tests running beside it (and
//! race with any other test that swaps the hook).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use irvm::{Context, Limits, Module, Ref, TypeRegistry, ValType, Value};

#[expect(dead_code, reason = "this test uses part of it")]
#[path = "../../tests/common/paths.rs"]
mod paths;

/// splitmix64: small, seedable, good enough to spread mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn seed_modules() -> Vec<PathBuf> {
    let root = paths::repo();
    let mut dirs = vec![root.join("tests/data"), root.join("examples")];
    let shared = root.join("../shared");
    if shared.is_dir() {
        dirs.push(shared.join("conformance/iree-vm-tests"));
        dirs.push(shared.join("conformance"));
        dirs.push(shared.join("benchmarks"));
        dirs.push(shared.join("examples"));
    } else {
        eprintln!("../shared absent: mutating this repository's modules only");
    }
    let mut files = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "vmfb") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Where the function bytecode lies in the file, to aim some mutations.
fn bytecode_span(bytes: &[u8]) -> Option<(usize, usize)> {
    let module = Module::from_bytes(bytes.to_vec()).ok()?;
    let file = module.file_bytes().as_ptr() as usize;
    let code = module.bytecode_data();
    let start = (code.as_ptr() as usize).checked_sub(file)?;
    (!code.is_empty()).then_some((start, code.len()))
}

/// One mutant of `original`.
fn mutate(rng: &mut Rng, original: &[u8], code: Option<(usize, usize)>) -> Vec<u8> {
    let mut m = original.to_vec();
    let len = m.len();
    // Most mutations land in the bytecode, where the verifier must hold.
    let pick = |rng: &mut Rng| match code {
        Some((start, n)) if rng.below(3) != 0 => start + rng.below(n),
        _ => rng.below(len),
    };
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(3) {
                let at = pick(rng);
                m[at] ^= 1 << rng.below(8);
            }
        }
        1 => {
            const INTERESTING: [u8; 8] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0x79, 0xE0, 0xE1];
            for _ in 0..1 + rng.below(4) {
                let at = pick(rng);
                m[at] = if rng.below(2) == 0 {
                    INTERESTING[rng.below(INTERESTING.len())]
                } else {
                    rng.next() as u8
                };
            }
        }
        2 => m.truncate(rng.below(len)),
        3 => {
            // A FlatBuffer offset or length: an aligned u32 nudged or
            // replaced by an extreme.
            let at = rng.below(len / 4) * 4;
            if at + 4 <= len {
                let old = u32::from_le_bytes(m[at..at + 4].try_into().unwrap());
                let new = match rng.below(5) {
                    0 => old.wrapping_add(1 + rng.below(16) as u32),
                    1 => old.wrapping_sub(1 + rng.below(16) as u32),
                    2 => 0,
                    3 => u32::MAX,
                    _ => len as u32 + rng.below(64) as u32,
                };
                m[at..at + 4].copy_from_slice(&new.to_le_bytes());
            }
        }
        4 => {
            // A u16 register operand or count in the bytecode.
            let at = pick(rng) & !1;
            if at + 2 <= len {
                let v: u16 = match rng.below(4) {
                    0 => 0x8000 | rng.below(64) as u16,
                    1 => 0xC000 | rng.below(64) as u16,
                    2 => rng.below(0x4000) as u16,
                    _ => u16::MAX,
                };
                m[at..at + 2].copy_from_slice(&v.to_le_bytes());
            }
        }
        _ => {
            // A span copied over another place (duplicated instructions).
            let from = pick(rng);
            let to = pick(rng);
            let n = (1 + rng.below(16)).min(len - from).min(len - to);
            let chunk = m[from..from + n].to_vec();
            m[to..to + n].copy_from_slice(&chunk);
        }
    }
    m
}

#[derive(Default)]
struct Tally {
    mutants: usize,
    loaded: usize,
    registered: usize,
    calls: usize,
    completed: usize,
    panics: Vec<String>,
}

/// Loads, registers and runs one mutant; records what happened.
fn exercise(bytes: Vec<u8>, tally: &mut Tally) {
    let Ok(module) = Module::from_bytes(bytes) else {
        return;
    };
    tally.loaded += 1;
    let registry = TypeRegistry::new();
    let mut ctx = Context::new(&registry);
    ctx.set_limits(Limits {
        max_buffer_bytes: 1 << 20,
        max_list_elements: 1 << 12,
        max_global_bytes: 1 << 20,
        max_global_refs: 1 << 12,
        max_stack_depth: 64,
        ..Limits::default()
    });
    ctx.set_fuel(Some(5_000));
    let name = module.name().to_string();
    if ctx.register_module(module).is_err() {
        return;
    }
    tally.registered += 1;
    for export in ctx.exports(Some(&name)) {
        let Ok(func) = ctx.function(&format!("{name}.{export}")) else {
            continue;
        };
        let args: Vec<Value> = func
            .params()
            .iter()
            .map(|t| match t {
                ValType::I64 => Value::I64(3),
                ValType::F32 => Value::F32(1.5),
                ValType::F64 => Value::F64(2.5),
                ValType::Ref => Value::Ref(Ref::Null),
                ValType::I32 => Value::I32(3),
            })
            .collect();
        ctx.set_fuel(Some(5_000));
        tally.calls += 1;
        if ctx.invoke(&func, &args).is_ok() {
            tally.completed += 1;
        }
    }
}

#[test]
fn mutated_modules_never_panic() {
    let total: usize = std::env::var("IRVM_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let seeds: Vec<(PathBuf, Vec<u8>)> = seed_modules()
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    assert!(!seeds.is_empty());
    // Keep panics quiet: they are counted and reported below.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    let per_module = total.div_ceil(seeds.len());
    let trace = std::env::var_os("IRVM_MUTANT_TRACE").is_some();
    for (index, (path, original)) in seeds.iter().enumerate() {
        let code = bytecode_span(original);
        let mut rng = Rng(0x1234_5678 ^ (index as u64) << 32);
        for i in 0..per_module {
            let mutant = mutate(&mut rng, original, code);
            tally.mutants += 1;
            if trace {
                // A crash (not a panic) ends the process: this names the
                // mutant that did it.
                let out = std::env::temp_dir().join("irvm-mutant-last.vmfb");
                let _ = std::fs::write(&out, &mutant);
                eprintln!("{} mutant {i}", path.display());
            }
            if catch_unwind(AssertUnwindSafe(|| exercise(mutant.clone(), &mut tally))).is_err() {
                let out = std::env::temp_dir().join(format!(
                    "irvm-mutant-{}-{i}.vmfb",
                    path.file_stem().unwrap().to_string_lossy()
                ));
                let _ = std::fs::write(&out, &mutant);
                tally.panics.push(format!(
                    "{} mutant {i}: saved as {}",
                    path.display(),
                    out.display()
                ));
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!(
        "{} mutants of {} modules in {:.1?}: {} loaded, {} registered, {} export calls ({} completed), {} panics",
        tally.mutants,
        seeds.len(),
        started.elapsed(),
        tally.loaded,
        tally.registered,
        tally.calls,
        tally.completed,
        tally.panics.len()
    );
    assert!(tally.mutants >= total);
    assert!(
        tally.panics.is_empty(),
        "panics:\n{}",
        tally.panics.join("\n")
    );
    // The mutations must reach the interpreter, not only the loader.
    assert!(
        tally.registered > tally.mutants / 20,
        "too few mutants got past the verifier"
    );
}
