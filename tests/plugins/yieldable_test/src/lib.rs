//! `yieldable_test`: the host module IREE's VM test runner registers for the
//! `async_ops` conformance module, built as an irvm dynamic module
//! (`target/release/libyieldable_test.so`).
//!
//! * `yield_n(arg: i32, yield_count: i32) -> i32` (`0ii_i`) yields
//!   `yield_count` times, adding one on each resume, then returns
//!   `arg + yield_count`.
//! * `yield_variadic_sum(values: i32..., yield_count: i32) -> i32`
//!   (`0CiDi_i`) sums the values, yields `yield_count` times, then returns
//!   `sum + yield_count`.
//!
//! The coroutine (remaining yields, accumulator) lives in the per-context
//! state, as in the reference test module.

use irvm_plugin_abi::{
    export_plugin, status, Export, HostModulePlugin, Outcome, PluginError, Value,
};

/// The module; it has no configuration.
pub struct YieldableTest;

/// Per-context coroutine state.
#[derive(Default)]
pub struct Coroutine {
    remaining: i32,
    accumulator: i32,
}

const YIELD_N: usize = 0;
const YIELD_VARIADIC_SUM: usize = 1;

fn arg_i32(args: &[Value], i: usize, what: &str) -> Result<i32, PluginError> {
    args.get(i).and_then(|v| v.as_i32()).ok_or_else(|| {
        PluginError::new(
            status::INVALID_ARGUMENT,
            format!("argument {i} ({what}) must be an i32"),
        )
    })
}

impl Coroutine {
    fn start(
        &mut self,
        base: i32,
        yields: i32,
        results: &mut [Value],
    ) -> Result<Outcome, PluginError> {
        if yields < 0 {
            return Err(PluginError::new(
                status::INVALID_ARGUMENT,
                format!("yield_count must not be negative, got {yields}"),
            ));
        }
        self.accumulator = base;
        self.remaining = yields;
        self.step(results)
    }

    fn step(&mut self, results: &mut [Value]) -> Result<Outcome, PluginError> {
        if self.remaining == 0 {
            let out = results.first_mut().ok_or_else(|| {
                PluginError::new(
                    status::INVALID_ARGUMENT,
                    "caller expects no result; this function returns one",
                )
            })?;
            *out = Value::I32(self.accumulator);
            return Ok(Outcome::Done);
        }
        self.remaining -= 1;
        self.accumulator = self.accumulator.wrapping_add(1);
        Ok(Outcome::Deferred)
    }
}

impl HostModulePlugin for YieldableTest {
    type State = Coroutine;

    fn name(&self) -> &str {
        "yieldable_test"
    }

    fn exports(&self) -> Vec<Export> {
        vec![
            Export {
                name: "yield_n".into(),
                calling_convention: "0ii_i".into(),
            },
            Export {
                name: "yield_variadic_sum".into(),
                calling_convention: "0CiDi_i".into(),
            },
        ]
    }

    fn create_state(&self) -> Result<Coroutine, PluginError> {
        Ok(Coroutine::default())
    }

    fn call(
        &self,
        state: &mut Coroutine,
        export: usize,
        args: &[Value],
        results: &mut [Value],
    ) -> Result<Outcome, PluginError> {
        match export {
            YIELD_N => {
                let arg = arg_i32(args, 0, "arg")?;
                let yields = arg_i32(args, 1, "yield_count")?;
                state.start(arg, yields, results)
            }
            YIELD_VARIADIC_SUM => {
                // Flattened as: span count, the values, then yield_count.
                let count = arg_i32(args, 0, "value count")?;
                let count = usize::try_from(count).map_err(|_| {
                    PluginError::new(status::INVALID_ARGUMENT, "negative value count")
                })?;
                let mut sum = 0i32;
                for i in 0..count {
                    sum = sum.wrapping_add(arg_i32(args, 1 + i, "value")?);
                }
                let yields = arg_i32(args, 1 + count, "yield_count")?;
                state.start(sum, yields, results)
            }
            other => Err(PluginError::new(
                status::NOT_FOUND,
                format!("yieldable_test has no export ordinal {other}"),
            )),
        }
    }

    fn resume(
        &self,
        state: &mut Coroutine,
        _export: usize,
        results: &mut [Value],
    ) -> Result<Outcome, PluginError> {
        state.step(results)
    }
}

fn make(_params: &[(String, String)]) -> Result<YieldableTest, PluginError> {
    Ok(YieldableTest)
}

export_plugin!(make);

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(export: usize, args: &[Value]) -> (i32, usize) {
        let m = YieldableTest;
        let mut s = m.create_state().unwrap();
        let mut out = [Value::I32(0)];
        let mut yields = 0;
        let mut o = m.call(&mut s, export, args, &mut out).unwrap();
        while o == Outcome::Deferred {
            yields += 1;
            o = m.resume(&mut s, export, &mut out).unwrap();
        }
        (out[0].as_i32().unwrap(), yields)
    }

    #[test]
    fn yield_n_adds_one_per_resume() {
        assert_eq!(drive(YIELD_N, &[Value::I32(100), Value::I32(3)]), (103, 3));
        assert_eq!(drive(YIELD_N, &[Value::I32(7), Value::I32(0)]), (7, 0));
    }

    #[test]
    fn variadic_sum_then_yields() {
        let args = [Value::I32(2), Value::I32(10), Value::I32(20), Value::I32(4)];
        assert_eq!(drive(YIELD_VARIADIC_SUM, &args), (34, 4));
    }

    #[test]
    fn bad_arguments_are_errors() {
        let m = YieldableTest;
        let mut s = m.create_state().unwrap();
        let mut out = [Value::I32(0)];
        assert!(m
            .call(&mut s, YIELD_N, &[Value::F32(1.0)], &mut out)
            .is_err());
        assert!(m.call(&mut s, 7, &[], &mut out).is_err());
        assert!(m
            .call(&mut s, YIELD_N, &[Value::I32(1), Value::I32(-1)], &mut out)
            .is_err());
    }
}
