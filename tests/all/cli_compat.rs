//! `irvm run` as a drop-in for `iree-run-module` (issue 16): each case is
//! one command line given to both tools. The expected stdout and exit
//! status are recorded here from iree-run-module 3.13; with the reference
//! tools installed, the test also runs iree-run-module and compares live.

use crate::common;
use crate::common::cli::irvm_bin;
use crate::common::paths::repo_file;

use std::path::Path;
use std::process::{Command, Stdio};

/// stdout and exit status of `program` with `args`, stdin from `stdin`.
fn run(program: &Path, args: &[String], stdin: Option<&str>) -> (String, i32) {
    let mut cmd = Command::new(program);
    cmd.args(args).stderr(Stdio::null());
    if let Some(path) = stdin {
        cmd.stdin(std::fs::File::open(path).unwrap());
    }
    let out = cmd.output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// (what, arguments, stdin file, expected stdout, expected status).
type Case<'a> = (&'a str, Vec<String>, Option<String>, &'a str, i32);

const ADD: &str = "EXEC @add\nresult[0]: hal.buffer_view\n2x3xf32=[3 3 3][3 3 3]\n";

#[test]
fn command_lines_behave_as_with_iree_run_module() {
    let add = format!("--module={}", repo_file("tests/models/add.vmfb"));
    let inputs = || vec!["--input=2x3xf32=1".to_string(), "--input=2x3xf32=2".into()];
    let dir = tempfile::tempdir().unwrap();
    let flagfile = dir.path().join("flags");
    std::fs::write(
        &flagfile,
        format!("# recorded flags\n{add}\n--function=nope\n"),
    )
    .unwrap();
    // A module with several exports, assembled by irvm for both tools.
    let several = dir.path().join("embedding.vmfb");
    let assembled = Command::new(env!("CARGO_BIN_EXE_irvm"))
        .args(["as", "-o"])
        .arg(&several)
        .arg(repo_file("tests/data/embedding.vmasm"))
        .status()
        .unwrap();
    assert!(assembled.success());
    let with = |mut head: Vec<String>, tail: Vec<String>| {
        head.extend(tail);
        head
    };
    let cases: Vec<Case> = vec![
        (
            "device and runtime flags of other drivers, underscore spellings",
            with(
                vec![
                    add.clone(),
                    "--function=add".into(),
                    "--trace_execution=false".into(),
                    "--cuda_use_streams=true".into(),
                    "--task_topology_max_group_count=2".into(),
                    "--module_mode=mmap".into(),
                    "--device=local-task".into(),
                ],
                inputs(),
            ),
            None,
            ADD,
            0,
        ),
        (
            "a flagfile, its --function overridden by a later flag",
            with(
                vec![
                    format!("--flagfile={}", flagfile.display()),
                    "--function=add".into(),
                ],
                inputs(),
            ),
            None,
            ADD,
            0,
        ),
        (
            "no --function: the one exported function",
            with(vec![add.clone()], inputs()),
            None,
            ADD,
            0,
        ),
        (
            "a quoted --function, with spaces around the quotes",
            with(vec![add.clone(), "--function= \"add\" ".into()], inputs()),
            None,
            ADD,
            0,
        ),
        (
            "an empty quoted --function is a name, not the default",
            with(vec![add.clone(), "--function=\"\"".into()], inputs()),
            None,
            "",
            1,
        ),
        (
            "quotes inside the quotes stay",
            with(vec![add.clone(), "--function=\"\"add\"\"".into()], inputs()),
            None,
            "",
            1,
        ),
        (
            "the module on stdin",
            with(vec!["--module=-".into(), "--function=add".into()], inputs()),
            Some(repo_file("tests/models/add.vmfb")),
            ADD,
            0,
        ),
        (
            "no --function with several exports",
            vec![format!("--module={}", several.display())],
            None,
            "",
            1,
        ),
        (
            "too few inputs: EXEC is printed first",
            vec![
                add.clone(),
                "--function=add".into(),
                "--input=2x3xf32=1".into(),
            ],
            None,
            "EXEC @add\n",
            1,
        ),
        (
            "--output_max_element_count cuts the printed tensor",
            with(
                vec![
                    add.clone(),
                    "--function=add".into(),
                    "--output_max_element_count=2".into(),
                ],
                inputs(),
            ),
            None,
            "EXEC @add\nresult[0]: hal.buffer_view\n2x3xf32=[3 3...][...]\n",
            0,
        ),
        (
            "a negative --output_max_element_count sets no limit",
            with(
                vec![
                    add.clone(),
                    "--function=add".into(),
                    "--output_max_element_count=-1".into(),
                ],
                inputs(),
            ),
            None,
            ADD,
            0,
        ),
        (
            "--expected_output: INF matches INF, -0 matches 0 (approximate mode)",
            vec![
                add.clone(),
                "--function=add".into(),
                "--input=2x3xf32=inf,-inf,-0,1,2,3".into(),
                "--input=2x3xf32=0".into(),
                "--expected_output=2x3xf32=inf,-inf,0,1,2,3".into(),
            ],
            None,
            "EXEC @add\n[SUCCESS] all function outputs matched their expected values.\n",
            0,
        ),
        (
            "--expected_output: an expected INF takes no finite value, nor -INF",
            vec![
                add.clone(),
                "--function=add".into(),
                "--input=2x3xf32=1,-inf,1e38,1,2,3".into(),
                "--input=2x3xf32=0".into(),
                "--expected_output=2x3xf32=1,inf,inf,1,2,3".into(),
            ],
            None,
            "EXEC @add\n[FAILED] result[0]: element at index 1 (-INF) does not match the \
             expected (INF); expected that the view is equal to contents of a view of 2x3xf32\n  \
             expected:\n2x3xf32=[1 INF INF][1 2 3]\n  actual:\n2x3xf32=[1 -INF 1E+38][1 2 3]\n",
            1,
        ),
        (
            "--expected_output: an expected INF takes no finite value",
            vec![
                add.clone(),
                "--function=add".into(),
                "--input=2x3xf32=1e38,1,1,1,2,3".into(),
                "--input=2x3xf32=0".into(),
                "--expected_output=2x3xf32=inf,1,1,1,2,3".into(),
            ],
            None,
            "EXEC @add\n[FAILED] result[0]: element at index 0 (1E+38) does not match the \
             expected (INF); expected that the view is equal to contents of a view of 2x3xf32\n  \
             expected:\n2x3xf32=[INF 1 1][1 2 3]\n  actual:\n2x3xf32=[1E+38 1 1][1 2 3]\n",
            1,
        ),
        (
            "--expected_output: a mismatch prints both views whatever \
             --output_max_element_count says",
            vec![
                add.clone(),
                "--function=add".into(),
                "--input=2x3xf32=1".into(),
                "--input=2x3xf32=2".into(),
                "--expected_output=2x3xf32=3,3,3,3,3,4".into(),
                "--output_max_element_count=2".into(),
            ],
            None,
            "EXEC @add\n[FAILED] result[0]: element at index 5 (3) does not match the \
             expected (4); expected that the view is equal to contents of a view of 2x3xf32\n  \
             expected:\n2x3xf32=[3 3 3][3 3 4]\n  actual:\n2x3xf32=[3 3 3][3 3 3]\n",
            1,
        ),
        (
            "--expected_output: equal values match under a negative tolerance",
            vec![
                add.clone(),
                "--function=add".into(),
                "--input=2x3xf32=1".into(),
                "--input=2x3xf32=2".into(),
                "--expected_output=2x3xf32=3".into(),
                "--expected_f32_threshold=-1".into(),
                "--expected_rtol=nan".into(),
            ],
            None,
            "EXEC @add\n[SUCCESS] all function outputs matched their expected values.\n",
            0,
        ),
        (
            "a boolean flag with an empty value is true",
            with(
                vec![
                    add.clone(),
                    "--function=add".into(),
                    "--print_statistics=".into(),
                ],
                inputs(),
            ),
            None,
            ADD,
            0,
        ),
    ];
    let irvm = Path::new(env!("CARGO_BIN_EXE_irvm"));
    let reference = common::peer_bin(&["iree-run-module"]).map(|b| b.join("iree-run-module"));
    if reference.is_none() {
        common::report_missing_peer();
    }
    for (what, args, stdin, stdout, status) in &cases {
        let mut ours_args = vec!["run".to_string()];
        ours_args.extend(args.iter().cloned());
        let ours = run(irvm, &ours_args, stdin.as_deref());
        if let Some(reference) = &reference {
            let theirs = run(reference, args, stdin.as_deref());
            assert_eq!(ours, theirs, "{what}: irvm vs iree-run-module");
        }
        assert_eq!(ours, (stdout.to_string(), *status), "{what}");
    }
}

// ---------------------------------------------------------------------------
// Recorded reference output. `tests/data/cli_compat.expected` holds, for
// every case below, the stdout and exit status of iree-run-module 3.13 (and,
// where a case checks it, the core of its error message), recorded with
// `IRVM_RECORD=1 cargo test --release --test all cli_compat` on a machine with
// the reference tools. Each case runs irvm and compares with the record;
// with the reference tools installed it also runs them and compares live.
// ---------------------------------------------------------------------------

const RECORD: &str = "tests/data/cli_compat.expected";

/// What a tool did: stdout, stderr, exit status (`None`: killed by a
/// signal).
#[derive(Debug)]
struct Out {
    stdout: String,
    stderr: String,
    status: Option<i32>,
}

fn run_tool(program: &Path, args: &[String]) -> Out {
    let out = Command::new(program).args(args).output().unwrap();
    Out {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code(),
    }
}

fn peer(tool: &str) -> Option<std::path::PathBuf> {
    common::peer_bin(&[tool]).map(|b| b.join(tool))
}

/// The core of a reference error: its first status line without the
/// `c/path.c:NNN: ` prefix and without the trailing function declaration.
fn message_core(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.contains("; ") || l.contains(": "))
        .unwrap_or("");
    let line = match line.find(": ") {
        Some(k) if line[..k].contains(".c:") || line[..k].contains(".cc:") => &line[k + 2..],
        _ => line,
    };
    let line = match line.rfind("; `") {
        Some(k) if line.ends_with('`') => &line[..k],
        _ => line,
    };
    // The reference's outermost annotation names its own setup step.
    line.trim_end_matches("; creating run context").to_string()
}

