//! Host modules from Rust closures, in the manner of wasmtime's
//! `Func::wrap`: a closure's parameter and result types give the calling
//! convention, and closures may take the module's per-context state first.
//!
//! ```
//! use irvm::{HostRef, NativeModule, Trap};
//!
//! struct Counter(i32);
//! #[derive(Default)]
//! struct Log(Vec<i32>);
//!
//! let env = NativeModule::with_state("env", 1, Log::default)
//!     .ref_type("env.counter")
//!     // `0i_v`: takes the per-context state, then an i32.
//!     .wrap("print_i32", |log: &mut Log, x: i32| log.0.push(x))
//!     // `0i_r`: returns a new host object.
//!     .wrap("counter_new", |start: i32| HostRef::new("env.counter", Counter(start)))
//!     // `0ri_i`, fallible.
//!     .wrap("counter_get", |c: HostRef<Counter>| -> Result<i32, Trap> { Ok(c.0) });
//! assert_eq!(env.signature("counter_get"), Some("0r_i"));
//! ```

use std::sync::Arc;

use crate::func::HostValue;
use crate::host::{HostFunctionDecl, HostModule, HostOutcome, HostState, HostStatus};
use crate::trap::{StatusCode, Trap};
use crate::values::Value;

mod sealed {
    pub trait SealedResults {}
}

/// What host closures may return: nothing, one [`HostValue`], a tuple of
/// up to 4, or a `Result` of those with a [`Trap`] (an error fails the
/// call). Implemented by the library only.
pub trait HostResults: sealed::SealedResults {
    /// The result letters of the calling convention (`v` for none).
    #[doc(hidden)]
    fn kinds() -> String;
    /// The VM values.
    #[doc(hidden)]
    fn into_values(self) -> Result<Vec<Value>, Trap>;
}

impl sealed::SealedResults for () {}
impl<T: HostValue> sealed::SealedResults for T {}
impl<R: HostResults> sealed::SealedResults for Result<R, Trap> {}

impl HostResults for () {
    fn kinds() -> String {
        "v".into()
    }
    fn into_values(self) -> Result<Vec<Value>, Trap> {
        Ok(Vec::new())
    }
}

impl<T: HostValue> HostResults for T {
    fn kinds() -> String {
        T::TYPE.code().to_string()
    }
    fn into_values(self) -> Result<Vec<Value>, Trap> {
        Ok(vec![self.into_value()])
    }
}

impl<R: HostResults> HostResults for Result<R, Trap> {
    fn kinds() -> String {
        R::kinds()
    }
    fn into_values(self) -> Result<Vec<Value>, Trap> {
        self?.into_values()
    }
}

macro_rules! tuple_results {
    ($($t:ident),+) => {
        impl<$($t: HostValue),+> sealed::SealedResults for ($($t,)+) {}
        impl<$($t: HostValue),+> HostResults for ($($t,)+) {
            fn kinds() -> String {
                [$($t::TYPE.code()),+].iter().collect()
            }
            #[expect(non_snake_case, reason = "the tuple's fields are bound to its type parameters' names")]
            fn into_values(self) -> Result<Vec<Value>, Trap> {
                let ($($t,)+) = self;
                Ok(vec![$($t.into_value()),+])
            }
        }
    };
}
tuple_results!(A, B);
tuple_results!(A, B, C);
tuple_results!(A, B, C, D);

/// A function of the module: flattened arguments in, results appended to
/// the vector passed (empty on entry).
type Callback<S> = Arc<dyn Fn(&mut S, &[Value], &mut Vec<Value>) -> Result<(), Trap> + Send + Sync>;

/// Marks closures that take the module state first.
pub struct WithState;
/// Marks closures that do not take the module state.
pub struct WithoutState;

/// Closures [`NativeModule::wrap`] accepts: `Fn(&mut S, A, B, ...) -> R` or
/// `Fn(A, B, ...) -> R` with up to 8 [`HostValue`] parameters and
/// [`HostResults`] results. `Marker` only tells the two families apart.
pub trait IntoHostFunc<S, Marker> {
    /// The calling convention (`0ii_i`).
    #[doc(hidden)]
    fn calling_convention() -> String;
    /// The function as a flattened-values callback.
    #[doc(hidden)]
    fn into_callback(self, name: String) -> Callback<S>;
}

fn bad_args(name: &str, k: usize, why: String) -> Trap {
    Trap::new(
        StatusCode::InvalidArgument,
        format!("host function `{name}`: argument {k}: {why}"),
    )
}

/// The calling convention of a host function taking `args` (type codes)
/// and returning `results` (already a result string, `v` when none).
fn convention(args: &[char], results: &str) -> String {
    let args: String = args.iter().collect();
    let args = if args.is_empty() {
        "v".to_string()
    } else {
        args
    };
    format!("0{args}_{results}")
}

/// The next argument of host function `name` converted to `A`, or the
/// error naming it (missing when the call gave only `given`).
fn next_arg<'v, A: HostValue>(
    it: &mut impl Iterator<Item = (usize, &'v Value)>,
    name: &str,
    given: usize,
) -> Result<A, Trap> {
    match it.next() {
        Some((k, v)) => A::from_value(v).map_err(|w| bad_args(name, k, w)),
        None => Err(bad_args(name, given, "missing".into())),
    }
}

