//! The hal module's functions as an embedder sees them through irvm's
//! public API, before and after registering it: the table
//! (`HostModule::functions`: IREE 3.13's 60 exports, sorted by name as
//! IREE's native module looks them up, so a function's place is IREE's
//! ordinal, with IREE's calling conventions), and calls made from the host
//! with `Context::function` and `Context::invoke`, each result passed to
//! the next call. `irvm.compat` lists the hal module's functions and calls
//! them this way (`VmModule.function_names`, `VmContext.invoke`).

use irvm::{Context, HostModule, Ref, TypeRegistry, Value};
use irvm_hal::{hal_module, BufferView};

#[test]
fn the_hal_table_is_iree_runtimes_sorted_with_its_calling_conventions() {
    let module = hal_module().unwrap();
    assert_eq!((module.name(), module.version()), ("hal", 7));
    let functions = module.functions();
    let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.len(), 60);
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        names, sorted,
        "IREE's ordinals are places in the sorted table"
    );
    // Ordinals and calling conventions iree.runtime 3.13 shows
    // (`create_hal_module(...).lookup_function(name)`).
    for (ordinal, name, cconv) in [
        (13, "buffer_view.create", "0rIIiiCID_r"),
        (14, "buffer_view.dim", "0ri_I"),
        (36, "device.allocator", "0r_r"),
        (49, "devices.count", "0v_i"),
        (50, "devices.get", "0i_r"),
        (54, "fence.await", "0iICrD_i"),
    ] {
        assert_eq!(names[ordinal], name);
        assert_eq!(functions[ordinal].calling_convention, cconv, "{name}");
    }
}

#[test]
fn hal_functions_are_called_from_the_host_one_result_feeding_the_next() {
    let mut ctx = Context::new(&TypeRegistry::new());
    ctx.register_host_module(&hal_module().unwrap()).unwrap();
    let mut call = |name: &str, args: &[Value]| {
        let f = ctx.function(name).unwrap();
        ctx.invoke(&f, args).unwrap()
    };
    assert!(matches!(
        call("hal.devices.count", &[])[..],
        [Value::I32(1)]
    ));
    let device = call("hal.devices.get", &[Value::I32(0)]);
    assert_eq!(device.len(), 1);
    assert_eq!(format!("{:?}", device[0]), "Ref(!hal.device)");
    // No second device: a null ref, as IREE's hal gives.
    assert!(matches!(
        call("hal.devices.get", &[Value::I32(1)])[..],
        [Value::Ref(Ref::Null)]
    ));
    let allocator = call("hal.device.allocator", &device);
    assert_eq!(format!("{:?}", allocator[0]), "Ref(!hal.allocator)");
    let view = BufferView::from_slice(&[2, 3], &[0f32, 1., 2., 3., 4., 5.])
        .unwrap()
        .into_value();
    assert!(matches!(
        call("hal.buffer_view.rank", std::slice::from_ref(&view))[..],
        [Value::I32(2)]
    ));
    assert!(matches!(
        call("hal.buffer_view.dim", &[view.clone(), Value::I32(1)])[..],
        [Value::I64(3)]
    ));
    let buffer = call("hal.buffer_view.buffer", &[view]);
    assert!(matches!(
        call("hal.buffer.length", &buffer)[..],
        [Value::I64(24)]
    ));
    // The f32 2.0 at byte 8.
    assert!(matches!(
        call(
            "hal.buffer.load",
            &[buffer[0].clone(), Value::I64(8), Value::I32(4)]
        )[..],
        [Value::I32(0x4000_0000)]
    ));
}

#[test]
fn functions_that_do_nothing_on_this_device_still_check_their_refs() {
    // advise/flush/invalidate_buffer, debug groups and queue.flush have
    // nothing to do on irvm's device, but IREE's refuse a ref of another
    // type (INVALID_ARGUMENT, `iree_hal_command_buffer_check_deref`);
    // before, irvm's took any ref (a buffer view for a command buffer).
    let mut hal = HalSession::new();
    let (device, cb) = (hal.device.clone(), hal.command_buffer.clone());
    let mut call = |name: &str, args: &[Value]| hal.call(name, args);
    let view = BufferView::from_slice(&[2], &[0f32, 1.])
        .unwrap()
        .into_value();
    let buffer = call("hal.buffer_view.buffer", std::slice::from_ref(&view))
        .unwrap()
        .remove(0);
    let (i32_, i64_) = (Value::I32(0), Value::I64(0));
    let with = |first: &Value, ref_arg: &Value, name: &str| -> Vec<Value> {
        match name {
            "hal.command_buffer.advise_buffer" => vec![
                first.clone(),
                ref_arg.clone(),
                i64_.clone(),
                i64_.clone(),
                i64_.clone(),
                i32_.clone(),
            ],
            "hal.command_buffer.begin_debug_group" => vec![first.clone(), Value::Ref(Ref::Null)],
            "hal.command_buffer.end_debug_group" => vec![first.clone()],
            "hal.device.queue.flush" => vec![first.clone(), Value::I64(-1)],
            _ => vec![
                first.clone(),
                i32_.clone(),
                ref_arg.clone(),
                i64_.clone(),
                i64_.clone(),
            ],
        }
    };
    for name in [
        "hal.command_buffer.advise_buffer",
        "hal.command_buffer.begin_debug_group",
        "hal.command_buffer.end_debug_group",
        "hal.command_buffer.flush_buffer",
        "hal.command_buffer.invalidate_buffer",
        "hal.device.queue.flush",
    ] {
        let right = if name == "hal.device.queue.flush" {
            &device
        } else {
            &cb
        };
        assert!(
            call(name, &with(right, &buffer, name)).is_ok(),
            "{name} with the refs it takes"
        );
        let refused = call(name, &with(&view, &buffer, name)).unwrap_err();
        assert!(
            refused.starts_with("InvalidArgument")
                && refused.contains("argument 0: expected a !hal."),
            "{name}: {refused}"
        );
        if name.ends_with("_buffer") {
            let refused = call(name, &with(right, &view, name)).unwrap_err();
            assert!(
                refused.contains("expected a !hal.buffer, got"),
                "{name}: {refused}"
            );
        }
    }
}

