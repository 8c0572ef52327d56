//! Functions of a context as the embedder sees them: [`Func`] (found by
//! [`Context::function`], with its parameter and result [`ValType`]s),
//! [`TypedFunc`] (a function whose signature was checked once against Rust
//! types, then called with plain Rust values), and [`LookupError`]. The
//! conversion of those Rust values, [`HostValue`] (shared with host
//! functions) and [`HostRef`], is the child module `host_value`.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::context::{CallState, Context};
use crate::program::Signature;
use crate::trap::{StatusCode, Trap};
use crate::values::Ref;
use crate::values::Value;

mod host_value;

pub use host_value::{HostRef, HostValue};

/// The type of a function parameter or result: what one element of a
/// calling convention (`0iIfFr_...`) denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValType {
    /// 32-bit integer (`i`).
    I32,
    /// 64-bit integer (`I`).
    I64,
    /// 32-bit float (`f`).
    F32,
    /// 64-bit float (`F`).
    F64,
    /// A reference, null or to a buffer, list or host object (`r`).
    Ref,
}

impl ValType {
    /// The type of calling-convention letter `code`.
    pub(crate) fn from_code(code: u8) -> Option<ValType> {
        Some(match code {
            b'i' => ValType::I32,
            b'I' => ValType::I64,
            b'f' => ValType::F32,
            b'F' => ValType::F64,
            b'r' => ValType::Ref,
            _ => return None,
        })
    }

    /// The calling-convention letter.
    pub(crate) fn code(self) -> char {
        match self {
            ValType::I32 => 'i',
            ValType::I64 => 'I',
            ValType::F32 => 'f',
            ValType::F64 => 'F',
            ValType::Ref => 'r',
        }
    }

    /// The type of `value`, or `None` for [`Value::None`].
    pub fn of(value: &Value) -> Option<ValType> {
        ValType::from_code(value.kind_char() as u8)
    }
}

impl fmt::Display for ValType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValType::I32 => "i32",
            ValType::I64 => "i64",
            ValType::F32 => "f32",
            ValType::F64 => "f64",
            ValType::Ref => "ref",
        })
    }
}

/// `(i32, i64) -> (f32)`.
fn signature_text(params: &[ValType], results: &[ValType]) -> String {
    let list = |types: &[ValType]| {
        types
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("({}) -> ({})", list(params), list(results))
}

fn types_of(codes: &[u8]) -> Arc<[ValType]> {
    codes
        .iter()
        .filter_map(|&c| ValType::from_code(c))
        .collect()
}

/// Why [`Context::function`] or [`Context::typed_func`] found no function
/// to call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No registered module exports a function of that name.
    #[error(
        "NOT_FOUND; no function `{function}` exported by {}; exports: {}",
        module.as_deref().map_or_else(|| "any module".to_string(), |m| format!("module `{m}`")),
        if exports.is_empty() { "(none)".to_string() } else { exports.join(", ") }
    )]
    NotFound {
        /// The function name asked for (without its module).
        function: String,
        /// The module named in the request (`module.function`), if any.
        module: Option<String>,
        /// What can be called instead: the module's exports, or every
        /// module's as `module.function` when no module was named.
        exports: Vec<String>,
    },
    /// A module's place in the context holds no function of that
    /// ordinal ([`crate::Context::function_at`]).
    #[error("{}", no_function_at_text(*module_index, module.as_deref(), *ordinal, functions))]
    NoFunctionAt {
        /// The module's place in the context.
        module_index: usize,
        /// The name of the module there; `None` when there is none.
        module: Option<String>,
        /// The ordinal asked for.
        ordinal: u32,
        /// The functions of that module, `ORDINAL NAME` (bytecode modules
        /// only: a host module's functions have no ordinals to call).
        functions: Vec<String>,
    },
    /// The function exists, but its signature is not the requested one.
    #[error(
        "INVALID_ARGUMENT; function `{function}` has signature {found}, \
         but was requested as {expected}"
    )]
    Signature {
        /// The function (`module.function`).
        function: String,
        /// The signature asked for (from the Rust types), `(i32) -> (i32)`.
        expected: String,
        /// The function's signature, with its calling convention.
        found: String,
    },
}

