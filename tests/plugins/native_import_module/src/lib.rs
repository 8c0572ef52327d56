//! `native_import_module`: the host module IREE's VM benchmarks import
//! (`module_benchmark.vmasm` calls `native_import_module.add_1`), built as an
//! irvm dynamic module (`target/release/libnative_import_module.so`).
//!
//! * `add_1(x: i32) -> i32` (`0i_i`) returns `x + 1` (wrapping).

use irvm_plugin_abi::{
    export_plugin, status, Export, HostModulePlugin, Outcome, PluginError, Value,
};

/// The module; stateless.
pub struct NativeImportModule;

impl HostModulePlugin for NativeImportModule {
    type State = ();

    fn name(&self) -> &str {
        "native_import_module"
    }

    fn exports(&self) -> Vec<Export> {
        vec![Export {
            name: "add_1".into(),
            calling_convention: "0i_i".into(),
        }]
    }

    fn create_state(&self) -> Result<(), PluginError> {
        Ok(())
    }

    fn call(
        &self,
        _state: &mut (),
        export: usize,
        args: &[Value],
        results: &mut [Value],
    ) -> Result<Outcome, PluginError> {
        if export != 0 {
            return Err(PluginError::new(
                status::NOT_FOUND,
                format!("no export ordinal {export}"),
            ));
        }
        let x = match args {
            [Value::I32(x)] => *x,
            _ => {
                return Err(PluginError::new(
                    status::INVALID_ARGUMENT,
                    "add_1 takes one i32",
                ))
            }
        };
        match results.first_mut() {
            Some(out) => *out = Value::I32(x.wrapping_add(1)),
            None => {
                return Err(PluginError::new(
                    status::INVALID_ARGUMENT,
                    "add_1 returns one i32",
                ))
            }
        }
        Ok(Outcome::Done)
    }
}

fn make(_params: &[(String, String)]) -> Result<NativeImportModule, PluginError> {
    Ok(NativeImportModule)
}

export_plugin!(make);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_one_and_wraps() {
        let m = NativeImportModule;
        let mut out = [Value::I32(0)];
        m.call(&mut (), 0, &[Value::I32(41)], &mut out).unwrap();
        assert_eq!(out[0], Value::I32(42));
        m.call(&mut (), 0, &[Value::I32(i32::MAX)], &mut out)
            .unwrap();
        assert_eq!(out[0], Value::I32(i32::MIN));
        assert!(m.call(&mut (), 1, &[], &mut out).is_err());
        assert!(m.call(&mut (), 0, &[Value::F32(1.0)], &mut out).is_err());
    }
}
