//! `irvm params dump|create|convert` as a user runs them, and the archive
//! readers on files the tests write: safetensors and GGUF files built here,
//! `.irpa` archives from `tests/data/params` (made by IREE 3.13's
//! `iree-create-parameters`), linked archives and a sparse archive with an
//! entry past 4 GiB.
//!
//! With IREE's reference tools installed (`~/.cache/irvm-iree-peer/bin` or
//! `IREE_PEER_BIN`), `reference_tools_agree` compares the archives written
//! byte for byte and the tables printed line for line with
//! `iree-create-parameters`, `iree-convert-parameters` and
//! `iree-dump-parameters`; it is skipped with a message without them.

use std::path::{Path, PathBuf};
use std::process::Command;

use irvm_io_parameters::archive::{map_file, read_entries, EntryData, Format};

use crate::common;
use crate::common::cli::irvm;
use crate::common::paths::repo;

fn data_dir() -> PathBuf {
    repo().join("tests/data/params")
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `irvm params ARGS` that must succeed: its stdout.
fn params_ok(args: &[String]) -> String {
    let mut all = vec!["params".to_string()];
    all.extend_from_slice(args);
    let (out, err, code) = irvm(&all);
    assert_eq!(code, 0, "irvm {all:?} failed: {err}");
    out
}

/// `irvm params ARGS` that must fail cleanly: its stderr.
fn params_err(args: &[String]) -> String {
    let mut all = vec!["params".to_string()];
    all.extend_from_slice(args);
    let (_, err, code) = irvm(&all);
    assert_eq!(code, 1, "irvm {all:?} should fail with status 1: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

/// A safetensors file: header members then data.
fn safetensors(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn gguf_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

/// A GGUF v3 file with a string, an array and `general.alignment` (64),
/// tensors `(name, dims, ggml type, offset)` and `data` bytes of data.
fn gguf(tensors: &[(&str, &[u64], u32, u64)], data: usize) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&3u64.to_le_bytes());
    gguf_string(&mut out, b"general.name");
    out.extend_from_slice(&8u32.to_le_bytes());
    gguf_string(&mut out, b"tiny");
    gguf_string(&mut out, b"tokenizer.tokens");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&2u64.to_le_bytes());
    gguf_string(&mut out, b"ab");
    gguf_string(&mut out, b"c");
    gguf_string(&mut out, b"general.alignment");
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&64u32.to_le_bytes());
    for (name, dims, kind, offset) in tensors {
        gguf_string(&mut out, name.as_bytes());
        out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in *dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
    }
    out.resize(out.len().div_ceil(64) * 64, 0);
    out.extend((0..data).map(|i| (i * 7) as u8));
    out
}

/// Writes the test inputs into `dir`: `t.safetensors`, `t.gguf`.
fn inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let st = dir.join("t.safetensors");
    let header = r#"{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"I8","shape":[5],"data_offsets":[24,29]},"e":{"dtype":"F16","shape":[0],"data_offsets":[29,29]},"c":{"dtype":"BF16","shape":[3],"data_offsets":[29,35]}}  "#;
    let data: Vec<u8> = (0..35).collect();
    std::fs::write(&st, safetensors(header, &data)).unwrap();
    let gg = dir.join("t.gguf");
    std::fs::write(
        &gg,
        gguf(
            &[
                ("tok_embd", &[64, 2], 8, 0), // q8_0
                ("norm", &[4], 0, 192),       // f32
                ("q4k", &[256], 12, 256),     // q4_K
                ("h", &[3], 1, 448),          // f16
            ],
            454,
        ),
    )
    .unwrap();
    (st, gg)
}

/// The bytes of each DATA entry of the archive at `path`, by key (splats
/// as their pattern repeated).
fn contents(path: &Path) -> Vec<(String, Vec<u8>)> {
    let format = Format::from_path(path).unwrap();
    let bytes = map_file(path).unwrap();
    read_entries(format, &bytes)
        .unwrap()
        .into_iter()
        .map(|e| {
            let v = match e.data {
                EntryData::Data { offset, length } => {
                    bytes[offset as usize..(offset + length) as usize].to_vec()
                }
                EntryData::Splat { pattern, length } => pattern
                    .iter()
                    .copied()
                    .cycle()
                    .take(length as usize)
                    .collect(),
            };
            (e.key, v)
        })
        .collect()
}