/// One recorded case: stdout, status and (when checked) the message core.
#[derive(Clone, Debug, Default, PartialEq)]
struct Recorded {
    stdout: String,
    status: i32,
    message: Option<String>,
}

fn read_record() -> std::collections::BTreeMap<String, Recorded> {
    let text = std::fs::read_to_string(repo_file(RECORD)).unwrap_or_default();
    let mut cases = std::collections::BTreeMap::new();
    let mut key: Option<String> = None;
    let mut current = Recorded::default();
    for line in text.split_inclusive('\n') {
        if let Some(k) = line.strip_prefix("### case ") {
            key = Some(k.trim_end().to_string());
            current = Recorded::default();
        } else if let Some(s) = line.strip_prefix("### status ") {
            current.status = s.trim().parse().unwrap();
            if let Some(k) = &key {
                cases.insert(k.clone(), current.clone());
            }
        } else if let Some(m) = line.strip_prefix("### message ") {
            current.message = Some(m.trim_end().to_string());
            if let Some(k) = &key {
                cases.insert(k.clone(), current.clone());
            }
        } else {
            current.stdout.push_str(line);
        }
    }
    cases
}

/// Recording (`IRVM_RECORD=1`): cases are collected and written at the end
/// of each test into the record, replacing those of the same key.
fn recording() -> bool {
    std::env::var_os("IRVM_RECORD").is_some()
}

fn write_record(new: &std::collections::BTreeMap<String, Recorded>) {
    let _guard = RECORD_LOCK.lock().unwrap();
    let mut all = read_record();
    all.extend(new.clone());
    let mut text = String::new();
    for (key, r) in &all {
        assert!(
            r.stdout.is_empty() || r.stdout.ends_with('\n'),
            "{key}: stdout must end with a newline"
        );
        text.push_str(&format!(
            "### case {key}\n{}### status {}\n",
            r.stdout, r.status
        ));
        if let Some(m) = &r.message {
            text.push_str(&format!("### message {m}\n"));
        }
    }
    std::fs::write(repo_file(RECORD), text).unwrap();
}