/// Most functions a [`LookupError::NoFunctionAt`] message lists.
const LISTED_FUNCTIONS: usize = 32;

fn no_function_at_text(
    module_index: usize,
    module: Option<&str>,
    ordinal: u32,
    functions: &[String],
) -> String {
    let Some(module) = module else {
        return format!("NOT_FOUND; the context has no module #{module_index}");
    };
    let listed = if functions.is_empty() {
        "(none: a host module's functions are called by name)".to_string()
    } else if functions.len() > LISTED_FUNCTIONS {
        format!(
            "{}, ... ({} in all)",
            functions[..LISTED_FUNCTIONS].join(", "),
            functions.len()
        )
    } else {
        functions.join(", ")
    };
    format!(
        "NOT_FOUND; module #{module_index} (`{module}`) has no function {ordinal}; its functions: \
         {listed}"
    )
}

/// A function of a context, found by [`Context::function`]: call it with
/// [`Context::invoke`] (values checked on every call) or turn it into a
/// [`TypedFunc`] with [`Func::typed`] (checked once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Func {
    /// The context it belongs to (`Context::id`).
    pub(crate) context: u64,
    pub(crate) target: FuncTarget,
    name: String,
    pub(crate) parsed: Arc<Signature>,
    params: Arc<[ValType]>,
    results: Arc<[ValType]>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FuncTarget {
    Bytecode { module: u32, ordinal: u32 },
    Host { module: u32, index: u32 },
}

impl Func {
    pub(crate) fn new(context: u64, target: FuncTarget, name: String, sig: Signature) -> Func {
        Func {
            context,
            target,
            name,
            params: types_of(&sig.args),
            results: types_of(&sig.results),
            parsed: Arc::new(sig),
        }
    }

    /// The fully qualified name (`module.function`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The calling convention (`0ii_i`).
    pub fn calling_convention(&self) -> String {
        self.parsed.text()
    }

    /// The parameter types (a variadic host function's spans flattened: a
    /// count, then one set of the span's types).
    pub fn params(&self) -> &[ValType] {
        &self.params
    }

    /// The result types.
    pub fn results(&self) -> &[ValType] {
        &self.results
    }

    /// Whether the function takes variadic spans (host functions such as
    /// `0CiD_i`); those take any number of values, so only [`Context::invoke`]
    /// calls them.
    pub fn is_variadic(&self) -> bool {
        self.parsed.variadic
    }

    /// This function as a [`TypedFunc`] taking `P` and returning `R`, or an
    /// error naming both signatures when they differ.
    pub fn typed<P: CallParams, R: CallResults>(&self) -> Result<TypedFunc<P, R>, LookupError> {
        let (params, results) = (P::types(), R::types());
        if self.is_variadic() || params != *self.params || results != *self.results {
            return Err(LookupError::Signature {
                function: self.name.clone(),
                expected: signature_text(&params, &results),
                found: format!(
                    "{} (calling convention `{}`)",
                    signature_text(&self.params, &self.results),
                    self.calling_convention()
                ),
            });
        }
        Ok(TypedFunc {
            func: self.clone(),
            _types: PhantomData,
        })
    }
}

/// A function whose parameter and result types were checked once against
/// `Params` and `Results` (see [`Context::typed_func`]); calls then take and
/// return Rust values.
///
/// `Params` is `()`, one of `i32`, `i64`, `f32`, `f64`, [`Ref`] and
/// [`HostRef<T>`](crate::HostRef), or a tuple of up to 8 of them; `Results`
/// likewise. Calling conventions do not name ref types, so a
/// [`HostRef<T>`](crate::HostRef) result is checked when a call returns it
/// (a mismatch fails that call). A call that yields (`vm.yield`, yielding imports) is driven by
/// [`TypedFunc::begin_call`] and [`TypedFunc::resume`], or run to the end
/// by [`TypedFunc::call`].
pub struct TypedFunc<Params, Results> {
    func: Func,
    _types: PhantomData<fn(Params) -> Results>,
}