const RULE: &str = "//===--------------------------------------------------------------------------------------------------------------===//\n";

#[test]
fn dump_prints_iree_dump_parameters_table() {
    let expected = format!(
        "{RULE}// Parameter scope <global> (3 entries, 27 total bytes)
//===------------+------------------+------------------+-----------------------------------------------------------===//
//         Start |              End |           Length | Key
//---------------+------------------+------------------+--------------------------------------------------------------//
               - |                - |                8 | `s`
             384 |              400 |               16 | `d`
             448 |              451 |                3 | `e`

"
    );
    let out_dump = params_ok(&args(&["dump", &s(&data_dir().join("data.irpa"))]));
    assert_eq!(out_dump, expected);
    // `--parameters=` and scopes, as iree-dump-parameters takes them: one
    // table per scope, in the order scopes first appear.
    let splats = s(&data_dir().join("splats.irpa"));
    let data = s(&data_dir().join("data.irpa"));
    let out = params_ok(&args(&[
        "dump",
        &format!("--parameters=m={splats}"),
        &format!("--parameters={data}"),
    ]));
    assert!(out.starts_with(&format!(
        "{RULE}// Parameter scope `m` (2 entries, 28 total bytes)\n"
    )));
    assert!(out.contains("// Parameter scope <global> (3 entries, 27 total bytes)\n"));
}

#[test]
fn dump_reads_safetensors_and_gguf() {
    let dir = tempfile::tempdir().unwrap();
    let (st, gg) = inputs(dir.path());
    let out = params_ok(&args(&["dump", &s(&st), &s(&gg)]));
    // Offsets are absolute: safetensors data after the 8 + 255-byte header,
    // GGUF data at the next multiple of general.alignment.
    assert!(
        out.contains("// Parameter scope <global> (8 entries, 337 total bytes)\n"),
        "{out}"
    );
    assert!(
        out.contains("             263 |              287 |               24 | `w`\n"),
        "{out}"
    );
    assert!(
        out.contains("             320 |              456 |              136 | `tok_embd`\n"),
        "{out}"
    );
    assert!(
        out.contains("             576 |              720 |              144 | `q4k`\n"),
        "{out}"
    );
    let info = params_ok(&args(&["dump", "--info", &s(&st), &s(&gg)]));
    assert!(info.contains("`w`: F32 [2, 3]\n"), "{info}");
    assert!(info.contains("`q4k`: q4_K [256]\n"), "{info}");
}

#[test]
fn create_writes_the_reference_tools_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("data.irpa");
    params_ok(&args(&[
        "create",
        "--quiet",
        "--splat=s=2xi32=5",
        "--data=d=4xf32",
        "--data=e=3xi8",
        &format!("--output={}", s(&out)),
    ]));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(data_dir().join("data.irpa")).unwrap()
    );
    let out = dir.path().join("splats.irpa");
    let table = params_ok(&args(&[
        "create",
        "--splat=a=4xf32=1.5",
        "--splat=b=2x3xi16=7",
        &format!("--output={}", s(&out)),
    ]));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(data_dir().join("splats.irpa")).unwrap()
    );
    assert!(table.contains("               - |                - |               16 | `a`\n"));
}

#[test]
fn create_fills_data_entries_with_their_value() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.irpa");
    params_ok(&args(&[
        "create",
        "--data=p=4xf32=2.5",
        "--data=q=3xi16=-2",
        "--data=z=2xi8",
        &format!("--output={}", s(&out)),
    ]));
    let c = contents(&out);
    assert_eq!(c[0], ("p".into(), [2.5f32.to_le_bytes(); 4].concat()));
    assert_eq!(c[1], ("q".into(), [(-2i16).to_le_bytes(); 3].concat()));
    assert_eq!(c[2], ("z".into(), vec![0, 0]));
    // --extract writes an entry's bytes.
    let bin = dir.path().join("q.bin");
    let said = params_ok(&args(&[
        "dump",
        &s(&out),
        &format!("--extract=q={}", s(&bin)),
    ]));
    assert!(said.ends_with(&format!(
        "Extracting parameter `q` (6b) to `{}`...\n",
        s(&bin)
    )));
    assert_eq!(std::fs::read(&bin).unwrap(), c[1].1);
}