static RECORD_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A case: a key, the arguments both tools take (irvm's after `run`), and
/// whether the error message is compared too.
struct Probe {
    key: String,
    args: Vec<String>,
    message: bool,
}

/// Runs `cases` through irvm (and the reference when installed): irvm's
/// stdout and status must equal the record's and the reference's; with
/// `message`, irvm's stderr must contain the reference's message core.
/// `rewrite` maps a case's arguments to irvm's (the same module assembled
/// by irvm instead of iree-as-module); every variant must print the same.
/// Maps a case's arguments to one tool's (modules placed).
type Variant<'a> = &'a dyn Fn(&[String]) -> Vec<String>;

fn check_cases(cases: &[Probe], variants: &[Variant]) {
    let reference = peer("iree-run-module");
    if reference.is_none() {
        common::report_missing_peer();
    }
    let record = read_record();
    let mut recorded = std::collections::BTreeMap::new();
    let mut failures = Vec::new();
    for case in cases {
        let mut want = record.get(&case.key).cloned();
        if let Some(reference) = &reference {
            for variant in variants {
                let args = variant(&case.args);
                let theirs = run_tool(reference, &args);
                let live = Recorded {
                    stdout: theirs.stdout.clone(),
                    status: theirs.status.unwrap_or(-1),
                    message: case.message.then(|| message_core(&theirs.stderr)),
                };
                if recording() {
                    recorded.insert(case.key.clone(), live.clone());
                    want = Some(live.clone());
                }
                if want.as_ref() != Some(&live) {
                    failures.push(format!(
                        "{}: iree-run-module {args:?} now gives {live:?}, recorded {want:?}",
                        case.key
                    ));
                }
            }
        }
        let Some(want) = want else {
            failures.push(format!("{}: not recorded in {RECORD}", case.key));
            continue;
        };
        for variant in variants {
            let mut args = vec!["run".to_string()];
            args.extend(variant(&case.args));
            let ours = run_tool(irvm_bin(), &args);
            let got = (ours.stdout.as_str(), ours.status.unwrap_or(-1));
            if got != (want.stdout.as_str(), want.status) {
                failures.push(format!(
                    "{}: irvm {args:?}\n  stdout {:?} status {}\n  want   {:?} status {}\n  stderr {}",
                    case.key, got.0, got.1, want.stdout, want.status, ours.stderr
                ));
            }
            if let Some(m) = &want.message {
                if !ours.stderr.contains(m.as_str()) {
                    failures.push(format!(
                        "{}: irvm's message {:?} lacks the reference's {m:?}",
                        case.key, ours.stderr
                    ));
                }
            }
        }
    }
    if recording() && !recorded.is_empty() {
        write_record(&recorded);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `tests/data/NAME.vmasm` assembled into `dir` by irvm, and by
/// iree-as-module when installed: (irvm's, iree-as-module's).
fn assemble(name: &str, dir: &Path) -> (String, Option<String>) {
    let source = repo_file(&format!("tests/data/{name}.vmasm"));
    let ours = dir.join(format!("{name}.irvm.vmfb"));
    let status = Command::new(irvm_bin())
        .args(["as", "-o"])
        .arg(&ours)
        .arg(&source)
        .status()
        .unwrap();
    assert!(status.success(), "irvm as {source}");
    let theirs = peer("iree-as-module").map(|as_module| {
        let path = dir.join(format!("{name}.iree.vmfb"));
        let status = Command::new(as_module)
            .arg(format!("--output={}", path.display()))
            .arg(&source)
            .status()
            .unwrap();
        assert!(status.success(), "iree-as-module {source}");
        path.display().to_string()
    });
    (ours.display().to_string(), theirs)
}

/// Replaces the placeholder `{NAME}` in `args` by `path`.
fn place(args: &[String], name: &str, path: &str) -> Vec<String> {
    args.iter()
        .map(|a| a.replace(&format!("{{{name}}}"), path))
        .collect()
}

fn probe(key: impl Into<String>, args: &[&str]) -> Probe {
    Probe {
        key: key.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        message: false,
    }
}

fn probe_with_message(key: impl Into<String>, args: &[&str]) -> Probe {
    Probe {
        message: true,
        ..probe(key, args)
    }
}

/// Every value kind a function can return prints as iree-run-module prints
/// it: i32, i64, f32 and f64 (NaN, -NaN, inf, -0, denormals, %g's
/// exponents), null refs, empty lists, typed lists (i8/i16 narrowing),
/// variant lists, lists three deep, lists holding nulls, buffers (empty
/// too), and several results of mixed kinds. The module is assembled by
/// both assemblers and both results run in both tools.
#[test]
fn every_value_kind_prints_as_iree_run_module_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = assemble("value_kinds", dir.path());
    let cases: Vec<Probe> = [
        "ints",
        "f32s",
        "f64s",
        "null_buffer",
        "null_list",
        "empty_lists",
        "list_i32",
        "typed_lists",
        "mixed",
        "nested",
        "with_null",
        "several",
    ]
    .iter()
    .map(|f| {
        probe(
            format!("value_kinds/{f}"),
            &["--module={M}", &format!("--function={f}")],
        )
    })
    .collect();
    let with_ours = |a: &[String]| place(a, "M", &ours);
    let with_theirs = |a: &[String]| place(a, "M", theirs.as_deref().unwrap_or(&ours));
    check_cases(&cases, &[&with_ours, &with_theirs]);
}

/// Buffer views print as the reference prints them: every element type
/// (i1 refused as the reference refuses it, i8, ui8, si16, ui32, i64, f16,
/// bf16, f32 NaN/inf/denormal, f64), 0-d, empty (0x3, 2x0) and 1x1x1x1
/// shapes, `--output_max_element_count` cuts (also of views inside lists),
/// views inside variant and typed lists, null views (`--input=(null)`), and
/// `(ignored)` expected outputs for refs.
#[test]
fn buffer_views_print_as_iree_run_module_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = assemble("value_views", dir.path());
    let add = format!("--module={}", repo_file("tests/models/add.vmfb"));
    // Every encoding of the 8-bit float types, read as raw bytes.
    let every_byte = dir.path().join("every_byte.bin");
    std::fs::write(&every_byte, (0..=255u8).collect::<Vec<u8>>()).unwrap();
    let npy_output = format!("--output=@{}", dir.path().join("f8.npy").display());
    let every = |t: &str| format!("--input=256x{t}=@{}", every_byte.display());
    let (e4m3fn, e5m2, e4m3fnuz, e5m2fnuz, e8m0fnu) = (
        every("f8E4M3FN"),
        every("f8E5M2"),
        every("f8E4M3FNUZ"),
        every("f8E5M2FNUZ"),
        every("f8E8M0FNU"),
    );
    let rows: &[(&str, &[&str])] = &[
        ("pass", &["--input=f32=5"]),
        ("pass", &["--input=0x3xf32="]),
        ("pass", &["--input=2x0xi32="]),
        ("pass", &["--input=3xi1=1,0,1"]),
        ("pass", &["--input=2x2xi8=[-1,2][127,-128]"]),
        ("pass", &["--input=4xui8=0,255,128,7"]),
        ("pass", &["--input=2xsi16=-3,4"]),
        ("pass", &["--input=2xui32=4294967295,1"]),
        ("pass", &["--input=2xi64=-9223372036854775808,5"]),
        ("pass", &["--input=3xf16=1.5,-0,65504"]),
        ("pass", &["--input=2xbf16=1.5,3.14"]),
        ("pass", &["--input=2xf64=0.1,1e300"]),
        ("pass", &["--input=1x1x1x1xf32=7"]),
        ("pass", &["--input=3xf32=nan,-inf,1e-40"]),
        ("pass", &["--input=40x40xf32=2"]),
        (
            "pass",
            &["--input=40x40xf32=2", "--output_max_element_count=5"],
        ),
        (
            "pass",
            &["--input=2x3xf32=1", "--output_max_element_count=0"],
        ),
        ("two", &["--input=2xi32=1,2", "--input=f64=2.5"]),
        ("wrap", &["--input=2x2xf32=1,2,3,4"]),
        (
            "wrap",
            &["--input=40xi32=1", "--output_max_element_count=3"],
        ),
        ("wrap", &["--input=0xf32="]),
        ("wrap", &["--input=(null)"]),
        ("wrap", &["--input=(ignored)"]),
        ("pass", &["--input=(null)"]),
        (
            "wrap",
            &[
                "--input=2xf32=1",
                "--expected_output=(null)",
                "--expected_output=(ignored)",
            ],
        ),
        (
            "two",
            &[
                "--input=2xf32=1",
                "--input=i8=3",
                "--expected_output=i8=3",
                "--expected_output=2xf32=1",
            ],
        ),
        // The 8-bit float types: rounding, overflow, NaN, -0 and
        // subnormals as the reference converts them, and every encoding
        // printed.
        (
            "pass",
            &["--input=8xf8E4M3FN=448,464,465,-0,0.3,1e-10,0.0009765625,0.00097657"],
        ),
        (
            "pass",
            &["--input=6xf8E5M2=57344,61440,1e6,-inf,nan,1.5e-5"],
        ),
        ("pass", &["--input=5xf8E4M3FNUZ=240,248,-0,nan,0.001"]),
        ("pass", &["--input=4xf8E5M2FNUZ=57344,-1,7.6e-6,inf"]),
        ("pass", &["--input=7xf8E8M0FNU=3,0.75,-1,0,1e-10,3e38,nan"]),
        ("pass", &[&e4m3fn, "--output_max_element_count=256"]),
        ("pass", &[&e5m2, "--output_max_element_count=256"]),
        ("pass", &[&e4m3fnuz, "--output_max_element_count=256"]),
        ("pass", &[&e5m2fnuz, "--output_max_element_count=256"]),
        ("pass", &[&e8m0fnu, "--output_max_element_count=256"]),
        // Compared exactly: 1.1 is 1 in f8E5M2, 1.25 its neighbour.
        (
            "two",
            &[
                "--input=2xf8E5M2=1,2",
                "--input=f32=0",
                "--expected_output=f32=0",
                "--expected_output=2xf8E5M2=1.1,2",
            ],
        ),
        (
            "two",
            &[
                "--input=2xf8E5M2=1,2",
                "--input=f32=0",
                "--expected_output=f32=0",
                "--expected_output=2xf8E5M2=1.25,2",
            ],
        ),
        // NumPy has no 8-bit floats: UNIMPLEMENTED, as there.
        (
            "pass",
            &["--input=2xf8E4M3FN=1,2", &npy_output, "--output="],
        ),
    ];
    let cases: Vec<Probe> = rows
        .iter()
        .enumerate()
        .map(|(k, (f, inputs))| {
            let mut args = vec![add.as_str(), "--module={M}"];
            let function = format!("--function={f}");
            args.push(&function);
            args.extend(inputs.iter());
            probe(format!("value_views/{k:02}_{f}"), &args)
        })
        .collect();
    let with_ours = |a: &[String]| place(a, "M", &ours);
    let with_theirs = |a: &[String]| place(a, "M", theirs.as_deref().unwrap_or(&ours));
    check_cases(&cases, &[&with_ours, &with_theirs]);
}

/// `--input` scalars are read as the reference reads them (strtol/strtod:
/// hex, octal, hex floats, i32 truncation, leading spaces, trailing junk,
/// inf/nan, `(null)`), refused where it refuses them with its message, and
/// too many or too few inputs fail as in the reference: one too many while
/// parsing, before `EXEC`; one too few when invoking, after it.
#[test]
fn scalar_inputs_and_input_counts_as_iree_run_module() {
    let dir = tempfile::tempdir().unwrap();
    let (ours, _) = assemble("value_kinds", dir.path());
    let rows: &[(&str, &str)] = &[
        ("echo_i32", "0x1F"),
        ("echo_i32", "-0x10"),
        ("echo_i32", "017"),
        ("echo_i32", "4294967297"),
        ("echo_i32", "-2147483649"),
        ("echo_i32", "   42"),
        ("echo_i32", "42   "),
        ("echo_i32", "5abc"),
        ("echo_i32", "+7"),
        ("echo_i32", "1.9"),
        ("echo_i32", "(null)"),
        ("echo_i32", "abc"),
        ("echo_i32", "1234567890123456"),
        ("echo_i64", "9223372036854775807"),
        ("echo_i64", "0x7fffffffffffffff"),
        ("echo_i64", "99999999999999999999"),
        ("echo_i64", "-010"),
        ("echo_f32", "0x1p3"),
        ("echo_f32", "0x1.8p1"),
        ("echo_f32", "1e3xyz"),
        ("echo_f32", " -inf"),
        ("echo_f32", "nan"),
        ("echo_f32", "1e-50"),
        ("echo_f32", "3.4028236e38"),
        ("echo_f32", ".5"),
        ("echo_f64", "0x1p-1074"),
        ("echo_f64", "1e-400"),
        ("echo_f64", "-0"),
        ("echo_f64", "1e308"),
        ("echo_f64", "(ignored)"),
        ("echo_f64", "x1"),
    ];
    let mut cases: Vec<Probe> = rows
        .iter()
        .map(|(f, input)| {
            probe_with_message(
                format!("scalar/{f}/{input:?}"),
                &[
                    "--module={M}",
                    &format!("--function={f}"),
                    &format!("--input={input}"),
                ],
            )
        })
        .collect();
    cases.push(probe_with_message(
        "count/too_many_scalars",
        &[
            "--module={M}",
            "--function=echo_i32",
            "--input=1",
            "--input=2",
        ],
    ));
    cases.push(probe_with_message(
        "count/too_few_scalars",
        &["--module={M}", "--function=echo_f64"],
    ));
    let add = format!("--module={}", repo_file("tests/models/add.vmfb"));
    cases.push(probe_with_message(
        "count/too_many_tensors",
        &[
            &add,
            "--input=2x3xf32=1",
            "--input=2x3xf32=1",
            "--input=2x3xf32=1",
        ],
    ));
    cases.push(probe_with_message(
        "count/too_few_tensors",
        &[&add, "--input=2x3xf32=1"],
    ));
    cases.push(probe_with_message(
        "count/bad_input_before_the_extra_one",
        &[
            &add,
            "--input=2x3xf32=1",
            "--input=2x3xq32=1",
            "--input=2x3xf32=1",
        ],
    ));
    let with_ours = |a: &[String]| place(a, "M", &ours);
    check_cases(&cases, &[&with_ours]);
}

/// Two `--module` flags naming modules alike: iree-run-module registers
/// both; `--function` looks in the last, and an import resolves to the
/// newest module of that name registered before the importer.
#[test]
fn modules_of_one_name_as_iree_run_module_links_them() {
    let dir = tempfile::tempdir().unwrap();
    let (one, _) = assemble("shadow_1", dir.path());
    let (two, _) = assemble("shadow_2", dir.path());
    let (app, _) = assemble("shadow_app", dir.path());
    let cases = vec![
        probe(
            "shadow/last_wins",
            &["--module={1}", "--module={2}", "--function=which"],
        ),
        probe(
            "shadow/same_file_twice",
            &["--module={1}", "--module={1}", "--function=which"],
        ),
        probe(
            "shadow/earlier_hidden",
            &["--module={1}", "--module={2}", "--function=only1"],
        ),
        probe(
            "shadow/later_found",
            &["--module={1}", "--module={2}", "--function=only2"],
        ),
        probe(
            "shadow/import_newest",
            &["--module={1}", "--module={2}", "--module={A}"],
        ),
        probe(
            "shadow/import_newest_reversed",
            &["--module={2}", "--module={1}", "--module={A}"],
        ),
        probe(
            "shadow/import_at_registration",
            &[
                "--module={1}",
                "--module={A}",
                "--module={2}",
                "--function=which",
            ],
        ),
        probe("shadow/several_exports", &["--module={1}", "--module={2}"]),
    ];
    let with = |a: &[String]| place(&place(&place(a, "1", &one), "2", &two), "A", &app);
    check_cases(&cases, &[&with]);
}

/// `--list_drivers`, `--list_devices[=D]` and `--dump_devices[=D]` answer
/// without a module; irvm lists its two CPU drivers (the device lines are
/// the reference's, the driver descriptions irvm's own); without any
/// `--module` the reference's error.
#[test]
fn device_queries_answer_without_a_module() {
    let cases = vec![
        probe("query/list_devices", &["--list_devices"]),
        probe(
            "query/list_devices_local_task",
            &["--list_devices=local-task"],
        ),
        probe(
            "query/dump_devices_local_sync",
            &["--dump_devices=local-sync"],
        ),
        probe(
            "query/dump_devices_local_task",
            &["--dump_devices=local-task"],
        ),
        probe_with_message("query/no_module", &[]),
        probe("query/list_devices_unknown", &["--list_devices=bogus"]),
    ];
    let same = |a: &[String]| a.to_vec();
    check_cases(&cases, &[&same]);
    let out = run_tool(irvm_bin(), &["run".into(), "--list_drivers".into()]);
    assert_eq!(out.status, Some(0));
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[1], "# Available HAL drivers", "{}", out.stdout);
    assert!(lines[5].starts_with("      local-sync: "), "{}", out.stdout);
    assert!(lines[6].starts_with("      local-task: "), "{}", out.stdout);
    if let Some(reference) = peer("iree-run-module") {
        let theirs = run_tool(&reference, &["--list_drivers".into()]);
        let head: Vec<&str> = theirs.stdout.lines().take(5).collect();
        assert_eq!(lines[..5], head[..], "the header");
        for name in ["local-sync", "local-task"] {
            let prefix = format!("{name:>16}: ");
            assert!(theirs.stdout.lines().any(|l| l.starts_with(&prefix)));
        }
    }
}

