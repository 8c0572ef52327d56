//! Programs whose weights live in parameter archives, run as users run
//! them: `irvm run --parameters=[scope=]FILE`, every format, scoped and
//! unscoped keys, several archives in a scope, a mutable global
//! initialized from a parameter, and the errors the reference gives
//! (compared live with iree-run-module when it is installed).
//! The modules and archives: tests/data/params/run/README.md.

use std::path::PathBuf;

use crate::common::cli::irvm;
use crate::common::paths::repo;

fn file(name: &str) -> String {
    repo()
        .join("tests/data/params/run")
        .join(name)
        .display()
        .to_string()
}

/// `irvm run` of `module`'s `function` on `input` with `params`
/// (`--parameters` values, names relative to the fixture directory):
/// stdout, stderr, exit code.
fn run(module: &str, function: &str, input: &str, params: &[&str]) -> (String, String, i32) {
    let mut args = vec![
        "run".to_string(),
        format!("--module={}", file(module)),
        format!("--function={function}"),
        format!("--input={input}"),
    ];
    for p in params {
        let (scope, name) = match p.split_once('=') {
            Some((s, n)) => (format!("{s}="), n),
            None => (String::new(), *p),
        };
        args.push(format!("--parameters={scope}{}", file(name)));
    }
    irvm(&args)
}

/// The tensor line of a single-result run.
fn tensor(out: &str) -> &str {
    out.lines().last().unwrap_or("")
}