#[test]
fn a_failed_create_leaves_no_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.irpa");
    std::fs::write(&out, b"before").unwrap();
    for bad in [
        "--data=a=4xq9=1",
        "--splat=a=4xf32=abc",
        "--data=a=99999999999x99999999999xf64",
        "--splat=a=4xcf128=1",
    ] {
        let err = params_err(&args(&["create", bad, &format!("--output={}", s(&out))]));
        assert!(err.starts_with("irvm params create: "), "{err}");
    }
    let err = params_err(&args(&[
        "create",
        "--alignment=48",
        "--data=a=4xf32",
        &format!("--output={}", s(&out)),
    ]));
    assert!(err.contains("power of two"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"before");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["o.irpa"]);
    let err = params_err(&args(&["create", "--data=a=4xf32"]));
    assert!(err.contains("--output"), "{err}");
}

#[test]
fn convert_copies_every_format_into_one_archive() {
    let dir = tempfile::tempdir().unwrap();
    let (st, gg) = inputs(dir.path());
    let out = dir.path().join("all.irpa");
    let table = params_ok(&args(&["convert", &s(&st), &s(&gg), &s(&out)]));
    assert!(
        table.contains("// Parameter scope <global> (8 entries, 337 total bytes)\n"),
        "{table}"
    );
    let mut expected = contents(&st);
    expected.extend(contents(&gg));
    assert_eq!(contents(&out), expected);
    // A key in two inputs: each copy keeps its own bytes.
    let twice = dir.path().join("twice.irpa");
    params_ok(&args(&["convert", "--quiet", &s(&gg), &s(&gg), &s(&twice)]));
    assert_eq!(contents(&twice), [contents(&gg), contents(&gg)].concat());
    // And back again: an irpa converts to the same bytes.
    let again = dir.path().join("again.irpa");
    params_ok(&args(&[
        "convert",
        "--quiet",
        &format!("--parameters={}", s(&out)),
        &format!("--output={}", s(&again)),
    ]));
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&out).unwrap());
}

#[test]
fn convert_excludes_renames_splats_and_strips() {
    let dir = tempfile::tempdir().unwrap();
    let (st, _) = inputs(dir.path());
    let out = dir.path().join("o.irpa");
    params_ok(&args(&[
        "convert",
        &s(&st),
        &s(&out),
        "--exclude=e",
        "--rename=w=weight",
        "--splat=weight=f32=4.5",
        "--splat=c",
    ]));
    let keys: Vec<_> = contents(&out).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["weight", "b", "c"]);
    let bytes = map_file(&out).unwrap();
    let entries = read_entries(Format::Irpa, &bytes).unwrap();
    assert_eq!(
        entries[0].data,
        EntryData::Splat {
            pattern: 4.5f32.to_le_bytes().to_vec(),
            length: 24
        }
    );
    assert_eq!(
        entries[2].data,
        EntryData::Splat {
            pattern: vec![0],
            length: 6
        }
    );
    params_ok(&args(&["convert", "--strip", "--quiet", &s(&st), &s(&out)]));
    let bytes = map_file(&out).unwrap();
    assert!(read_entries(Format::Irpa, &bytes)
        .unwrap()
        .iter()
        .all(|e| matches!(e.data, EntryData::Splat { .. })));
}