impl<P, R> Clone for TypedFunc<P, R> {
    fn clone(&self) -> Self {
        TypedFunc {
            func: self.func.clone(),
            _types: PhantomData,
        }
    }
}

impl<P, R> fmt::Debug for TypedFunc<P, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedFunc")
            .field("func", &self.func)
            .finish()
    }
}

impl<P: CallParams, R: CallResults> TypedFunc<P, R> {
    /// The untyped function.
    pub fn func(&self) -> &Func {
        &self.func
    }

    /// Calls the function with `params` in `ctx` (the context it was found
    /// in), resuming through any yields, and returns its results.
    pub fn call(&self, ctx: &mut Context, params: P) -> Result<R, Trap> {
        let mut state = self.begin_call(ctx, params)?;
        loop {
            match state {
                CallState::Done(r) => return Ok(r),
                CallState::Yielded | CallState::Paused => state = self.resume(ctx)?,
            }
        }
    }

    /// Starts a call that may yield ([`CallState::Yielded`]); continue it
    /// with [`TypedFunc::resume`].
    pub fn begin_call(&self, ctx: &mut Context, params: P) -> Result<CallState<R>, Trap> {
        let state = params.with_values(|args| ctx.begin_typed_call(&self.func, args))?;
        self.finish(state)
    }

    /// Continues a call of this function that yielded.
    /// Only a pending call of this same function can be resumed this way;
    /// another function's pending call is an error and stays pending.
    pub fn resume(&self, ctx: &mut Context) -> Result<CallState<R>, Trap> {
        ctx.check_pending_is(&self.func)?;
        let state = ctx.resume()?;
        self.finish(state)
    }

    fn finish(&self, state: CallState) -> Result<CallState<R>, Trap> {
        Ok(match state {
            CallState::Done(values) => CallState::Done(R::from_values(values).map_err(|why| {
                Trap::new(
                    StatusCode::Internal,
                    format!("results of `{}`: {why}", self.func.name),
                )
            })?),
            CallState::Yielded => CallState::Yielded,
            CallState::Paused => CallState::Paused,
        })
    }
}

mod sealed {
    pub trait Sealed {}
}

/// What [`TypedFunc`] calls take: `()`, one [`HostValue`] type, or a tuple
/// of up to 8. Implemented by the library only.
pub trait CallParams: sealed::Sealed {
    /// The parameter types.
    #[doc(hidden)]
    fn types() -> Vec<ValType>;
    /// Runs `f` over the parameters as values (no allocation).
    #[doc(hidden)]
    fn with_values<T>(self, f: impl FnOnce(&[Value]) -> T) -> T;
}

/// What [`TypedFunc`] calls return: `()`, one [`HostValue`] type, or a
/// tuple of up to 8. Implemented by the library only.
pub trait CallResults: Sized + sealed::Sealed {
    /// The result types.
    #[doc(hidden)]
    fn types() -> Vec<ValType>;
    /// The Rust values of the results, or why they do not fit.
    #[doc(hidden)]
    fn from_values(values: Vec<Value>) -> Result<Self, String>;
}

impl sealed::Sealed for () {}

impl CallParams for () {
    fn types() -> Vec<ValType> {
        Vec::new()
    }
    fn with_values<T>(self, f: impl FnOnce(&[Value]) -> T) -> T {
        f(&[])
    }
}

impl CallResults for () {
    fn types() -> Vec<ValType> {
        Vec::new()
    }
    fn from_values(values: Vec<Value>) -> Result<Self, String> {
        match values.len() {
            0 => Ok(()),
            n => Err(format!("expected no results, got {n}")),
        }
    }
}