macro_rules! into_host_func {
    ($($a:ident),*) => {
        impl<S: Send + 'static, F, R, $($a: HostValue),*> IntoHostFunc<S, (WithState, $($a,)*)> for F
        where
            F: Fn(&mut S, $($a),*) -> R + Send + Sync + 'static,
            R: HostResults,
        {
            fn calling_convention() -> String {
                convention(&[$($a::TYPE.code()),*], &R::kinds())
            }
            #[expect(
                clippy::allow_attributes,
                reason = "the allow below cannot be an `expect`: which of its lints fire depends on the arity"
            )]
            #[allow(
                non_snake_case,
                unused_mut,
                unused_variables,
                reason = "arguments are bound to the type parameters' names (`A1`..); the zero-argument expansion never reads `it`"
            )]
            fn into_callback(self, name: String) -> Callback<S> {
                Arc::new(move |state: &mut S, args: &[Value], out: &mut Vec<Value>| {
                    let mut it = args.iter().enumerate();
                    $(let $a: $a = next_arg(&mut it, &name, args.len())?;)*
                    *out = (self)(state, $($a),*).into_values()?;
                    Ok(())
                })
            }
        }

        impl<S: Send + 'static, F, R, $($a: HostValue),*> IntoHostFunc<S, (WithoutState, $($a,)*)> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: HostResults,
        {
            fn calling_convention() -> String {
                convention(&[$($a::TYPE.code()),*], &R::kinds())
            }
            #[expect(
                clippy::allow_attributes,
                reason = "the allow below cannot be an `expect`: which of its lints fire depends on the arity"
            )]
            #[allow(
                non_snake_case,
                unused_mut,
                unused_variables,
                reason = "arguments are bound to the type parameters' names (`A1`..); the zero-argument expansion never reads `it`"
            )]
            fn into_callback(self, name: String) -> Callback<S> {
                Arc::new(move |_: &mut S, args: &[Value], out: &mut Vec<Value>| {
                    let mut it = args.iter().enumerate();
                    $(let $a: $a = next_arg(&mut it, &name, args.len())?;)*
                    *out = (self)($($a),*).into_values()?;
                    Ok(())
                })
            }
        }
    };
}
into_host_func!();
into_host_func!(A1);
into_host_func!(A1, A2);
into_host_func!(A1, A2, A3);
into_host_func!(A1, A2, A3, A4);
into_host_func!(A1, A2, A3, A4, A5);
into_host_func!(A1, A2, A3, A4, A5, A6);
into_host_func!(A1, A2, A3, A4, A5, A6, A7);
into_host_func!(A1, A2, A3, A4, A5, A6, A7, A8);

/// A host module built from Rust closures, with per-context state `S`
/// (created by the module's factory when the module is registered in a
/// context, dropped with the context).
pub struct NativeModule<S: Send + 'static = ()> {
    name: String,
    version: u32,
    factory: Arc<dyn Fn(&crate::ContextResources) -> S + Send + Sync>,
    funcs: Vec<(HostFunctionDecl, Callback<S>)>,
    types: Vec<String>,
}

impl<S: Send + 'static> Clone for NativeModule<S> {
    fn clone(&self) -> Self {
        NativeModule {
            name: self.name.clone(),
            version: self.version,
            factory: self.factory.clone(),
            funcs: self.funcs.clone(),
            types: self.types.clone(),
        }
    }
}

impl NativeModule<()> {
    /// An empty module without state.
    pub fn new(name: impl Into<String>, version: u32) -> Self {
        NativeModule::with_state(name, version, || ())
    }
}

