//! Integration tests for the module loader (public API only).

use std::path::{Path, PathBuf};

use irvm::loader::abi::describe_attr;
use irvm::loader::{CallingConvention, LoadError, Location, Module};

use crate::paths;

/// Folder with the shared conformance and example modules, if present.
fn shared_dir() -> Option<PathBuf> {
    let dir = paths::shared_dir();
    if dir.is_none() {
        eprintln!(
            "SKIP: {} not found",
            paths::repo().join("../shared").display()
        );
    }
    dir
}

/// Every shared `.vmfb`, sorted.
fn shared_modules() -> Vec<PathBuf> {
    let Some(dir) = shared_dir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let conformance = dir.join("conformance/iree-vm-tests");
    if let Ok(entries) = std::fs::read_dir(&conformance) {
        out.extend(entries.flatten().map(|e| e.path()).filter(|p| is_vmfb(p)));
    }
    for rel in [
        "conformance/module_benchmark.vmfb",
        "benchmarks/vm_bench.vmfb",
        "examples/fib.vmfb",
        "examples/loop.vmfb",
    ] {
        out.push(dir.join(rel));
    }
    out.sort();
    out
}

fn is_vmfb(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "vmfb")
}

#[test]
fn all_shared_modules_load() {
    let paths = shared_modules();
    if paths.is_empty() {
        return;
    }
    assert_eq!(paths.len(), 34, "expected 34 shared modules");
    for path in &paths {
        let module = Module::from_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!module.name().is_empty());
        assert_eq!(module.bytecode_version(), (17, 0), "{}", path.display());
        assert!(
            !module.exports().is_empty(),
            "{}: no exports",
            path.display()
        );
        let data = module.bytecode_data();
        let data_range = data.as_ptr() as usize..data.as_ptr() as usize + data.len();
        for i in 0..module.function_count() {
            let code = module.function_bytecode(i).unwrap();
            let start = code.as_ptr() as usize;
            assert!(data_range.contains(&start) && start + code.len() <= data_range.end);
            assert!(module.function_signature(i).is_some());
        }
        for e in module.exports() {
            assert!(e.internal_ordinal < module.function_count());
        }
        for i in 0..module.rodata_count() {
            assert!(module.rodata(i).is_some());
        }
        println!(
            "{}: name={} functions={} exports={} imports={} rodata={} types={:?}",
            path.file_name().unwrap().to_string_lossy(),
            module.name(),
            module.function_count(),
            module.exports().len(),
            module.imports().len(),
            module.rodata_count(),
            module.types()
        );
    }
}

#[test]
fn zip_modules_load_from_bytes_too() {
    let Some(dir) = shared_dir() else { return };
    for name in ["fib", "loop"] {
        let path = dir.join(format!("examples/{name}.vmfb"));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            &bytes[..4],
            b"PK\x03\x04",
            "{name} should start with a ZIP header"
        );
        let module = Module::from_bytes(bytes).unwrap();
        assert!(module.flatbuffer_range().start > 30);
        assert!(module.export(name).is_some() || !module.exports().is_empty());
    }
    let _ = LoadError::MissingField {
        field: String::new(),
    };
}

// ---------------------------------------------------------------------------
// Synthetic modules built with the generated bindings.

mod build {
    use flatbuffers::{FlatBufferBuilder, WIPOffset};
    use irvm::loader::schema as fb;

    /// Knobs for a synthetic module; defaults give a valid one-function module.
    pub struct Spec {
        pub bytecode_version: u32,
        pub requirements: u32,
        /// (bytecode_offset, bytecode_length) per function.
        pub functions: Vec<(i32, i32)>,
        pub bytecode: Vec<u8>,
        /// (external_data_offset, external_data_length) per external segment.
        pub external: Vec<(u64, u64)>,
        pub embedded: Vec<Vec<u8>>,
        /// Location table entries and source maps, if any.
        pub debug: Option<Debug>,
        /// Byte sizes of (deprecated) rwdata segments.
        pub rwdata: Vec<i32>,
    }

