//! `irvm run` as a drop-in for `iree-run-module` (issue 16): each case is
//! one command line given to both tools. The expected stdout and exit
//! status are recorded here from iree-run-module 3.13; with the reference
//! tools installed, the test also runs iree-run-module and compares live.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

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
    let add = format!("--module={}", repo("tests/models/add.vmfb"));
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
        .arg(repo("tests/data/embedding.vmasm"))
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
            "the module on stdin",
            with(vec!["--module=-".into(), "--function=add".into()], inputs()),
            Some(repo("tests/models/add.vmfb")),
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