macro_rules! single_call_value {
    ($t:ty $(, $g:ident)?) => {
        impl$(<$g: Send + Sync + 'static>)? sealed::Sealed for $t {}

        impl$(<$g: Send + Sync + 'static>)? CallParams for $t {
            fn types() -> Vec<ValType> {
                vec![<$t as HostValue>::TYPE]
            }
            fn with_values<T>(self, f: impl FnOnce(&[Value]) -> T) -> T {
                f(&[self.into_value()])
            }
        }

        impl$(<$g: Send + Sync + 'static>)? CallResults for $t {
            fn types() -> Vec<ValType> {
                vec![<$t as HostValue>::TYPE]
            }
            fn from_values(values: Vec<Value>) -> Result<Self, String> {
                match <[Value; 1]>::try_from(values) {
                    Ok([v]) => <$t>::from_value(&v).map_err(|why| format!("result 0: {why}")),
                    Err(values) => Err(format!("expected 1 result, got {}", values.len())),
                }
            }
        }
    };
}
single_call_value!(i32);
single_call_value!(i64);
single_call_value!(f32);
single_call_value!(f64);
single_call_value!(Ref);
single_call_value!(HostRef<H>, H);

macro_rules! tuple_call_values {
    ($n:literal; $($t:ident $i:tt),+) => {
        impl<$($t: HostValue),+> sealed::Sealed for ($($t,)+) {}

        impl<$($t: HostValue),+> CallParams for ($($t,)+) {
            fn types() -> Vec<ValType> {
                vec![$($t::TYPE),+]
            }
            fn with_values<T>(self, f: impl FnOnce(&[Value]) -> T) -> T {
                f(&[$(self.$i.into_value()),+])
            }
        }

        impl<$($t: HostValue),+> CallResults for ($($t,)+) {
            fn types() -> Vec<ValType> {
                vec![$($t::TYPE),+]
            }
            fn from_values(values: Vec<Value>) -> Result<Self, String> {
                let values = <[Value; $n]>::try_from(values)
                    .map_err(|v| format!("expected {} results, got {}", $n, v.len()))?;
                Ok(($(
                    $t::from_value(&values[$i]).map_err(|why| format!("result {}: {why}", $i))?,
                )+))
            }
        }
    };
}
tuple_call_values!(1; A 0);
tuple_call_values!(2; A 0, B 1);
tuple_call_values!(3; A 0, B 1, C 2);
tuple_call_values!(4; A 0, B 1, C 2, D 3);
tuple_call_values!(5; A 0, B 1, C 2, D 3, E 4);
tuple_call_values!(6; A 0, B 1, C 2, D 3, E 4, F 5);
tuple_call_values!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_call_values!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_text_names_the_types() {
        assert_eq!(
            signature_text(&[ValType::I32, ValType::Ref], &[ValType::F64]),
            "(i32, ref) -> (f64)"
        );
        assert_eq!(signature_text(&[], &[]), "() -> ()");
    }

    #[test]
    fn results_convert_by_position() {
        let r = <(i32, f64)>::from_values(vec![Value::I32(1), Value::F64(2.5)]);
        assert_eq!(r, Ok((1, 2.5)));
        let e = <(i32, f64)>::from_values(vec![Value::I32(1), Value::I32(2)]).unwrap_err();
        assert!(e.starts_with("result 1: "), "{e}");
        let e = i32::from_values(vec![]).unwrap_err();
        assert_eq!(e, "expected 1 result, got 0");
    }

    #[test]
    fn params_become_values_in_order() {
        let types = <(i64, f32, Ref) as CallParams>::types();
        assert_eq!(types, [ValType::I64, ValType::F32, ValType::Ref]);
        let kinds = (7i64, 1.5f32, Ref::Null).with_values(|v| {
            v.iter()
                .map(|x| ValType::of(x).map(ValType::code))
                .collect::<Vec<_>>()
        });
        assert_eq!(kinds, [Some('I'), Some('f'), Some('r')]);
    }
}