#[test]
fn errors_name_the_file_and_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (st, gg) = inputs(dir.path());
    let missing = dir.path().join("missing.irpa");
    let err = params_err(&args(&["dump", &s(&missing)]));
    assert!(
        err.contains("missing.irpa") && err.contains("No such file"),
        "{err}"
    );
    let txt = dir.path().join("x.txt");
    std::fs::write(&txt, b"").unwrap();
    assert!(params_err(&args(&["dump", &s(&txt)])).contains("unsupported file format `txt`"));
    // Every truncation of each format: an error naming the file.
    for (path, name) in [(&st, "cut.safetensors"), (&gg, "cut.gguf")] {
        let bytes = std::fs::read(path).unwrap();
        let cut = dir.path().join(name);
        for n in [0, 7, 8, 30, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&cut, &bytes[..n]).unwrap();
            let err = params_err(&args(&["dump", &s(&cut)]));
            assert!(
                err.starts_with(&format!("irvm params dump: {}: ", s(&cut))),
                "{err}"
            );
        }
    }
    let irpa = std::fs::read(data_dir().join("data.irpa")).unwrap();
    let cut = dir.path().join("cut.irpa");
    std::fs::write(&cut, &irpa[..200]).unwrap();
    assert!(params_err(&args(&["dump", &s(&cut)])).contains("out of range"));
    // Convert: an input that fails writes nothing; a swapped order is
    // refused before an input is written over.
    let out = dir.path().join("o.irpa");
    params_err(&args(&["convert", &s(&cut), &s(&out)]));
    assert!(!out.exists());
    assert!(params_err(&args(&["convert", &s(&gg), &s(&st)])).contains("must be an .irpa file"));
    assert!(params_err(&args(&["convert", &s(&out)])).contains("no input file"));
    // A splat of a 3-byte pattern cannot be written (as IREE's builder).
    assert!(params_err(&args(&[
        "convert",
        &s(&st),
        &s(&out),
        "--splat=w=x24=ABCDEF"
    ]))
    .contains("splat pattern length 3"));
}

/// Two archives in one file: `data.irpa` with a link to `splats.irpa`
/// appended after it.
fn linked_archive(dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(data_dir().join("data.irpa")).unwrap();
    let next = bytes.len() as u64;
    bytes[16..24].copy_from_slice(&next.to_le_bytes());
    bytes.extend(std::fs::read(data_dir().join("splats.irpa")).unwrap());
    let path = dir.join("linked.irpa");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn linked_archives_list_each_archives_entries() {
    let dir = tempfile::tempdir().unwrap();
    let linked = linked_archive(dir.path());
    let keys: Vec<_> = contents(&linked).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["s", "d", "e", "a", "b"]);
    let out = params_ok(&args(&["dump", &s(&linked)]));
    assert!(out.contains("(5 entries, 55 total bytes)"), "{out}");
    // IREE 3.13 reads the first header's entry count and segment table for
    // every archive of the chain, at each header's position: here it reads
    // three entries from the second archive's table of two, and fails.
    let Some(peer) = common::peer_bin(&["iree-dump-parameters"]) else {
        common::report_missing_peer();
        return;
    };
    let reference = Command::new(peer.join("iree-dump-parameters"))
        .arg(format!("--parameters={}", s(&linked)))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&reference.stderr);
    assert!(!reference.status.success());
    assert!(text.contains("entry table truncated"), "{text}");
}

#[test]
fn entries_past_4_gib_in_a_sparse_archive() {
    use std::io::{Seek, SeekFrom, Write};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.irpa");
    // One DATA entry of 4 bytes at 4.5 GiB, in a 5 GiB sparse file: the
    // header of a one-entry archive whose storage segment starts past 4 GiB.
    let mut head = std::fs::read(data_dir().join("data.irpa")).unwrap();
    let at: u64 = (9 << 29) + 64;
    let d = 96 + 96; // the second entry, `d`
    head[72..80].copy_from_slice(&at.to_le_bytes()); // storage segment offset
    head[80..88].copy_from_slice(&(1u64 << 20).to_le_bytes()); // and length
    head[d + 60..d + 68].copy_from_slice(&0u64.to_le_bytes());
    head[d + 68..d + 76].copy_from_slice(&4u64.to_le_bytes());
    let mut file = std::fs::File::create(&path).unwrap();
    file.set_len(5 << 30).unwrap();
    file.write_all(&head).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(b"BIG!").unwrap();
    drop(file);
    let bytes = map_file(&path).unwrap();
    let entries = read_entries(Format::Irpa, &bytes).unwrap();
    assert_eq!(
        entries[1].data,
        EntryData::Data {
            offset: at,
            length: 4
        }
    );
    assert_eq!(&bytes[at as usize..at as usize + 4], b"BIG!");
    drop(bytes);
    let out = params_ok(&args(&["dump", &s(&path)]));
    assert!(
        out.contains(&format!(
            "{at:16} | {:16} |                4 | `d`\n",
            at + 4
        )),
        "{out}"
    );
    let bin = dir.path().join("d.bin");
    params_ok(&args(&[
        "dump",
        &s(&path),
        &format!("--extract=d={}", s(&bin)),
    ]));
    assert_eq!(std::fs::read(&bin).unwrap(), b"BIG!");
}