#[test]
fn every_format_gives_the_weights_to_the_program() {
    // x * w + b with w = [1.5, 2.5, -3, 4], b = [0.25, 0.5, 0.75, 1].
    for archive in ["wb.safetensors", "wb.irpa"] {
        let scoped = format!("model={archive}");
        let (out, err, code) = run("m.vmfb", "main", "4xf32=1,2,3,4", &[&scoped, archive]);
        assert_eq!(code, 0, "{archive}: {err}");
        assert_eq!(tensor(&out), "4xf32=1.75 5.5 -8.25 17", "{archive}");
    }
    // Splats: w = 2, b = 0.5.
    let (out, err, code) = run(
        "m.vmfb",
        "main",
        "4xf32=1,2,3,4",
        &["model=model.irpa", "un.irpa"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(tensor(&out), "4xf32=2.5 4.5 6.5 8.5");
}

#[test]
fn the_first_archive_with_a_key_wins_and_formats_mix_in_a_scope() {
    // `b` is in both unscoped archives: the splat (first) wins, then the
    // safetensors one when it comes first.
    let (out, err, code) = run(
        "m.vmfb",
        "main",
        "4xf32=1,2,3,4",
        &["model=wb.irpa", "un.irpa", "wb.safetensors"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(tensor(&out), "4xf32=2 5.5 -8.5 16.5");
    let (out, err, code) = run(
        "m.vmfb",
        "main",
        "4xf32=1,2,3,4",
        &["model=wb.irpa", "wb.safetensors", "un.irpa"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(tensor(&out), "4xf32=1.75 5.5 -8.25 17");
}

#[test]
fn a_mutable_global_starts_from_its_parameter() {
    let (out, err, code) = run("g.vmfb", "step", "4xf32=1,1,1,1", &["wb.irpa"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tensor(&out), "4xf32=1.25 1.5 1.75 2");
}

#[test]
fn missing_scopes_keys_and_files_fail_as_the_reference_does() {
    // No archive for the unscoped `b`.
    let (_, err, code) = run("m.vmfb", "main", "4xf32=1,2,3,4", &["model=wb.irpa"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("NOT_FOUND; no provider registered that handles scopes like ''"),
        "{err}"
    );
    // The scope is there, the key is not.
    let (_, err, code) = run(
        "m.vmfb",
        "main",
        "4xf32=1,2,3,4",
        &["model=un.irpa", "wb.irpa"],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("NOT_FOUND; no parameter found in index with key 'w'"),
        "{err}"
    );
    // A file that is not there, and one of no known format.
    let (_, err, code) = run(
        "m.vmfb",
        "main",
        "4xf32=1,2,3,4",
        &["model=absent.irpa", "wb.irpa"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("absent.irpa"), "{err}");
    let (_, err, code) = run("m.vmfb", "main", "4xf32=1,2,3,4", &["model=README.md"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unhandled parameter file format: .md"),
        "{err}"
    );
    // A missing file is NOT_FOUND whatever its extension: the reference
    // opens the file before it looks at the name.
    let (_, err, code) = run("m.vmfb", "main", "4xf32=1,2,3,4", &["model=absent.bin"]);
    assert_eq!(code, 1);
    assert!(err.contains("NOT_FOUND; --parameters=model="), "{err}");
    // An archive cut short is OUT_OF_RANGE, as IREE's readers say; a bad
    // magic INVALID_ARGUMENT.
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(file("wb.irpa")).unwrap();
    let short = dir.path().join("short.irpa");
    std::fs::write(&short, &bytes[..50]).unwrap();
    let mut bad = bytes.clone();
    bad[0] = b'X';
    let bad_magic = dir.path().join("bad.irpa");
    std::fs::write(&bad_magic, &bad).unwrap();
    for (path, code_name) in [(&short, "OUT_OF_RANGE"), (&bad_magic, "INVALID_ARGUMENT")] {
        let (_, err, code) = irvm(&[
            "run".into(),
            format!("--module={}", file("m.vmfb")),
            "--function=main".into(),
            "--input=4xf32=1,2,3,4".into(),
            format!("--parameters=model={}", path.display()),
            format!("--parameters={}", file("wb.irpa")),
        ]);
        assert_eq!(code, 1);
        assert!(
            err.starts_with(&format!("irvm run: {code_name}; --parameters=model=")),
            "{err}"
        );
    }
    // A bad mode is refused when archives are opened.
    let mut args: Vec<String> = vec![
        "run".into(),
        format!("--module={}", file("m.vmfb")),
        "--function=main".into(),
        "--input=4xf32=1,2,3,4".into(),
        format!("--parameters={}", file("wb.irpa")),
        "--parameter_mode=mmapped".into(),
    ];
    let (_, err, code) = irvm(&args);
    assert_eq!(code, 1);
    assert!(
        err.contains("unrecognized --parameter_mode= value 'mmapped'"),
        "{err}"
    );
    args[5] = "--parameter_mode=preload".into();
    args.push(format!("--parameters=model={}", file("wb.irpa")));
    let (out, err, code) = irvm(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tensor(&out), "4xf32=1.75 5.5 -8.25 17");
}

#[test]
fn archives_are_opened_only_for_programs_that_import_io_parameters() {
    // The reference ignores --parameters for other programs.
    let add = repo().join("tests/models/add.vmfb");
    let args: Vec<String> = vec![
        "run".into(),
        format!("--module={}", add.display()),
        "--parameters=absent.irpa".into(),
    ];
    let (_, err, code) = irvm(&args);
    assert!(!err.contains("absent.irpa"), "{err}");
    assert_ne!(code, 101);
}

#[test]
fn results_match_iree_run_module() {
    let Some(dir) = crate::common::peer_bin(&["iree-run-module"]) else {
        crate::common::report_missing_peer();
        return;
    };
    let reference: PathBuf = dir.join("iree-run-module");
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "m.vmfb",
            "main",
            "4xf32=1,2,3,4",
            &["model=wb.safetensors", "wb.safetensors"],
        ),
        (
            "m.vmfb",
            "main",
            "4xf32=1,2,3,4",
            &["model=wb.irpa", "un.irpa", "wb.irpa"],
        ),
        (
            "m.vmfb",
            "main",
            "4xf32=1,2,3,4",
            &["model=model.irpa", "un.irpa"],
        ),
        ("g.vmfb", "step", "4xf32=1,1,1,1", &["wb.irpa"]),
    ];
    for (module, function, input, params) in cases {
        let (ours, err, code) = run(module, function, input, params);
        assert_eq!(code, 0, "{err}");
        let mut cmd = std::process::Command::new(&reference);
        cmd.arg(format!("--module={}", file(module)))
            .arg(format!("--function={function}"))
            .arg(format!("--input={input}"));
        for p in params.iter() {
            let (scope, name) = match p.split_once('=') {
                Some((s, n)) => (format!("{s}="), n),
                None => (String::new(), *p),
            };
            cmd.arg(format!("--parameters={scope}{}", file(name)));
        }
        let theirs = cmd.output().expect("iree-run-module runs");
        assert_eq!(
            ours,
            String::from_utf8_lossy(&theirs.stdout),
            "{module} {params:?}"
        );
    }
}

/// Through the Rust API, as `examples/run_with_parameters.rs` does: an
/// index over a mapped archive, registered in a context. Another process
/// then truncates the archive under the mapping; the next call reads the
/// lost pages as zeros instead of dying of SIGBUS, and
/// `ParameterIndex::check_intact` reports DATA_LOSS naming the file.
#[test]
fn an_archive_truncated_while_mapped_is_data_loss_not_a_crash() {
    use std::sync::Arc;

    use irvm::{Context, Module, StatusCode, TypeRegistry};
    use irvm_hal::{hal_module, BufferView};
    use irvm_io_parameters::archive::irpa_writer::{ArchiveWriter, Contents};
    use irvm_io_parameters::{io_parameters_module, ParameterIndex};

    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (w, b) = (f32s(&[1.5, 2.5, -3.0, 4.0]), f32s(&[0.25, 0.5, 0.75, 1.0]));
    // 64 KiB ahead of `w` and `b`, so their bytes lie past the first page.
    let mut writer = ArchiveWriter::new();
    writer
        .add_data("pad", b"", 64, 64 << 10, Contents::Zeros)
        .unwrap();
    writer
        .add_data("w", b"", 64, 16, Contents::Bytes(&w))
        .unwrap();
    writer
        .add_data("b", b"", 64, 16, Contents::Bytes(&b))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.irpa");
    writer
        .write(&mut std::fs::File::create(&path).unwrap())
        .unwrap();

    let mut index = ParameterIndex::new();
    index.add_file("model", &path).unwrap();
    index.add_file("", &path).unwrap();
    let index = Arc::new(index);
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module().unwrap()).unwrap();
    ctx.register_host_module(&io_parameters_module(index.clone()).unwrap())
        .unwrap();
    ctx.register_module(Module::from_file(file("m.vmfb")).unwrap())
        .unwrap();
    let main = ctx.function("module.main").unwrap();
    let call = |ctx: &mut Context| {
        let x = BufferView::from_slice(&[4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let results = ctx.invoke(&main, &[x.into_value()]).unwrap();
        BufferView::from_value(&results[0])
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    assert_eq!(call(&mut ctx), [1.75, 5.5, -8.25, 17.0]);
    index.check_intact().unwrap();

    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(4096)
        .unwrap();
    // The weights now read as zeros: x * 0 + 0.
    assert_eq!(call(&mut ctx), [0.0; 4]);
    let e = index.check_intact().unwrap_err();
    assert_eq!(e.code(), StatusCode::DataLoss);
    let text = e.to_string();
    assert!(
        text.contains("big.irpa") && text.contains("changed while in use"),
        "{text}"
    );
}

/// Found by an outside attack: an argument that is not UTF-8 panicked
/// (exit 101) in every command, and a FIFO given as an archive blocked
/// forever in `open` (as it does iree-run-module).
#[test]
fn arguments_that_are_not_utf8_and_fifos_are_refused_cleanly() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let base = [
        OsString::from("run"),
        OsString::from(format!("--module={}", file("m.vmfb"))),
        OsString::from("--function=main"),
        OsString::from("--input=4xf32=1"),
    ];
    let mut args = base.to_vec();
    args.push(OsString::from_vec(b"--parameters=\xff.irpa".to_vec()));
    let (_, err, code) = irvm(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("argument 5 is not valid UTF-8: '--parameters=\\xff.irpa'"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.irpa");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo is not available; the FIFO case is skipped");
        return;
    }
    let mut args = base.to_vec();
    args.push(OsString::from(format!("--parameters={}", fifo.display())));
    let (_, err, code) = irvm(&args);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let (_, err, code) = irvm(&["params", "dump", &fifo.display().to_string()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

/// `irvm dbg` stopped at a breakpoint while another process truncates the
/// archive: `continue` ends the call with DATA_LOSS naming the file, not
/// with results computed from zeros (nor SIGBUS).
#[test]
fn dbg_reports_an_archive_that_changed_during_the_session() {
    use std::io::{BufRead, Write};
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.irpa");
    let (_, err, code) = irvm(&[
        "params".to_string(),
        "create".into(),
        "--quiet".into(),
        format!("--output={}", big.display()),
        "--data=pad=16384xf32".into(),
        "--data=w=4xf32=1.5".into(),
        "--data=b=4xf32=0.25".into(),
    ]);
    assert_eq!(code, 0, "{err}");
    let mut child = std::process::Command::new(crate::common::cli::irvm_bin())
        .args([
            "dbg".to_string(),
            format!("--module={}", file("m.vmfb")),
            "--function=main".into(),
            "--input=4xf32=1,2,3,4".into(),
            format!("--parameters=model={}", big.display()),
            format!("--parameters={}", big.display()),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("irvm dbg starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    stdin.write_all(b"break main\nrun\n").unwrap();
    stdin.flush().unwrap();
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
        if line.starts_with("Breakpoint 1, main") {
            break;
        }
    }
    std::fs::File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(4096)
        .unwrap();
    stdin.write_all(b"continue\nquit\n").unwrap();
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.code().is_some(), "{status:?}");
    assert!(rest.contains("[main failed]"), "{rest}");
    assert!(
        rest.contains("DATA_LOSS; ") && rest.contains("big.irpa: the parameter file changed"),
        "{rest}"
    );
    assert!(!rest.contains("result[0]"), "{rest}");
}