#[test]
fn unimplemented_functions_check_their_arguments_before_refusing() {
    // IREE 3.13 checks each ref (`iree_hal_device_check_deref`,
    // `iree_hal_channel_check_deref`, ...) before it reaches the
    // unimplemented channel code: a ref of another type is
    // INVALID_ARGUMENT there. irvm answered UNIMPLEMENTED to any call.
    let mut hal = HalSession::new();
    let (device, cb) = (hal.device.clone(), hal.command_buffer.clone());
    let mut call = |name: &str, args: &[Value]| hal.call(name, args);
    let view = BufferView::from_slice(&[2], &[0f32, 1.])
        .unwrap()
        .into_value();
    // irvm makes no channels; an embedder's object of the type passes.
    let channel = Value::Ref(irvm::HostRef::new("hal.channel", ()).into_ref());
    let null = Value::Ref(Ref::Null);
    let (i32_, i64_) = (Value::I32(0), Value::I64(0));
    let create = |device: &Value, id: &Value| {
        vec![
            device.clone(),
            i64_.clone(),
            i64_.clone(),
            id.clone(),
            null.clone(),
            i32_.clone(),
            i32_.clone(),
        ]
    };
    let split = |channel: &Value| vec![channel.clone(), i32_.clone(), i32_.clone(), i64_.clone()];
    let collective = |cb: &Value, channel: &Value, send: &Value| {
        let mut args = vec![cb.clone(), channel.clone()];
        args.extend([i32_.clone(), i32_.clone(), i32_.clone(), i32_.clone()]);
        args.extend([send.clone(), null.clone()]);
        args.extend(std::iter::repeat_n(i64_.clone(), 5));
        args
    };
    let refusals = [
        (
            "hal.channel.create",
            create(&view, &null),
            "argument 0: expected a !hal.device, got !hal.buffer_view",
        ),
        (
            "hal.channel.create",
            create(&null, &null),
            "argument 0: expected a !hal.device, got null",
        ),
        (
            "hal.channel.create",
            create(&device, &view),
            "argument 3: expected a !vm.buffer, got !hal.buffer_view",
        ),
        (
            "hal.channel.rank_and_count",
            vec![view.clone()],
            "argument 0: expected a !hal.channel, got !hal.buffer_view",
        ),
        (
            "hal.channel.rank_and_count",
            vec![null.clone()],
            "argument 0: expected a !hal.channel, got null",
        ),
        (
            "hal.channel.split",
            split(&device),
            "argument 0: expected a !hal.channel, got !hal.device",
        ),
        (
            "hal.command_buffer.collective",
            collective(&view, &channel, &null),
            "argument 0: expected a !hal.command_buffer, got !hal.buffer_view",
        ),
        (
            "hal.command_buffer.collective",
            collective(&cb, &cb, &null),
            "argument 1: expected a !hal.channel, got !hal.command_buffer",
        ),
        (
            "hal.command_buffer.collective",
            collective(&cb, &channel, &view),
            "argument 6: expected a !hal.buffer, got !hal.buffer_view",
        ),
    ];
    for (name, args, expected) in refusals {
        let refused = call(name, &args).unwrap_err();
        assert!(
            refused.starts_with("InvalidArgument") && refused.contains(expected),
            "{name}: {refused}"
        );
    }
    // Well-formed calls: UNIMPLEMENTED, naming the function.
    for (name, args) in [
        ("hal.channel.create", create(&device, &null)),
        ("hal.channel.rank_and_count", vec![channel.clone()]),
        ("hal.channel.split", split(&channel)),
        (
            "hal.command_buffer.collective",
            collective(&cb, &channel, &null),
        ),
    ] {
        assert_eq!(
            call(name, &args).unwrap_err(),
            format!("Unimplemented {name} is not implemented by irvm yet"),
        );
    }
}

/// A context holding only the hal module, its device and a command buffer
/// made on it, for calls from the host whose refusals the tests read.
struct HalSession {
    ctx: Context,
    device: Value,
    command_buffer: Value,
}

impl HalSession {
    fn new() -> HalSession {
        let mut ctx = Context::new(&TypeRegistry::new());
        ctx.register_host_module(&hal_module().unwrap()).unwrap();
        let mut hal = HalSession {
            ctx,
            device: Value::Ref(Ref::Null),
            command_buffer: Value::Ref(Ref::Null),
        };
        hal.device = hal
            .call("hal.devices.get", &[Value::I32(0)])
            .unwrap()
            .remove(0);
        let flags = [Value::I32(1), Value::I32(3), Value::I64(-1), Value::I32(0)];
        let args: Vec<Value> = std::iter::once(hal.device.clone()).chain(flags).collect();
        hal.command_buffer = hal
            .call("hal.command_buffer.create", &args)
            .unwrap()
            .remove(0);
        hal
    }

    /// `name`'s results, or its trap as `"{code:?} {message}"`.
    fn call(&mut self, name: &str, args: &[Value]) -> Result<Vec<Value>, String> {
        let f = self.ctx.function(name).unwrap();
        self.ctx
            .invoke(&f, args)
            .map_err(|t| format!("{:?} {}", t.code, t.message))
    }
}
