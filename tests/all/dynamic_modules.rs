//! Dynamic host modules through the C ABI: the `yieldable_test` plugin that
//! `cargo test --workspace` builds, and broken libraries that must give clear
//! errors.

use irvm::dynamic::{DynamicModule, DynamicModuleError, DynamicOutcome};
use irvm_plugin_abi::{RawValue, KIND_I32};
use std::path::PathBuf;

use crate::common::cli::yieldable_plugin;

fn i32v(x: i32) -> RawValue {
    RawValue {
        kind: KIND_I32,
        bits: x as u32 as u64,
    }
}

#[test]
fn yieldable_test_plugin_loads_and_yields() {
    let Some(path) = yieldable_plugin() else {
        eprintln!("skipping: libyieldable_test.so not built (run cargo test --workspace)");
        return;
    };
    let m = DynamicModule::load_spec(path.to_str().unwrap()).expect("load plugin");
    assert_eq!(m.name(), "yieldable_test");
    let names: Vec<_> = m
        .exports()
        .iter()
        .map(|e| (e.name.as_str(), e.calling_convention.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![("yield_n", "0ii_i"), ("yield_variadic_sum", "0CiDi_i")]
    );

    let mut state = m.create_state().unwrap();
    let mut out = [i32v(0)];
    let mut outcome = state.call(0, &[i32v(100), i32v(3)], &mut out).unwrap();
    let mut yields = 0;
    while outcome == DynamicOutcome::Deferred {
        yields += 1;
        outcome = state.resume(0, &mut out).unwrap();
    }
    assert_eq!((out[0].bits as u32 as i32, yields), (103, 3));

    // A plugin error crosses the boundary as a status and message.
    let err = state.call(0, &[i32v(1), i32v(-2)], &mut out).unwrap_err();
    assert!(err.message.contains("yield_count"), "{err}");
}

#[test]
fn entry_point_and_params_from_the_spec() {
    let Some(path) = yieldable_plugin() else {
        eprintln!("skipping: libyieldable_test.so not built");
        return;
    };
    let spec = format!("{}@no_such_entry?x=1", path.display());
    match DynamicModule::load_spec(&spec) {
        Err(DynamicModuleError::MissingSymbol { symbol, .. }) => {
            assert_eq!(symbol, "no_such_entry")
        }
        other => panic!("expected a missing-symbol error, got {other:?}"),
    }
    let ok = format!("{}@irvm_module_create?anything=goes", path.display());
    assert!(DynamicModule::load_spec(&ok).is_ok());
}

/// Compiles a C "plugin" with the system compiler; `None` when there is none.
fn build_c_plugin(name: &str, source: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().ok()?;
    let c = dir.path().join(format!("{name}.c"));
    std::fs::write(&c, source).ok()?;
    let so = dir.path().join(format!("lib{name}.so"));
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
        .ok()?;
    status.success().then_some((dir, so))
}

#[test]
fn wrong_abi_version_and_foreign_libraries_are_rejected() {
    let Some((_dir, so)) = build_c_plugin(
        "future",
        "unsigned irvm_plugin_abi_version(void) { return 99; }\n",
    ) else {
        eprintln!("skipping: no C compiler to build a test library");
        return;
    };
    match DynamicModule::load_spec(so.to_str().unwrap()) {
        Err(e @ DynamicModuleError::AbiVersion { found: 99, .. }) => {
            assert!(e.to_string().contains("version 99"), "{e}")
        }
        other => panic!("expected an ABI version error, got {other:?}"),
    }
    let Some((_dir2, plain)) = build_c_plugin("plain", "int answer(void) { return 42; }\n") else {
        return;
    };
    let e = DynamicModule::load_spec(plain.to_str().unwrap()).unwrap_err();
    assert!(e.to_string().contains("irvm_plugin_abi_version"), "{e}");
    let e = DynamicModule::load_spec("/definitely/not/here/libx.so").unwrap_err();
    assert!(matches!(e, DynamicModuleError::Load { .. }));
}

#[test]
fn failing_entry_point_reports_its_message() {
    let src = r#"
#include <string.h>
#include <stdint.h>
#include <stddef.h>
typedef struct { uint32_t code; uint32_t len; char message[512]; } err_t;
unsigned irvm_plugin_abi_version(void) { return 1; }
unsigned irvm_module_create(const void* host, const void* params, size_t n, void* out, err_t* err) {
  const char* m = "device not available";
  err->code = 9; err->len = (uint32_t)strlen(m); memcpy(err->message, m, err->len);
  return 2;
}
"#;
    let Some((_dir, so)) = build_c_plugin("failing", src) else {
        eprintln!("skipping: no C compiler to build a test library");
        return;
    };
    let e = DynamicModule::load_spec(so.to_str().unwrap()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("device not available") && text.contains("status 9"),
        "{text}"
    );
}