/// The flags `--help` of a reference tool lists: (name, default value as
/// the help shows it, without quotes; `None` for flags shown commented
/// out, which have no default). Google Benchmark's flags come from the
/// usage block iree-benchmark-module prints after its own.
fn flags_of_help(help: &str) -> Vec<(String, Option<String>)> {
    let mut flags: Vec<(String, Option<String>)> = Vec::new();
    // A flag may be named in another's comment first (`# --x= instead`):
    // its own uncommented line gives the default.
    let mut add =
        |name: &str, value: Option<String>| match flags.iter_mut().find(|(n, _)| n == name) {
            Some(known) => {
                if known.1.is_none() {
                    known.1 = value;
                }
            }
            None => flags.push((name.to_string(), value)),
        };
    for line in help.lines() {
        let (commented, rest) = match line.strip_prefix("# --") {
            Some(rest) => (true, rest),
            None => match line.strip_prefix("--") {
                Some(rest) => (false, rest),
                None => {
                    // `[--benchmark_filter=<regex>]` in the usage block.
                    for part in line.split("[--").skip(1) {
                        let name: String = part
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        add(&name, None);
                    }
                    continue;
                }
            },
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let value = (!commented)
            .then(|| rest[name.len()..].strip_prefix('='))
            .flatten()
            .map(|v| v.trim_matches('"').to_string());
        add(&name, value);
    }
    flags
}

/// The reference's help text: live when installed (and recorded with
/// `IRVM_RECORD=1`), else the recorded flag list.
fn reference_flags(tool: &str) -> Vec<(String, Option<String>)> {
    let key = format!("flags/{tool}");
    if let Some(reference) = peer(tool) {
        let out = run_tool(&reference, &["--help".into()]);
        let flags = flags_of_help(&format!("{}{}", out.stdout, out.stderr));
        assert!(flags.len() > 40, "{tool} --help: {flags:?}");
        let listing: String = flags
            .iter()
            .map(|(n, v)| match v {
                Some(v) => format!("--{n}={v}\n"),
                None => format!("# --{n}\n"),
            })
            .collect();
        if recording() {
            let mut one = std::collections::BTreeMap::new();
            one.insert(
                key.clone(),
                Recorded {
                    stdout: listing.clone(),
                    status: 0,
                    message: None,
                },
            );
            write_record(&one);
        }
        let recorded = read_record().get(&key).map(|r| r.stdout.clone());
        assert_eq!(
            recorded.as_deref(),
            Some(listing.as_str()),
            "{tool}'s flags changed since they were recorded; record again"
        );
        return flags;
    }
    let recorded = read_record()
        .get(&key)
        .map(|r| r.stdout.clone())
        .unwrap_or_default();
    flags_of_help(&recorded)
}

/// Whether `help` (irvm's) names `flag`: as an option in either spelling,
/// or under a family of ignored flags (`--cuda_*`).
fn help_names(help: &str, flag: &str) -> bool {
    let dashed = flag.replace('_', "-");
    help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter_map(|w| w.strip_prefix("--"))
        .any(|w| {
            let w = w.split(['=', ' ']).next().unwrap_or(w);
            match w.strip_suffix('*') {
                Some(family) => flag.starts_with(family),
                None => w == flag || w == dashed,
            }
        })
}

/// Every flag `iree-run-module --help` and `iree-benchmark-module --help`
/// list is accepted by `irvm run` / `irvm bench` and named in their
/// `--help` (as an option, or in the list of ignored IREE flags), so no
/// flag can be missed; every flag that has a default runs with that value,
/// in both spellings, with the output of a plain run (and, with the
/// reference installed, the reference's output for the same command line).
#[test]
fn every_reference_flag_is_accepted_in_both_spellings() {
    let add = format!("--module={}", repo_file("tests/models/add.vmfb"));
    let inputs = ["--input=2x3xf32=1".to_string(), "--input=2x3xf32=2".into()];
    for (tool, sub) in [
        ("iree-run-module", "run"),
        ("iree-benchmark-module", "bench"),
    ] {
        let flags = reference_flags(tool);
        assert!(!flags.is_empty(), "no flags recorded for {tool}");
        let help = run_tool(irvm_bin(), &[sub.into(), "--help".into()]);
        assert_eq!(help.status, Some(0));
        let missing: Vec<&str> = flags
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !help_names(&help.stdout, n))
            .collect();
        assert!(
            missing.is_empty(),
            "irvm {sub} --help does not name {missing:?}"
        );
        // Every flag with a default, at its default value, both spellings.
        let defaults: Vec<String> = flags
            .iter()
            .filter_map(|(n, v)| v.as_ref().map(|v| format!("--{n}={v}")))
            .collect();
        let mut args = vec![sub.to_string(), add.clone()];
        if sub == "bench" {
            args.extend([
                "--function=add".to_string(),
                "--benchmark_min_time=2x".into(),
                "--benchmark_format=csv".into(),
            ]);
        }
        args.extend(inputs.iter().cloned());
        let mut underscored = args.clone();
        underscored.extend(defaults.iter().cloned());
        let mut dashed = args.clone();
        dashed.extend(defaults.iter().map(|d| {
            let (n, v) = d.split_once('=').unwrap();
            format!("{}={v}", n.replace('_', "-"))
        }));
        for line in [&underscored, &dashed] {
            let out = run_tool(irvm_bin(), line);
            assert_eq!(out.status, Some(0), "irvm {line:?}: {}", out.stderr);
            if sub == "run" {
                assert_eq!(out.stdout, ADD, "irvm {line:?}");
            } else {
                assert!(
                    out.stdout.contains("\"BM_add/process_time/real_time\",2,"),
                    "{}",
                    out.stdout
                );
            }
        }
        if sub == "run" {
            if let Some(reference) = peer(tool) {
                let theirs = run_tool(&reference, &underscored[1..]);
                assert_eq!(
                    (theirs.stdout.as_str(), theirs.status),
                    (ADD, Some(0)),
                    "{}",
                    theirs.stderr
                );
            }
        }
        // Flags without a default that irvm ignores take any value.
        let ignored_section: String = help
            .stdout
            .split("IREE flags accepted and ignored")
            .nth(1)
            .unwrap_or("")
            .lines()
            .filter(|l| l.trim_start().starts_with("--") && !l.trim().contains(' '))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut line = args.clone();
        for (n, v) in &flags {
            if v.is_none() && help_names(&ignored_section, n) {
                line.push(format!("--{n}=x"));
            }
        }
        let out = run_tool(irvm_bin(), &line);
        assert_eq!(out.status, Some(0), "irvm {line:?}: {}", out.stderr);
    }
}