/// Runs `tool ARGS` and irvm's `params SUB ARGS` with `--output` pointing
/// to files of their own in `dir`; asserts both succeed with the same
/// stdout and the same archive.
fn same_as_reference(peer: &Path, tool: &str, sub: &str, flags: &[String], dir: &Path) {
    let reference = dir.join("reference.irpa");
    let ours = dir.join("ours.irpa");
    let theirs = Command::new(peer.join(tool))
        .args(flags)
        .arg(format!("--output={}", s(&reference)))
        .output()
        .unwrap();
    assert!(
        theirs.status.success(),
        "{tool} {flags:?}: {}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let mut all = vec![sub.to_string()];
    all.extend_from_slice(flags);
    all.push(format!("--output={}", s(&ours)));
    let out = params_ok(&all);
    assert_eq!(
        out,
        String::from_utf8_lossy(&theirs.stdout),
        "{tool} {flags:?}"
    );
    assert!(
        std::fs::read(&reference).unwrap() == std::fs::read(&ours).unwrap(),
        "{tool} {flags:?}: the archives differ"
    );
}

#[test]
fn reference_tools_agree() {
    let tools = [
        "iree-create-parameters",
        "iree-convert-parameters",
        "iree-dump-parameters",
    ];
    let Some(peer) = common::peer_bin(&tools) else {
        common::report_missing_peer();
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (st, gg) = inputs(dir.path());
    for flags in [
        &["--splat=a=4xf32=1.5", "--splat=b=2x3xi16=7"][..],
        &[
            "--data=d=4xf32",
            "--data=e=3xi8",
            "--splat=s=2xi32=5",
            "--splat=z=f64",
        ],
        &["--data=d=4xf32", "--data=e=3xi8", "--alignment=128"],
        &[
            "--data=d=1000x1000xf32",
            "--data=e=3xbf16",
            "--splat=q=ui8=255",
            "--splat=h=16xf16=0.5",
        ],
        &["--quiet", "--data=x=0xf32", "--splat=y=0xi8"],
        &[],
    ] {
        same_as_reference(
            &peer,
            "iree-create-parameters",
            "create",
            &args(flags),
            dir.path(),
        );
    }
    // (Inputs without a key in common: for a key that appears twice, IREE
    // 3.13 copies the bytes of each into the first one's place and leaves
    // the second's zero; irvm gives each its own.)
    let converted = dir.path().join("converted.irpa");
    params_ok(&args(&["convert", "--quiet", &s(&st), &s(&converted)]));
    let p = |f: &Path| format!("--parameters={}", s(f));
    let sp = |f: &Path| format!("--parameters=scope={}", s(f));
    for flags in [
        vec![p(&st)],
        vec![p(&gg)],
        vec![sp(&st), p(&gg)],
        vec![p(&converted), sp(&gg)],
        vec![
            p(&gg),
            p(&st),
            "--exclude=norm".into(),
            "--rename=h=hh".into(),
            "--splat=hh=f32=4.5".into(),
            "--splat=b".into(),
        ],
        vec![
            p(&converted),
            "--strip".into(),
            "--splat=w=x32=CAFEF00D".into(),
        ],
    ] {
        same_as_reference(
            &peer,
            "iree-convert-parameters",
            "convert",
            &flags,
            dir.path(),
        );
    }
    // The dump of every archive here, as one run with scopes.
    let mut files = vec![st.clone(), gg.clone(), converted.clone()];
    files.extend(["data.irpa", "splats.irpa"].map(|f| data_dir().join(f)));
    let mut flags: Vec<String> = files.iter().map(|f| p(f)).collect();
    flags.push(sp(&gg));
    let theirs = Command::new(peer.join("iree-dump-parameters"))
        .args(&flags)
        .output()
        .unwrap();
    assert!(theirs.status.success());
    let mut all = vec!["dump".to_string()];
    all.extend(flags);
    assert_eq!(params_ok(&all), String::from_utf8_lossy(&theirs.stdout));
}