impl<S: Send + 'static> NativeModule<S> {
    /// An empty module whose per-context state `factory` creates.
    pub fn with_state(
        name: impl Into<String>,
        version: u32,
        factory: impl Fn() -> S + Send + Sync + 'static,
    ) -> Self {
        NativeModule::with_context_state(name, version, move |_| factory())
    }

    /// An empty module whose per-context state `factory` creates from the
    /// context's [`crate::ContextResources`] (its memory budget, fuel,
    /// deadline and interrupt), for state that allocates or runs bytecode
    /// on the calling program's behalf. See [`crate::ContextResources`]
    /// for an example.
    pub fn with_context_state(
        name: impl Into<String>,
        version: u32,
        factory: impl Fn(&crate::ContextResources) -> S + Send + Sync + 'static,
    ) -> Self {
        NativeModule {
            name: name.into(),
            version,
            factory: Arc::new(factory),
            funcs: Vec::new(),
            types: Vec::new(),
        }
    }

    /// Adds a function from a typed closure; its calling convention comes
    /// from the closure's parameter and result types (see [`IntoHostFunc`]).
    pub fn wrap<M, F: IntoHostFunc<S, M>>(mut self, name: impl Into<String>, f: F) -> Self {
        let name = name.into();
        let cconv = F::calling_convention();
        let full = format!("{}.{name}", self.name);
        self.funcs.push((
            HostFunctionDecl {
                name,
                calling_convention: cconv,
            },
            f.into_callback(full),
        ));
        self
    }

    /// Adds a function taking and returning flattened [`Value`]s (for
    /// variadic calling conventions such as `0CiD_i`). The convention is
    /// checked here; the VM checks argument kinds before the closure runs.
    pub fn func(
        self,
        name: impl Into<String>,
        calling_convention: &str,
        f: impl Fn(&[Value]) -> Result<Vec<Value>, Trap> + Send + Sync + 'static,
    ) -> Result<Self, crate::loader::AbiError> {
        self.func_with_state(
            name,
            calling_convention,
            move |_: &mut S, args: &[Value]| f(args),
        )
    }

    /// Like [`NativeModule::func`], with the module state.
    pub fn func_with_state(
        self,
        name: impl Into<String>,
        calling_convention: &str,
        f: impl Fn(&mut S, &[Value]) -> Result<Vec<Value>, Trap> + Send + Sync + 'static,
    ) -> Result<Self, crate::loader::AbiError> {
        self.func_with_state_into(name, calling_convention, move |state, args, results| {
            *results = f(state, args)?;
            Ok(())
        })
    }

    /// Like [`NativeModule::func_with_state`], the closure appending its
    /// results to the vector it is given (empty on entry) instead of
    /// returning one: a call then allocates nothing for its results, for
    /// functions called once or more per model invocation (the `hal`
    /// module's).
    pub fn func_with_state_into(
        mut self,
        name: impl Into<String>,
        calling_convention: &str,
        f: impl Fn(&mut S, &[Value], &mut Vec<Value>) -> Result<(), Trap> + Send + Sync + 'static,
    ) -> Result<Self, crate::loader::AbiError> {
        crate::loader::CallingConvention::parse(calling_convention)?;
        self.funcs.push((
            HostFunctionDecl {
                name: name.into(),
                calling_convention: calling_convention.to_string(),
            },
            Arc::new(f),
        ));
        Ok(self)
    }

    /// Declares a ref type (`env.counter`, used as `!env.counter` by
    /// bytecode) that this module's functions create and accept.
    pub fn ref_type(mut self, name: impl Into<String>) -> Self {
        self.types.push(name.into());
        self
    }

    /// The module name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The calling convention of function `name`, if the module has it.
    pub fn signature(&self, name: &str) -> Option<&str> {
        self.funcs
            .iter()
            .find(|(d, _)| d.name == name)
            .map(|(d, _)| d.calling_convention.as_str())
    }
}

struct NativeState<S> {
    state: S,
    funcs: Vec<Callback<S>>,
    names: Vec<String>,
}

impl<S: Send + 'static> HostState for NativeState<S> {
    fn call(&mut self, index: usize, args: &[Value]) -> Result<HostOutcome, Trap> {
        let mut results = Vec::new();
        self.call_into(index, args, &mut results)?;
        Ok(HostOutcome::Done(results))
    }

    fn call_into(
        &mut self,
        index: usize,
        args: &[Value],
        results: &mut Vec<Value>,
    ) -> Result<HostStatus, Trap> {
        let f = self.funcs.get(index).ok_or_else(|| {
            Trap::new(
                StatusCode::NotFound,
                format!("host function {index} out of range"),
            )
        })?;
        // A panicking closure fails its call, not the process.
        let state = &mut self.state;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(state, args, results))) {
            Ok(result) => result.map(|()| HostStatus::Finished),
            Err(panic) => {
                results.clear();
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".into());
                // Dropping the payload runs its `Drop`, which may panic in
                // turn; that second panic must not escape either.
                if let Err(second) =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(panic)))
                {
                    // Its payload is leaked rather than dropped.
                    std::mem::forget(second);
                }
                Err(Trap::new(
                    StatusCode::Internal,
                    format!("host function `{}` panicked: {what}", self.names[index]),
                ))
            }
        }
    }
}

impl<S: Send + 'static> HostModule for NativeModule<S> {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> u32 {
        self.version
    }
    fn functions(&self) -> Vec<HostFunctionDecl> {
        self.funcs.iter().map(|(d, _)| d.clone()).collect()
    }
    fn instantiate(&self) -> Result<Box<dyn HostState>, Trap> {
        self.instantiate_in(&crate::ContextResources::detached())
    }
    fn instantiate_in(
        &self,
        resources: &crate::ContextResources,
    ) -> Result<Box<dyn HostState>, Trap> {
        let factory = self.factory.clone();
        let state = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| factory(resources)))
            .map_err(|_| {
            Trap::new(
                StatusCode::Internal,
                format!("state factory of host module `{}` panicked", self.name),
            )
        })?;
        Ok(Box::new(NativeState {
            state,
            funcs: self.funcs.iter().map(|(_, f)| f.clone()).collect(),
            names: self
                .funcs
                .iter()
                .map(|(d, _)| format!("{}.{}", self.name, d.name))
                .collect(),
        }))
    }
    fn ref_types(&self) -> Vec<String> {
        self.types.clone()
    }
}