/// The README's table of ignored flags is the one `irvm run --help` and
/// `irvm bench --help` print.
#[test]
fn readme_lists_the_ignored_flags() {
    let readme = std::fs::read_to_string(repo_file("README.md")).unwrap();
    for sub in ["run", "bench"] {
        let help = run_tool(irvm_bin(), &[sub.into(), "--help".into()]);
        let section = help
            .stdout
            .split("IREE flags accepted and ignored")
            .nth(1)
            .expect("irvm --help lists the ignored flags");
        for flag in section
            .lines()
            .filter_map(|l| l.trim().strip_prefix("--"))
            .filter(|l| !l.contains(' '))
        {
            assert!(
                readme.contains(&format!("`--{flag}`")),
                "README does not list --{flag}"
            );
        }
    }
}

/// The rows of Google Benchmark CSV: (name, iterations).
fn csv_rows(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter(|l| l.starts_with('"'))
        .map(|l| {
            let mut cols = l.split(',');
            let name = cols.next().unwrap().trim_matches('"').to_string();
            (name, cols.next().unwrap().parse().unwrap())
        })
        .collect()
}

/// `irvm bench` takes iree-benchmark-module's and Google Benchmark's
/// flags with their meaning: `--batch_size` makes the iteration count a
/// multiple of it, `--benchmark_dry_run` one batch and one repetition,
/// `--benchmark_list_tests` the names, `--benchmark_report_aggregates_only`
/// and `--benchmark_display_aggregates_only` which rows go where,
/// `--benchmark_context` the context, `--enable_output_processing` the
/// last call's results (one function only). With the reference installed,
/// the same command lines give the same names and iteration counts.
/// Boolean flags with a value, as the reference tools read them: IREE's
/// flags (`irvm dump --bytecode_offsets=1`, `--pretty=`) take `1` and an
/// empty value as true and `0` as false; Google Benchmark's
/// (`--benchmark_list_tests=yes`) also take `yes`/`no`, `on`/`off` and
/// other cases. Compared with the reference tools when installed.
#[test]
fn boolean_flag_values_as_the_reference_tools_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let (ours, _) = assemble("shadow_1", dir.path());
    let module = format!("--module={ours}");
    let bench = peer("iree-benchmark-module");
    let listed = "BM_which/process_time/real_time\nBM_only1/process_time/real_time\n";
    for (value, lists) in [
        ("yes", true),
        ("TRUE", true),
        ("", true),
        ("1", true),
        ("no", false),
        ("off", false),
        ("f", false),
    ] {
        // Not listing would time the functions: a dry run keeps it short.
        let args = vec![
            module.clone(),
            format!("--benchmark_list_tests={value}"),
            "--benchmark_dry_run".to_string(),
            "--benchmark_format=csv".to_string(),
        ];
        let mut ours_args = vec!["bench".to_string()];
        ours_args.extend(args.iter().cloned());
        let out = run_tool(irvm_bin(), &ours_args);
        assert_eq!(out.status, Some(0), "{value}: {}", out.stderr);
        assert_eq!(out.stdout == listed, lists, "{value}: {}", out.stdout);
        if let Some(bench) = &bench {
            let theirs = run_tool(bench, &args);
            assert_eq!(theirs.status, Some(0), "{value}: {}", theirs.stderr);
            assert_eq!(theirs.stdout == listed, lists, "{value}: {}", theirs.stdout);
        }
    }
    let dump = peer("iree-dump-module");
    let vmfb = repo_file("tests/models/add.vmfb");
    let dumped = |flags: &[&str]| {
        let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        args.push(vmfb.clone());
        let mut ours_args = vec!["dump".to_string()];
        ours_args.extend(args.iter().cloned());
        let out = run_tool(irvm_bin(), &ours_args);
        assert_eq!(out.status, Some(0), "{flags:?}: {}", out.stderr);
        if let Some(dump) = &dump {
            let theirs = run_tool(dump, &args);
            assert_eq!(
                theirs.stdout, out.stdout,
                "{flags:?}: irvm vs iree-dump-module"
            );
        }
        out.stdout
    };
    let offsets = dumped(&["--output=disassembly", "--bytecode_offsets"]);
    let plain = dumped(&["--output=disassembly"]);
    assert_ne!(offsets, plain);
    for value in ["1", "", "true"] {
        let flag = format!("--bytecode_offsets={value}");
        assert_eq!(dumped(&["--output=disassembly", &flag]), offsets, "{flag}");
    }
    for value in ["0", "false"] {
        let flag = format!("--bytecode_offsets={value}");
        assert_eq!(dumped(&["--output=disassembly", &flag]), plain, "{flag}");
    }
    let pretty = dumped(&["--output=flatbuffer-json", "--pretty"]);
    assert_eq!(dumped(&["--output=flatbuffer-json", "--pretty=1"]), pretty);
    assert_eq!(dumped(&["--output=flatbuffer-json", "--pretty="]), pretty);
    assert_ne!(dumped(&["--output=flatbuffer-json", "--pretty=0"]), pretty);
}

