//! Compile-time checks of the embedding API: what may cross threads, and
//! the typed-call signatures. The file passes by compiling; each `#[test]`
//! only makes the checks part of `cargo test`.

use irvm::errors::{LinkError, LookupError};
use irvm::{
    Buffer, CallState, Context, Func, HostRef, List, Module, NativeModule, Ref, Trap, TypeRegistry,
    TypedFunc, Value,
};

fn send<T: Send>() {}
fn send_sync<T: Send + Sync>() {}

#[test]
fn contexts_and_call_results_cross_threads() {
    send::<Context>();
    send::<CallState>();
    send::<CallState<(i32, Ref)>>();
    send_sync::<Value>();
    send_sync::<Ref>();
    send_sync::<Buffer>();
    send_sync::<List>();
    send_sync::<HostRef<std::sync::Mutex<Vec<u8>>>>();
    send_sync::<Trap>();
    send_sync::<LinkError>();
    send_sync::<LookupError>();
    send_sync::<Module>();
    send_sync::<Func>();
    send_sync::<TypedFunc<(i32, i64, f32, f64), (Ref, i32)>>();
    send_sync::<NativeModule<Vec<u8>>>();
    send_sync::<std::sync::Arc<TypeRegistry>>();
}

/// The shapes typed calls have: parameters and results as Rust values,
/// tuples for several, `()` for none, errors as `Trap`/`LookupError`.
fn typed_signatures(ctx: &mut Context) -> Result<(), Box<dyn std::error::Error>> {
    let add: TypedFunc<(i32, i32), i32> = ctx.typed_func("add")?;
    let _: Result<i32, Trap> = add.call(ctx, (40, 2));
    let none: TypedFunc<(), ()> = ctx.typed_func("f")?;
    let _: Result<(), Trap> = none.call(ctx, ());
    let wide: TypedFunc<(i64, f64), (f32, i64)> = ctx.typed_func("g")?;
    let _: Result<(f32, i64), Trap> = wide.call(ctx, (1, 2.0));
    let refs: TypedFunc<(Ref, HostRef<u8>), Ref> = ctx.typed_func("h")?;
    let _: Result<CallState<Ref>, Trap> = refs.begin_call(ctx, (Ref::Null, HostRef::new("t", 1u8)));
    let _: Result<CallState<Ref>, Trap> = refs.resume(ctx);
    type Eight = (i32, i32, i32, i32, i32, i32, i32, i32);
    let eight: TypedFunc<Eight, ()> = ctx.typed_func("e")?;
    let _: &Func = eight.func();
    let _: Result<Func, LookupError> = ctx.function("add");
    Ok(())
}

#[test]
fn typed_signatures_compile() {
    let _ = typed_signatures;
}