    /// A location table entry for synthetic debug databases.
    pub enum Loc {
        File(&'static str, i32, i32),
        Name(&'static str, Option<i32>),
        CallSite(i32, i32),
        Fused(Option<&'static str>, Vec<i32>),
        /// An entry with a union tag the schema does not know (9), which
        /// IREE's verifier loads (one of tag `NONE` with a value it
        /// refuses, and so does irvm's loader).
        Unknown,
    }

    pub struct Debug {
        pub locations: Vec<Loc>,
        /// (local_name, [(bytecode_offset, location)])
        pub maps: Vec<(&'static str, Vec<(i32, i32)>)>,
    }

    impl Default for Spec {
        fn default() -> Self {
            Spec {
                bytecode_version: 17 << 16,
                requirements: 0,
                functions: vec![(0, 8)],
                bytecode: vec![0x5A; 8],
                external: Vec::new(),
                embedded: Vec::new(),
                debug: None,
                rwdata: Vec::new(),
            }
        }
    }

    /// The size-prefixed FlatBuffer for `spec` (no external data appended),
    /// aligned the way `flatbuffers::finish_size_prefixed` does it.
    pub fn flatbuffer(spec: &Spec) -> Vec<u8> {
        finish(spec, true)
    }

    /// Like [`flatbuffer`], but aligned after the size prefix, as IREE's
    /// flatcc-based writers do.
    pub fn flatbuffer_iree_aligned(spec: &Spec) -> Vec<u8> {
        finish(spec, false)
    }

    fn finish(spec: &Spec, rust_size_prefixed: bool) -> Vec<u8> {
        let mut b = FlatBufferBuilder::new();
        let name = b.create_string("synthetic");
        let mut segments = Vec::new();
        for data in &spec.embedded {
            let bytes = b.create_vector(data);
            segments.push(fb::RodataSegmentDef::create(
                &mut b,
                &fb::RodataSegmentDefArgs {
                    embedded_data: Some(bytes),
                    ..Default::default()
                },
            ));
        }
        for &(offset, length) in &spec.external {
            segments.push(fb::RodataSegmentDef::create(
                &mut b,
                &fb::RodataSegmentDefArgs {
                    external_data_offset: offset,
                    external_data_length: length,
                    ..Default::default()
                },
            ));
        }
        let segments = b.create_vector(&segments);
        let rwdata: Vec<_> = spec
            .rwdata
            .iter()
            .map(|&byte_size| {
                fb::RwdataSegmentDef::create(&mut b, &fb::RwdataSegmentDefArgs { byte_size })
            })
            .collect();
        let rwdata = (!rwdata.is_empty()).then(|| b.create_vector(&rwdata));
        let mut exports = Vec::new();
        let mut signatures = Vec::new();
        let mut descriptors = Vec::new();
        for (i, &(offset, length)) in spec.functions.iter().enumerate() {
            let local = b.create_string(&format!("f{i}"));
            exports.push(fb::ExportFunctionDef::create(
                &mut b,
                &fb::ExportFunctionDefArgs {
                    local_name: Some(local),
                    internal_ordinal: i as i32,
                },
            ));
            let cconv = b.create_string("0i_i");
            signatures.push(fb::FunctionSignatureDef::create(
                &mut b,
                &fb::FunctionSignatureDefArgs {
                    calling_convention: Some(cconv),
                    attrs: None,
                },
            ));
            descriptors.push(fb::FunctionDescriptor::new(
                offset,
                length,
                fb::FeatureBits::empty(),
                0,
                1,
                2,
                0,
            ));
        }
        let exports = b.create_vector(&exports);
        let signatures = b.create_vector(&signatures);
        let descriptors = b.create_vector(&descriptors);
        let bytecode = b.create_vector(&spec.bytecode);
        let debug_database = spec
            .debug
            .as_ref()
            .map(|debug| debug_database(&mut b, debug));
        let root = fb::BytecodeModuleDef::create(
            &mut b,
            &fb::BytecodeModuleDefArgs {
                name: Some(name),
                version: 3,
                requirements: fb::FeatureBits::from_bits_retain(spec.requirements),
                exported_functions: Some(exports),
                function_signatures: Some(signatures),
                rodata_segments: Some(segments),
                rwdata_segments: rwdata,
                function_descriptors: Some(descriptors),
                bytecode_version: spec.bytecode_version,
                bytecode_data: Some(bytecode),
                debug_database,
                ..Default::default()
            },
        );
        if rust_size_prefixed {
            b.finish_size_prefixed(root, Some("IREE"));
            b.finished_data().to_vec()
        } else {
            b.finish(root, Some("IREE"));
            let body = b.finished_data();
            let mut out = (body.len() as u32).to_le_bytes().to_vec();
            out.extend_from_slice(body);
            out
        }
    }

    fn debug_database<'a>(
        b: &mut FlatBufferBuilder<'a>,
        debug: &Debug,
    ) -> WIPOffset<fb::DebugDatabaseDef<'a>> {
        let mut tags = Vec::new();
        let mut entries = Vec::new();
        for loc in &debug.locations {
            let (tag, table) = match loc {
                Loc::File(file, line, column) => {
                    let filename = Some(b.create_string(file));
                    let args = fb::FileLineColLocDefArgs {
                        filename,
                        line: *line,
                        column: *column,
                    };
                    let t = fb::FileLineColLocDef::create(b, &args);
                    (fb::LocationTypeDef_::FileLineColLocDef, t.value())
                }
                Loc::Name(name, child) => {
                    let name = b.create_string(name);
                    // Store the child even when it is 0, so presence is explicit.
                    b.force_defaults(true);
                    let mut nb = fb::NameLocDefBuilder::new(b);
                    nb.add_name(name);
                    if let Some(child) = child {
                        nb.add_child_location(*child);
                    }
                    let t = nb.finish();
                    b.force_defaults(false);
                    (fb::LocationTypeDef_::NameLocDef, t.value())
                }
                Loc::CallSite(callee, caller) => {
                    let args = fb::CallSiteLocDefArgs {
                        callee: *callee,
                        caller: *caller,
                    };
                    let t = fb::CallSiteLocDef::create(b, &args);
                    (fb::LocationTypeDef_::CallSiteLocDef, t.value())
                }
                Loc::Fused(metadata, locations) => {
                    let metadata = metadata.map(|m| b.create_string(m));
                    let locations = Some(b.create_vector(locations));
                    let t = fb::FusedLocDef::create(
                        b,
                        &fb::FusedLocDefArgs {
                            metadata,
                            locations,
                        },
                    );
                    (fb::LocationTypeDef_::FusedLocDef, t.value())
                }
                Loc::Unknown => {
                    let t = fb::LocationEntryDef::create(b, &fb::LocationEntryDefArgs {});
                    (fb::LocationTypeDef_(9), t.value())
                }
            };
            tags.push(tag);
            entries.push(WIPOffset::<fb::LocationEntryDef>::new(table));
        }
        let tags = b.create_vector(&tags);
        let entries = b.create_vector(&entries);
        let mut maps = Vec::new();
        for (name, locations) in &debug.maps {
            let local_name = Some(b.create_string(name));
            let locations: Vec<_> = locations
                .iter()
                .map(|&(offset, loc)| fb::BytecodeLocationDef::new(offset, loc))
                .collect();
            let locations = Some(b.create_vector(&locations));
            maps.push(fb::FunctionSourceMapDef::create(
                b,
                &fb::FunctionSourceMapDefArgs {
                    local_name,
                    locations,
                },
            ));
        }
        let functions = Some(b.create_vector(&maps));
        fb::DebugDatabaseDef::create(
            b,
            &fb::DebugDatabaseDefArgs {
                location_table_type: Some(tags),
                location_table: Some(entries),
                functions,
            },
        )
    }

    /// Start of external rodata for a file that begins with `flatbuffer`.
    pub fn rodata_base(flatbuffer: &[u8]) -> u64 {
        (flatbuffer.len() as u64).div_ceil(64) * 64
    }

    /// A complete in-memory file: the FlatBuffer, padding, then `external`.
    pub fn file(spec: &Spec, external: &[u8]) -> Vec<u8> {
        let mut out = flatbuffer(spec);
        out.resize(rodata_base(&out) as usize, 0);
        out.extend_from_slice(external);
        out
    }
}

fn load_err(bytes: Vec<u8>) -> LoadError {
    match Module::from_bytes(bytes) {
        Ok(m) => panic!("expected an error, loaded {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn synthetic_module_loads_with_rodata() {
    let spec = build::Spec {
        external: vec![(0, 4), (4, 3)],
        embedded: vec![b"embedded".to_vec()],
        ..Default::default()
    };
    let module = Module::from_bytes(build::file(&spec, b"abcdxyz")).unwrap();
    assert_eq!(module.name(), "synthetic");
    assert_eq!(module.version(), 3);
    assert_eq!(module.rodata_count(), 3);
    assert_eq!(module.rodata(0), Some(&b"embedded"[..]));
    assert_eq!(module.rodata(1), Some(&b"abcd"[..]));
    assert_eq!(module.rodata(2), Some(&b"xyz"[..]));
    assert_eq!(module.rodata_is_external(0), Some(false));
    assert_eq!(module.rodata_is_external(2), Some(true));
    assert_eq!(module.rodata(3), None);
    assert_eq!(module.function_bytecode(0), Some(&[0x5A; 8][..]));
    assert_eq!(module.function_bytecode(1), None);
    assert_eq!(
        module.function_signature(0).unwrap().calling_convention,
        Some("0i_i")
    );
    // Zero-copy: rodata points into the module's own bytes.
    let file = module.file_bytes().as_ptr_range();
    assert!(file.contains(&module.rodata(1).unwrap().as_ptr()));
}

#[test]
fn both_alignment_conventions_load() {
    let spec = build::Spec {
        external: vec![(0, 4), (4, 3)],
        ..Default::default()
    };
    for mut file in [
        build::flatbuffer(&spec),
        build::flatbuffer_iree_aligned(&spec),
    ] {
        file.resize(build::rodata_base(&file) as usize, 0);
        file.extend_from_slice(b"abcdxyz");
        let module = Module::from_bytes(file).unwrap();
        assert_eq!(module.rodata(1), Some(&b"xyz"[..]));
    }
}

#[test]
fn truncated_file_is_reported() {
    let err = load_err(vec![1, 2, 3]);
    assert!(
        matches!(err, LoadError::Truncated { available: 3 }),
        "{err:?}"
    );
    assert!(err.to_string().contains("truncated"), "{err}");

    let file = build::file(&build::Spec::default(), &[]);
    let cut = file[..file.len() / 2].to_vec();
    let err = load_err(cut);
    assert!(
        matches!(err, LoadError::SizePrefixOutOfBounds { .. }),
        "{err:?}"
    );
}

#[test]
fn flipped_size_prefix_is_reported() {
    let mut file = build::file(&build::Spec::default(), &[]);
    file[2] ^= 0x10;
    let err = load_err(file.clone());
    let prefix = u32::from_le_bytes(file[..4].try_into().unwrap()) as u64;
    match &err {
        LoadError::SizePrefixOutOfBounds {
            prefix: p,
            available,
        } => {
            assert_eq!(*p, prefix);
            assert_eq!(*available, file.len() as u64 - 4);
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("size prefix out of bounds") && msg.contains(&prefix.to_string()),
        "{msg}"
    );
}

#[test]
fn wrong_identifier_is_reported() {
    let mut file = build::file(&build::Spec::default(), &[]);
    file[8..12].copy_from_slice(b"NOPE");
    let err = load_err(file);
    assert!(
        matches!(err, LoadError::BadIdentifier { found } if &found == b"NOPE"),
        "{err:?}"
    );
    assert!(err.to_string().contains("\"NOPE\""), "{err}");
}

#[test]
fn wrong_major_version_is_reported() {
    let spec = build::Spec {
        bytecode_version: 16 << 16 | 3,
        ..Default::default()
    };
    let err = load_err(build::file(&spec, &[]));
    assert!(
        matches!(
            err,
            LoadError::UnsupportedVersion {
                major: 16,
                minor: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "bytecode version mismatch: expected 17.x with minor <= 0, found 16.3"
    );
    let spec = build::Spec {
        bytecode_version: 17 << 16 | 1,
        ..Default::default()
    };
    let err = load_err(build::file(&spec, &[]));
    assert!(err.to_string().contains("found 17.1"), "{err}");
}

#[test]
fn unknown_required_features_are_named() {
    let spec = build::Spec {
        requirements: 1 << 5,
        ..Default::default()
    };
    let err = load_err(build::file(&spec, &[]));
    assert!(
        matches!(err, LoadError::UnsupportedFeatures { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "module requires unsupported features: bit 5"
    );
}

#[test]
fn external_rodata_out_of_bounds_is_reported() {
    let spec = build::Spec {
        external: vec![(2, 10)],
        ..Default::default()
    };
    let file = build::file(&spec, b"only8byt");
    let len = file.len() as u64;
    let err = load_err(file);
    match &err {
        LoadError::RodataOutOfBounds {
            index: 0,
            offset: 2,
            length: 10,
            file_len,
            ..
        } => {
            assert_eq!(*file_len, len)
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("rodata segment 0") && msg.contains(&len.to_string()),
        "{msg}"
    );

    // Offsets near u64::MAX must not wrap around into bounds.
    let spec = build::Spec {
        external: vec![(u64::MAX - 30, 64)],
        ..Default::default()
    };
    let err = load_err(build::file(&spec, &[0; 64]));
    assert!(
        matches!(err, LoadError::RodataOutOfBounds { .. }),
        "{err:?}"
    );
}

#[test]
fn function_descriptor_out_of_bounds_is_reported() {
    let spec = build::Spec {
        functions: vec![(0, 8), (4, 6)],
        ..Default::default()
    };
    let err = load_err(build::file(&spec, &[]));
    assert!(
        matches!(
            err,
            LoadError::FunctionOutOfBounds {
                index: 1,
                offset: 4,
                length: 6,
                bytecode_len: 8
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "function descriptor 1 out of bounds: bytecode [4, 4 + 6) exceeds bytecode_data of 8 bytes"
    );
    let spec = build::Spec {
        functions: vec![(i32::MAX, i32::MAX)],
        ..Default::default()
    };
    assert!(matches!(
        load_err(build::file(&spec, &[])),
        LoadError::FunctionOutOfBounds { .. }
    ));
    let spec = build::Spec {
        functions: vec![(0, 0)],
        ..Default::default()
    };
    let err = load_err(build::file(&spec, &[]));
    assert!(err.to_string().contains("bytecode_length is 0"), "{err}");
}

#[test]
fn corrupted_flatbuffer_reports_verifier_message() {
    let mut file = build::file(&build::Spec::default(), &[]);
    // The root offset sits right after the size prefix; point it far away.
    file[4..8].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    file[8..12].copy_from_slice(b"IREE");
    let err = load_err(file);
    assert!(matches!(err, LoadError::Verification { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("FlatBuffer verification failed: "),
        "{err}"
    );
}

#[test]
fn missing_file_names_the_path() {
    let err = Module::from_file("/nonexistent/dir/x.vmfb").unwrap_err();
    assert!(matches!(err, LoadError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/dir/x.vmfb"), "{err}");
}

#[test]
fn static_and_shared_bytes_are_accepted() {
    let file = build::file(&build::Spec::default(), &[]);
    let leaked: &'static [u8] = Box::leak(file.clone().into_boxed_slice());
    assert_eq!(Module::from_bytes(leaked).unwrap().name(), "synthetic");
    let shared: std::sync::Arc<[u8]> = file.into();
    let module = Module::from_bytes(shared).unwrap();
    let clone = module.clone();
    std::thread::spawn(move || assert_eq!(clone.function_count(), 1))
        .join()
        .unwrap();
}

#[test]
fn shared_calling_conventions_parse_and_round_trip() {
    let mut seen = std::collections::BTreeSet::new();
    for path in shared_modules() {
        let module = Module::from_file(&path).unwrap();
        let sigs = (0..module.function_count()).filter_map(|i| module.function_signature(i));
        let mut cconvs: Vec<&str> = sigs.filter_map(|s| s.calling_convention).collect();
        let imports = module.imports();
        cconvs.extend(imports.iter().filter_map(|i| i.calling_convention));
        for text in cconvs {
            let cc = CallingConvention::parse(text)
                .unwrap_or_else(|e| panic!("{}: {text:?}: {e}", path.display()));
            assert_eq!(cc.to_string(), text);
            seen.insert(text.to_string());
        }
        for i in 0..module.function_count() {
            for (key, value) in module.function_signature(i).unwrap().attrs {
                if let Some(text) = describe_attr(key, value) {
                    assert!(!text.starts_with("<undecodable"), "{key}={value}");
                }
            }
        }
    }
    println!("{} distinct calling conventions: {seen:?}", seen.len());
}

// ---------------------------------------------------------------------------
// Debug database.

#[test]
fn fib_debug_database_resolves_locations() {
    let Some(dir) = shared_dir() else { return };
    let module = Module::from_file(dir.join("examples/fib.vmfb")).unwrap();
    let db = module
        .debug_database()
        .expect("iree-compile output has a debug database");
    let map = db.source_map_for(0, None).expect("fib has a source map");
    assert_eq!(map.local_name(), "fib");
    // Offsets before the first entry have no location.
    assert_eq!(db.location_at(0, 0), None);
    let first = db.location_at(0, 1).unwrap();
    assert_eq!(
        db.render(first.into()),
        r#"callsite("fib.mlir":2:9 at "fib.mlir":1:1)"#
    );
    // Between entries, the earlier one applies.
    assert_eq!(db.location_at(0, 3), Some(first));
    assert!(matches!(
        db.location(0),
        Ok(Location::FileLineCol {
            file: "fib.mlir",
            ..
        })
    ));
    assert!(db.location(-1).is_err());
    assert!(db.location(db.location_count() as i64).is_err());
}

fn debug_module(locations: Vec<build::Loc>, maps: Vec<(&'static str, Vec<(i32, i32)>)>) -> Module {
    let spec = build::Spec {
        functions: vec![(0, 4), (4, 4)],
        debug: Some(build::Debug { locations, maps }),
        ..Default::default()
    };
    Module::from_bytes(build::file(&spec, &[])).unwrap()
}

#[test]
fn render_covers_every_kind() {
    use build::Loc::*;
    let module = debug_module(
        vec![
            File("a.mlir", 12, 3),
            Name("op", Some(0)),
            Name("bare", None),
            CallSite(1, 0),
            Fused(Some("meta"), vec![0, 2]),
            Fused(None, vec![]),
            Unknown,
        ],
        vec![],
    );
    let db = module.debug_database().unwrap();
    assert_eq!(db.render(0), r#""a.mlir":12:3"#);
    assert_eq!(db.render(1), r#""op"("a.mlir":12:3)"#);
    assert_eq!(db.render(2), r#""bare""#);
    assert_eq!(
        db.render(3),
        r#"callsite("op"("a.mlir":12:3) at "a.mlir":12:3)"#
    );
    assert_eq!(db.render(4), r#"fused<meta>["a.mlir":12:3, "bare"]"#);
    assert_eq!(db.render(5), "fused[]");
    assert!(
        db.render(6)
            .starts_with("<error: location 6 has unknown kind 9"),
        "{}",
        db.render(6)
    );
    assert!(db.render(99).contains("out of range"));
}

#[test]
fn render_is_bounded_on_cycles_and_blowups() {
    use build::Loc::*;
    let mut locations = vec![Name("self", Some(0)), CallSite(2, 1), Fused(None, vec![1])];
    // A chain of fused nodes each referencing the next twice: 2^40 leaves.
    let base = locations.len() as i32;
    for i in 0..40 {
        locations.push(Fused(None, vec![base + i + 1, base + i + 1]));
    }
    locations.push(File("leaf.mlir", 1, 1));
    let module = debug_module(locations, vec![]);
    let db = module.debug_database().unwrap();
    assert_eq!(db.render(0), r#""self"(<cycle 0>)"#);
    assert!(db.render(1).contains("<cycle 1>"), "{}", db.render(1));
    let big = db.render(base.into());
    assert!(
        big.contains("...") && big.len() < 64 * 1024,
        "{} bytes",
        big.len()
    );
    // Source positions (what traps print) are bounded the same way: a
    // fused location listing itself four times once walked 4^32 paths.
    let module = debug_module(vec![Fused(None, vec![0, 0, 0, 0])], vec![]);
    let db = module.debug_database().unwrap();
    let started = std::time::Instant::now();
    assert_eq!(db.source_position(0), None);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn source_maps_match_by_name_when_fewer_than_functions() {
    use build::Loc::*;
    // Like iree-compile 3.13: only the last function has a source map.
    let module = debug_module(
        vec![File("x.mlir", 1, 1), File("x.mlir", 2, 1)],
        vec![("f1", vec![(0, 0), (2, 1)])],
    );
    let db = module.debug_database().unwrap();
    assert!(db.source_map_for(0, None).is_none());
    // A position names no function when the maps are fewer.
    assert!(db.positional_source_map(0).is_none());
    assert!(db.positional_source_map(1).is_none());
    assert_eq!(db.source_map_for(1, None).unwrap().local_name(), "f1");
    assert_eq!(db.source_map_for(0, Some("f1")).unwrap().local_name(), "f1");
    assert_eq!(db.location_at(1, 1), Some(0));
    assert_eq!(db.location_at(1, 3), Some(1));
    assert_eq!(db.location_at(0, 3), None);
}

// ---------------------------------------------------------------------------
// Robustness: seeded mutations must never panic.

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut XorShift, original: &[u8]) -> Vec<u8> {
    let mut bytes = original.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = bytes.len();
        match rng.below(5) {
            0 => {
                let at = rng.below(len);
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= 1 << rng.below(8);
                }
            }
            1 => {
                let at = rng.below(len);
                let values = [0x00, 0xFF, 0x7F, 0x80, 0x01];
                if let Some(b) = bytes.get_mut(at) {
                    *b = values[rng.below(values.len())];
                }
            }
            2 => bytes.truncate(rng.below(len + 1)),
            3 => {
                // Splice: copy a run of the file over another place in it.
                let (from, to) = (rng.below(len), rng.below(len));
                let n = rng.below(64).min(len - from.max(to));
                bytes.copy_within(from..from + n, to);
            }
            _ => {
                // Overwrite a 32-bit word (offsets, lengths, counts).
                let at = rng.below(len.saturating_sub(4));
                if at + 4 <= len {
                    let word = rng.next() as u32 >> rng.below(32);
                    bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
                }
            }
        }
    }
    bytes
}

/// Touches every accessor so mutations that pass verification are also
/// exercised through the read paths.
fn exercise(module: &Module) {
    let _ = (
        module.name(),
        module.version(),
        module.requirements(),
        module.attrs(),
    );
    let _ = (
        module.types(),
        module.dependencies(),
        module.imports(),
        module.exports(),
    );
    let _ = (
        module.rwdata_sizes(),
        module.global_bytes_capacity(),
        module.global_ref_count(),
    );
    for i in 0..=module.function_count() {
        let _ = (module.function_bytecode(i), module.function_signature(i));
    }
    for i in 0..=module.rodata_count() {
        let _ = module.rodata(i);
    }
    if let Some(db) = module.debug_database() {
        for i in 0..=db.location_count() as i64 {
            let _ = db.render(i);
        }
        for f in 0..module.function_count() {
            let _ = db.location_at(f, 8);
        }
    }
}

#[test]
fn seeded_mutations_never_panic() {
    let mut inputs: Vec<(String, Vec<u8>)> = shared_modules()
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read(p).unwrap()))
        .collect();
    let spec = build::Spec {
        external: vec![(0, 4)],
        ..Default::default()
    };
    inputs.push(("synthetic".into(), build::file(&spec, b"data")));
    use build::Loc::*;
    let spec = build::Spec {
        debug: Some(build::Debug {
            locations: vec![
                File("a.mlir", 1, 2),
                Name("n", Some(0)),
                CallSite(1, 0),
                Fused(Some("m"), vec![0, 1, 2]),
            ],
            maps: vec![("f0", vec![(0, 3), (4, 2)])],
        }),
        ..Default::default()
    };
    inputs.push(("synthetic-debug".into(), build::file(&spec, &[])));
    let mut outcomes = (0usize, 0usize);
    for (index, (name, original)) in inputs.iter().enumerate() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1));
        for round in 0..2000 {
            let mutated = mutate(&mut rng, original);
            let result = std::panic::catch_unwind(|| match Module::from_bytes(mutated) {
                Ok(module) => {
                    exercise(&module);
                    true
                }
                Err(err) => {
                    let _ = err.to_string();
                    false
                }
            });
            match result {
                Ok(true) => outcomes.0 += 1,
                Ok(false) => outcomes.1 += 1,
                Err(_) => panic!("{name}: mutation round {round} panicked"),
            }
        }
    }
    println!("mutations: {} loaded, {} rejected", outcomes.0, outcomes.1);
}

// ---------------------------------------------------------------------------
// Large external rodata through a sparse file.

const FOUR_GIB: u64 = 4 << 30;

/// Writes to `file` a runnable module (`f0(i32) -> i32` returns its
/// argument) whose only rodata segment is `bytes` of external data, without
/// allocating the disk blocks; the last byte is `0xA5`.
fn write_sparse(file: &mut std::fs::File, bytes: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let spec = build::Spec {
        // block marker, then `vm.return %i0`.
        bytecode: vec![0x79, 0x5A, 1, 0, 0, 0],
        functions: vec![(0, 6)],
        external: vec![(0, bytes)],
        ..Default::default()
    };
    let fb = build::flatbuffer(&spec);
    file.write_all(&fb).unwrap();
    let end = build::rodata_base(&fb) + bytes;
    file.set_len(end).unwrap();
    file.seek(SeekFrom::Start(end - 1)).unwrap();
    file.write_all(&[0xA5]).unwrap();
    file.flush().unwrap();
}

/// A temporary module with 4 GiB of external rodata (see [`write_sparse`]).
fn sparse_module() -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    write_sparse(file.as_file_mut(), FOUR_GIB);
    file
}

#[test]
#[cfg(target_pointer_width = "64")]
fn sparse_4gib_external_rodata() {
    let file = sparse_module();
    let module = Module::from_file(file.path()).unwrap();
    let segment = module.rodata(0).unwrap();
    assert_eq!(segment.len() as u64, FOUR_GIB);
    assert_eq!(module.rodata_is_external(0), Some(true));
    assert_eq!(segment[segment.len() - 1], 0xA5);
    assert_eq!(segment[0], 0);
}

fn vm_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
#[ignore = "timing and memory figures; run with --ignored --nocapture"]
#[cfg(target_pointer_width = "64")]
fn sparse_4gib_load_figures() {
    let file = sparse_module();
    let rss_before = vm_rss_kib().expect("VmRSS in /proc/self/status");
    let start = std::time::Instant::now();
    let module = Module::from_file(file.path()).unwrap();
    let segment = module.rodata(0).unwrap();
    let last = segment[segment.len() - 1];
    let elapsed = start.elapsed();
    let rss_after = vm_rss_kib().unwrap();
    assert_eq!(last, 0xA5);
    let delta_kib = rss_after.saturating_sub(rss_before);
    println!(
        "sparse 4 GiB module: load + last-byte read {:.3} ms, VmRSS delta {} KiB",
        elapsed.as_secs_f64() * 1e3,
        delta_kib
    );
    assert!(elapsed.as_millis() < 10, "load took {elapsed:?}");
    assert!(
        delta_kib < 10 * 1024,
        "resident memory grew by {delta_kib} KiB"
    );
}

/// Writes a runnable module (`f0(i32) -> i32` returns its argument) whose
/// one rodata segment is `IRVM_SPARSE_BYTES` (default 1 GiB) of external
/// data in a sparse file at `IRVM_SPARSE_OUT`. `scripts/bench-vs-iree` uses
/// it to compare loading with `iree-run-module`.
#[test]
#[ignore = "writes a benchmark input; run with IRVM_SPARSE_OUT=path --ignored"]
#[cfg(target_pointer_width = "64")]
fn write_sparse_module() {
    let Ok(out) = std::env::var("IRVM_SPARSE_OUT") else {
        eprintln!("IRVM_SPARSE_OUT not set: nothing written");
        return;
    };
    let bytes: u64 = std::env::var("IRVM_SPARSE_BYTES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 30);
    write_sparse(&mut std::fs::File::create(&out).unwrap(), bytes);
    let module = Module::from_file(&out).unwrap();
    assert_eq!(module.rodata(0).unwrap().len() as u64, bytes);
}

/// Inputs the `run` fuzz target once crashed on (tests/data/fuzz_regressions,
/// `run-*`), run as it runs them: load, register, call every export with
/// zero arguments under fuel. Traps are fine; a panic fails the test.
/// `run-location-past-its-kind-table`: a source map's location index past
/// the location kind table, read when a trap's frame was described.
#[test]
fn fuzz_run_regressions_trap_without_panicking() {
    use irvm::{Context, Limits, Ref, TypeRegistry, ValType, Value};
    let dir = paths::data("fuzz_regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("run-") {
            continue;
        }
        seen += 1;
        let Ok(module) = Module::from_bytes(std::fs::read(&path).unwrap()) else {
            continue;
        };
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.set_limits(Limits {
            max_stack_depth: 64,
            max_buffer_bytes: 1 << 20,
            max_list_elements: 1 << 16,
            ..Limits::default()
        });
        ctx.set_fuel(Some(100_000));
        let module_name = module.name().to_string();
        if ctx.register_module(module).is_err() {
            continue;
        }
        for export in ctx.exports(Some(&module_name)) {
            let Ok(f) = ctx.function(&format!("{module_name}.{export}")) else {
                continue;
            };
            let args: Vec<Value> = f
                .params()
                .iter()
                .map(|t| match t {
                    ValType::I32 => Value::I32(0),
                    ValType::I64 => Value::I64(0),
                    ValType::F32 => Value::F32(0.0),
                    ValType::F64 => Value::F64(0.0),
                    ValType::Ref => Value::Ref(Ref::Null),
                })
                .collect();
            ctx.set_fuel(Some(20_000));
            let _ = ctx.invoke(&f, &args);
        }
    }
    assert!(seen > 0, "no run-* input in {}", dir.display());
}

/// Rodata segments reach programs (and compiled kernels, which read
/// constants with aligned vector loads) 64-byte aligned, however the
/// module's bytes are held: a file read into memory starts at a 64-byte
/// boundary (so segments iree-compile aligned within the file are used in
/// place), and a segment at an odd address (bytes lent one byte into an
/// allocation; irvm's assembler does not align segments within the file)
/// becomes an aligned copy with the same contents.
/// (An llvm-cpu executable built for an AVX2 host faulted on a weight that a
/// module file read into a plain `Vec` left 16-byte aligned.)
#[test]
fn rodata_buffers_are_aligned_however_the_module_bytes_are_held() {
    use std::sync::Arc;

    use irvm::loader::{LentBytes, ModuleBytes};
    use irvm::{Context, Ref, TypeRegistry, Value};

    let source = "vm.module @ro version 0\nvm.rodata[0] = 0102030405060708090a0b0c0d0e0f10\n\
                  vm.export @get\nvm.func @get() -> (!vm.buffer) {\n^bb0:\n  \
                  %r0 = vm.const.ref.rodata 0\n  vm.return %r0\n}\n";
    let bytes = irvm::asm::assemble(source, "ro.vmasm").expect("assembles");
    let segment = |module: Module| {
        let registry = TypeRegistry::new();
        let mut ctx = Context::new(&registry);
        ctx.register_module(module).expect("registers");
        let get = ctx.function("get").expect("get");
        let results = ctx.invoke(&get, &[]).expect("runs");
        let Some(Value::Ref(Ref::Buffer(b))) = results.first() else {
            panic!("{results:?}")
        };
        let (address, contents) = b.with_bytes(|s| (s.as_ptr() as usize, s.to_vec()));
        (address % 64, contents)
    };
    let want: Vec<u8> = (1..=16).collect();

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ro.vmfb");
    std::fs::write(&path, &bytes).expect("writes");
    let from_file = Module::from_file(&path).expect("loads");
    assert_eq!(segment(from_file), (0, want.clone()));

    struct Shifted(Vec<u8>);
    impl AsRef<[u8]> for Shifted {
        fn as_ref(&self) -> &[u8] {
            &self.0[1..]
        }
    }
    // Lent bytes one byte into an allocation: never 64-byte aligned.
    let mut held = vec![0u8];
    held.extend_from_slice(&bytes);
    let module =
        Module::from_bytes(ModuleBytes::Lent(LentBytes(Arc::new(Shifted(held))))).expect("loads");
    assert_eq!(segment(module), (0, want));
}

#[test]
fn the_assembly_form_refuses_rwdata_segments_rather_than_drop_them() {
    use irvm::bytecode::disasm::{disassemble_module, DisasmError, DisasmOptions, TextForm};
    let spec = build::Spec {
        rwdata: vec![16],
        ..Default::default()
    };
    let module = Module::from_bytes(build::flatbuffer(&spec)).expect("loads");
    assert_eq!(module.rwdata_sizes(), [16]);
    let options = DisasmOptions {
        form: TextForm::Assembly,
        ..Default::default()
    };
    let error = disassemble_module(&module, &options).expect_err("refused");
    assert!(matches!(error, DisasmError::NotExpressible { .. }));
    assert_eq!(
        error.to_string(),
        "the assembly form cannot write the module's 1 rwdata segments"
    );
}