#[test]
fn bench_flags_as_iree_benchmark_module() {
    let dir = tempfile::tempdir().unwrap();
    let (ours, _) = assemble("shadow_1", dir.path());
    let module = format!("--module={ours}");
    let reference = peer("iree-benchmark-module");
    let both = |args: &[&str]| -> (Out, Option<Out>) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut ours_args = vec!["bench".to_string()];
        ours_args.extend(args.iter().cloned());
        let theirs = reference.as_ref().map(|r| run_tool(r, &args));
        (run_tool(irvm_bin(), &ours_args), theirs)
    };
    let csv = "--benchmark_format=csv";
    // Iterations: 10x in batches of 4 is 12; a dry run is one batch.
    for (args, want) in [
        (
            vec![
                module.as_str(),
                "--function=which",
                csv,
                "--benchmark_min_time=10x",
                "--batch_size=4",
            ],
            vec![("BM_which/process_time/real_time".to_string(), 12)],
        ),
        (
            vec![
                module.as_str(),
                csv,
                "--benchmark_dry_run",
                "--batch_size=3",
                "--benchmark_repetitions=4",
            ],
            vec![
                ("BM_which/process_time/real_time".to_string(), 3),
                ("BM_only1/process_time/real_time".to_string(), 3),
            ],
        ),
    ] {
        let (ours, theirs) = both(&args);
        assert_eq!(ours.status, Some(0), "{}", ours.stderr);
        assert_eq!(csv_rows(&ours.stdout), want, "{args:?}");
        if let Some(theirs) = theirs {
            assert_eq!(csv_rows(&theirs.stdout), want, "reference {args:?}");
        }
    }
    // Names only.
    let (ours, theirs) = both(&[
        &module,
        "--benchmark_list_tests=true",
        "--benchmark_filter=only",
    ]);
    assert_eq!(
        (ours.stdout.as_str(), ours.status),
        ("BM_only1/process_time/real_time\n", Some(0))
    );
    if let Some(theirs) = theirs {
        assert_eq!(theirs.stdout, ours.stdout);
    }
    // Aggregates only: on stdout (display) or everywhere (report).
    let out_file = dir.path().join("out.csv");
    let out_flag = format!("--benchmark_out={}", out_file.display());
    for (flag, file_rows) in [
        ("--benchmark_display_aggregates_only=true", 7),
        ("--benchmark_report_aggregates_only", 4),
    ] {
        let (ours, _) = both(&[
            &module,
            "--function=which",
            csv,
            "--benchmark_min_time=2x",
            "--benchmark_repetitions=3",
            flag,
            &out_flag,
            "--benchmark_out_format=csv",
        ]);
        assert_eq!(ours.status, Some(0), "{}", ours.stderr);
        let names: Vec<String> = csv_rows(&ours.stdout).into_iter().map(|r| r.0).collect();
        assert_eq!(
            names,
            ["mean", "median", "stddev", "cv"]
                .map(|a| format!("BM_which/process_time/real_time_{a}")),
            "{flag}"
        );
        let written = std::fs::read_to_string(&out_file).unwrap();
        assert_eq!(csv_rows(&written).len(), file_rows, "{flag}: {written}");
    }
    // Context pairs, in the JSON context and the console header.
    let (ours, theirs) = both(&[
        &module,
        "--function=which",
        "--benchmark_min_time=1x",
        "--benchmark_format=json",
        "--benchmark_context=zeta=1,alpha=two",
    ]);
    let json: serde_json::Value = serde_json::from_str(&ours.stdout).unwrap();
    assert_eq!(json["context"]["alpha"], "two");
    assert_eq!(json["context"]["zeta"], "1");
    if let Some(theirs) = theirs {
        let reference: serde_json::Value = serde_json::from_str(&theirs.stdout).unwrap();
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v["context"].as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(keys(&json), keys(&reference), "JSON context keys");
        let fields = |v: &serde_json::Value| -> Vec<String> {
            v["benchmarks"][0]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(fields(&json), fields(&reference), "JSON benchmark fields");
    }
    let (ours, _) = both(&[
        &module,
        "--function=which",
        "--benchmark_min_time=1x",
        "--benchmark_context=k=v",
    ]);
    assert!(ours.stderr.contains("\nk: v\n"), "{}", ours.stderr);
    // Warm-up time before timing; every call traced.
    let started = std::time::Instant::now();
    let ours = run_tool(
        irvm_bin(),
        &[
            "bench".to_string(),
            module.clone(),
            "--function=which".into(),
            "--benchmark_min_time=3x".into(),
            "--benchmark_min_warmup_time=0.3".into(),
            "--trace_execution".into(),
        ],
    );
    assert_eq!(ours.status, Some(0), "{}", ours.stderr);
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    assert!(
        ours.stderr.matches("vm.return").count() >= 4,
        "{}",
        &ours.stderr[..ours.stderr.len().min(2000)]
    );
    // The last call's results, printed or checked after the table.
    for (extra, tail, status) in [
        (None, "result[0]: i32=1\n", 0),
        (
            Some("--expected_output=1"),
            "[SUCCESS] all function outputs matched their expected values.\n",
            0,
        ),
        (
            Some("--expected_output=2"),
            "[FAILED] result[0]: expected i32=2 but got i32=1\n",
            1,
        ),
    ] {
        let mut args = vec![
            module.as_str(),
            "--function=which",
            "--benchmark_min_time=2x",
            "--enable_output_processing",
        ];
        args.extend(extra);
        let (ours, theirs) = both(&args);
        assert!(ours.stdout.ends_with(tail), "{args:?}: {}", ours.stdout);
        assert_eq!(ours.status, Some(status), "{args:?}: {}", ours.stderr);
        if let (Some(theirs), None) = (theirs, extra) {
            assert!(theirs.stdout.ends_with(tail), "{}", theirs.stdout);
        }
    }
    let (ours, theirs) = both(&[
        &module,
        "--benchmark_min_time=1x",
        "--enable_output_processing",
    ]);
    assert_eq!(ours.status, Some(1));
    let message = "INVALID_ARGUMENT; output processing requires one function; use --function";
    assert!(ours.stderr.contains(message), "{}", ours.stderr);
    if let Some(theirs) = theirs {
        assert_eq!(theirs.status, Some(1));
        assert!(format!("{}{}", theirs.stdout, theirs.stderr).contains(message));
    }
}

/// The figures of `--print_statistics`, each on its line with a plausible
/// value: a loop of n steps executes at least 6n instructions (its body)
/// in one call; a hal import is counted once per call; a model that loops
/// around a dispatch k times reports k dispatches (and as many as
/// `--trace-execution` shows).
#[test]
fn print_statistics_figures() {
    let dir = tempfile::tempdir().unwrap();
    let (kinds, _) = assemble("value_kinds", dir.path());
    let (views, _) = assemble("value_views", dir.path());
    let figure = |err: &str, label: &str| -> u64 {
        let line = err
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in\n{err}"));
        line[line.find(':').unwrap() + 1..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{line}"))
    };
    let stats = |args: &[String]| -> String {
        let mut all = vec!["run".to_string(), "--print_statistics".into()];
        all.extend(args.iter().cloned());
        let out = run_tool(irvm_bin(), &all);
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        out.stderr
    };
    for n in [10u64, 1000] {
        let err = stats(&[
            format!("--module={kinds}"),
            "--function=count".into(),
            format!("--input={n}"),
        ]);
        assert!(figure(&err, "instructions executed") >= 6 * n, "{err}");
        assert_eq!(figure(&err, "calls into bytecode"), 1, "{err}");
        assert_eq!(figure(&err, "imports called"), 0, "{err}");
        assert_eq!(figure(&err, "dispatches"), 0, "{err}");
        assert_eq!(figure(&err, "deepest call stack"), 1, "{err}");
        assert!(figure(&err, "most memory held") > 0, "{err}");
        for label in ["load time (modules, __init)", "run time (the call)"] {
            let line = err.lines().find(|l| l.contains(label)).unwrap();
            assert!(line.ends_with(" ms"), "{line}");
        }
    }
    let err = stats(&[
        format!("--module={}", repo_file("tests/models/add.vmfb")),
        format!("--module={views}"),
        "--function=pass".into(),
        "--input=2xf32=1".into(),
    ]);
    assert_eq!(figure(&err, "imports called"), 1, "{err}");
    assert_eq!(figure(&err, "dispatches"), 0, "{err}");
    for k in [2u64, 5] {
        let args = [
            format!("--module={}", repo_file("tests/models/loop.vmfb")),
            "--function=loop".into(),
            "--input=4xf32=0.5 0.25 -0.5 1".into(),
            format!("--input={k}"),
        ];
        let err = stats(&args);
        assert_eq!(figure(&err, "dispatches"), k, "{err}");
        assert!(figure(&err, "imports called") >= k, "{err}");
        let mut traced = args.to_vec();
        traced.insert(0, "run".into());
        traced.push("--trace-execution".into());
        let out = run_tool(irvm_bin(), &traced);
        let shown = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("[hal.dispatch]"))
            .count();
        assert_eq!(shown as u64, k);
    }
    // irvm bench reports the figures it measures without observing.
    let out = run_tool(
        irvm_bin(),
        &[
            "bench".into(),
            format!("--module={}", repo_file("tests/models/loop.vmfb")),
            "--function=loop".into(),
            "--input=4xf32=0.5 0.25 -0.5 1".into(),
            "--input=3".into(),
            "--benchmark_min_time=4x".into(),
            "--print_statistics".into(),
        ],
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // A warm-up call and four timed ones, three dispatches each.
    assert_eq!(figure(&out.stderr, "dispatches"), 15, "{}", out.stderr);
}

/// With stdout a pipe its reader has closed, irvm ends quietly, as the C
/// tools do (SIGPIPE kills them): nothing on stderr, status 1, no panic.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    for args in [
        vec![
            "run".to_string(),
            format!("--module={}", repo_file("tests/models/add.vmfb")),
            "--input=2x3xf32=1".into(),
            "--input=2x3xf32=2".into(),
        ],
        vec!["run".to_string(), "--list_devices".into()],
        vec!["dump".to_string(), repo_file("tests/models/add.vmfb")],
    ] {
        // A pipe whose read end is closed before irvm starts.
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe() writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors were just opened and are owned here.
        let (read, write) = unsafe {
            use std::os::fd::FromRawFd;
            (
                std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            )
        };
        drop(read);
        let child = Command::new(irvm_bin())
            .args(&args)
            .stdout(Stdio::from(write))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.signal(), None, "{args:?}");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
    }
}

/// Where irvm differs from iree-run-module on purpose
/// (docs/COMPATIBILITY.md, "Command lines").
/// A function whose results are `!vm.buffer`s: one allocated and written
/// (`fe 00 07`), one over rodata (`01` to `08`).
const VM_BUFFER_RESULTS: &str = "vm.module @vm_buffers version 0
vm.type !vm.buffer
vm.rodata[0] = 0102030405060708
vm.export @bytes
vm.func @bytes() -> (!vm.buffer, !vm.buffer) {
^bb0:
  %i0 = vm.const.i32 1
  %i2:3 = vm.const.i64 3
  %r0 = vm.buffer.alloc %i2:3, %i0
  %i4:5 = vm.const.i64 0
  %i6 = vm.const.i32 -2
  vm.buffer.store.i8 %i6, %r0, %i4:5
  %i4:5 = vm.const.i64 2
  %i6 = vm.const.i32 7
  vm.buffer.store.i8 %i6, %r0, %i4:5
  %r1 = vm.const.ref.rodata 0
  vm.return %r0, %r1
}
";

#[test]
fn differences_from_iree_run_module() {
    let dir = tempfile::tempdir().unwrap();
    let (kinds, _) = assemble("value_kinds", dir.path());
    let (views, _) = assemble("value_views", dir.path());
    let run = |args: &[String]| {
        let mut all = vec!["run".to_string()];
        all.extend(args.iter().cloned());
        run_tool(irvm_bin(), &all)
    };
    // `(ignored)` skips a scalar result.
    let out = run(&[
        format!("--module={kinds}"),
        "--function=echo_i32".into(),
        "--input=5".into(),
        "--expected_output=(ignored)".into(),
    ]);
    assert_eq!(
        (out.stdout.as_str(), out.status),
        (
            "EXEC @echo_i32\n[SUCCESS] all function outputs matched their expected values.\n",
            Some(0)
        )
    );
    // A module importing hal.* gets the hal module without declaring it.
    let out = run(&[
        format!("--module={views}"),
        "--function=pass".into(),
        "--input=2xf32=1".into(),
    ]);
    assert_eq!(
        (out.stdout.as_str(), out.status),
        (
            "EXEC @pass\nresult[0]: hal.buffer_view\n2xf32=1 1\nresult[1]: i32=1\n",
            Some(0)
        ),
        "{}",
        out.stderr
    );
    // An f8E4M3FN result that does not match: iree-run-module aborts
    // (SIGABRT) while reporting it; irvm reports it as for any type.
    let out = run(&[
        format!("--module={views}"),
        "--function=two".into(),
        "--input=2xf8E4M3FN=1,2".into(),
        "--input=f32=0".into(),
        "--expected_output=f32=0".into(),
        "--expected_output=2xf8E4M3FN=1.125,2".into(),
    ]);
    assert_eq!(
        (out.stdout.as_str(), out.status),
        (
            "EXEC @two\n[FAILED] result[1]: element at index 0 (1) does not match the expected \
             (1.125); expected that the view is equal to contents of a view of 2xf8E4M3FN\n  \
             expected:\n2xf8E4M3FN=1.125 2\n  actual:\n2xf8E4M3FN=1 2\n",
            Some(1)
        ),
        "{}",
        out.stderr
    );
    // What iree-run-module reads loosely or skips without a word is a
    // usage error: a number with trailing letters (the reference reads
    // `4abc` as 4), a stray word, a flag with one dash.
    for extra in ["--output_max_element_count=4abc", "stray", "-input=5"] {
        let out = run(&[
            format!("--module={kinds}"),
            "--function=echo_i32".into(),
            "--input=5".into(),
            extra.into(),
        ]);
        assert_eq!(out.status, Some(2), "{extra}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{extra}");
    }
    // A function named with gdb's and the assembly's `@` is found (the
    // reference: NOT_FOUND).
    let out = run(&[
        format!("--module={kinds}"),
        "--function=@echo_i32".into(),
        "--input=5".into(),
    ]);
    assert_eq!(
        (out.stdout.as_str(), out.status),
        ("EXEC @echo_i32\nresult[0]: i32=5\n", Some(0)),
        "{}",
        out.stderr
    );
    // Long options with their value in the next word, and a bare `--`.
    let out = run(&[
        "--module".into(),
        kinds.clone(),
        "--function".into(),
        "echo_i32".into(),
        "--input".into(),
        "5".into(),
        "--".into(),
    ]);
    assert_eq!(
        (out.stdout.as_str(), out.status),
        ("EXEC @echo_i32\nresult[0]: i32=5\n", Some(0)),
        "{}",
        out.stderr
    );
    // `irvm as` without --output writes the module to stdout.
    let assembled = Command::new(irvm_bin())
        .arg("as")
        .arg(repo_file("tests/data/value_kinds.vmasm"))
        .output()
        .unwrap();
    assert!(assembled.status.success());
    assert_eq!(assembled.stdout, std::fs::read(&kinds).unwrap());
    // An unknown flag is a usage error (status 2); the dashed spelling of
    // a flag is not unknown.
    let out = run(&[format!("--module={kinds}"), "--no_such_flag=1".into()]);
    assert_eq!(out.status, Some(2), "{}", out.stderr);
    // A boolean IREE flag with a word IREE reads as false without a word
    // is a usage error.
    for value in ["yes", "on", "TRUE"] {
        let out = run(&[
            format!("--module={kinds}"),
            "--function=echo_i32".into(),
            "--input=5".into(),
            format!("--print_statistics={value}"),
        ]);
        assert_eq!(out.status, Some(2), "{value}: {}", out.stderr);
        assert!(out.stderr.contains(value), "{value}: {}", out.stderr);
    }
    let out = run(&[
        format!("--module={kinds}"),
        "--function=echo_i32".into(),
        "--input=5".into(),
        "--output-max-element-count=3".into(),
    ]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // A `!vm.buffer` result written to a file: its bytes, as an i8 array
    // in `.npy` (the reference fails on its HAL wrap's 64-byte alignment).
    let source = dir.path().join("vm_buffers.vmasm");
    std::fs::write(&source, VM_BUFFER_RESULTS).unwrap();
    let module = dir.path().join("vm_buffers.vmfb");
    let out = run_tool(
        irvm_bin(),
        &[
            "as".into(),
            "-o".into(),
            module.display().to_string(),
            source.display().to_string(),
        ],
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let (npy, bin) = (dir.path().join("r0.npy"), dir.path().join("r1.bin"));
    let args = [
        format!("--module={}", module.display()),
        format!("--output=@{}", npy.display()),
        format!("--output=@{}", bin.display()),
    ];
    let out = run(&args);
    assert_eq!(
        (out.stdout.as_str(), out.status),
        ("EXEC @bytes\n", Some(0)),
        "{}",
        out.stderr
    );
    let header = "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }";
    let mut want = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    want.extend((padded.len() as u16).to_le_bytes());
    want.extend(padded.as_bytes());
    want.extend([0xfe, 0x00, 0x07]);
    assert_eq!(std::fs::read(&npy).unwrap(), want);
    assert_eq!(std::fs::read(&bin).unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
    if let Some(reference) = peer("iree-run-module") {
        let theirs = run_tool(&reference, &args);
        assert_eq!(theirs.status, Some(1), "{theirs:?}");
        assert!(
            theirs.stderr.contains("must be aligned to 64"),
            "{theirs:?}"
        );
    }
    // The library that measured names itself.
    let out = run_tool(
        irvm_bin(),
        &[
            "bench".into(),
            format!("--module={kinds}"),
            "--function=ints".into(),
            "--benchmark_min_time=1x".into(),
            "--benchmark_format=json".into(),
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        json["context"]["library_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("irvm ")),
        "{}",
        out.stdout
    );
}

/// `--expected_output` values are all parsed (their files read) after the
/// call and before any is compared, as iree-run-module does: one that
/// cannot be read or parsed fails the run with nothing printed after
/// `EXEC`, even when an earlier result differs; more expected values than
/// results fail the same way, fewer are a `[FAILED]` count line.
#[test]
fn expected_outputs_are_parsed_before_any_is_compared() {
    let module = format!("--module={}", repo_file("tests/models/argmax_min.vmfb"));
    let input = "--input=3x5xf32=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15";
    let rows: &[(&str, &[&str])] = &[
        (
            "missing_npy",
            &[
                "--expected_output=3xf32=9,9,9",
                "--expected_output=@/nonexistent/expected.npy",
                "--expected_output=f32=120",
            ],
        ),
        (
            "missing_raw",
            &[
                "--expected_output=3xf32=9,9,9",
                "--expected_output=3xf32=@/nonexistent/expected.bin",
                "--expected_output=f32=120",
            ],
        ),
        (
            "malformed",
            &[
                "--expected_output=3xf32=9,9,9",
                "--expected_output=3xf32=1,6,11",
                "--expected_output=3",
            ],
        ),
        (
            "one_too_many",
            &[
                "--expected_output=3xf32=9,9,9",
                "--expected_output=3xf32=1,6,11",
                "--expected_output=f32=120",
                "--expected_output=f32=1",
            ],
        ),
        (
            "one_too_few",
            &[
                "--expected_output=3xf32=9,9,9",
                "--expected_output=3xf32=1,6,11",
            ],
        ),
        (
            "all_match",
            &[
                "--expected_output=3xf32=5,10,15",
                "--expected_output=3xf32=1,6,11",
                "--expected_output=f32=120",
            ],
        ),
    ];
    let cases: Vec<Probe> = rows
        .iter()
        .map(|(key, expected)| {
            let mut args = vec![module.as_str(), "--function=stats", input];
            args.extend(expected.iter());
            probe(format!("expected_outputs/{key}"), &args)
        })
        .collect();
    let as_given = |a: &[String]| a.to_vec();
    check_cases(&cases, &[&as_given]);
}
