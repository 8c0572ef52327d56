//! The `hal` module's 60 exports (IREE 3.13's `modules/hal/exports.inl`:
//! names and calling conventions), each a function over flattened VM
//! values. Those irvm does not implement yet fail with UNIMPLEMENTED naming
//! the function.

use irvm::{HostRef, Ref, StatusCode, Trap, Value};

pub mod inline;
pub mod unimplemented;

use super::command::{Binding, BufferRef, Command, CommandBuffer, Workgroups};
use super::device::{DeviceConfig, DeviceOptions};
use super::element::ElementType;
use super::executable::Executable;
use super::objects::{
    hal_types, shape_text, type_names, view_byte_size, Allocator, BufferView, Device, Fence,
    HalBuffer, HalType,
};

/// Per-context state of the `hal` module: its one device and the calling
/// context's resources, which its allocations and dispatches draw on.
pub struct HalState {
    /// The CPU device `hal.devices.get(0)` returns.
    pub device: HostRef<Device>,
    /// The context's memory budget, fuel, deadline and interrupt.
    pub resources: irvm::ContextResources,
    /// Fences `hal.fence.create` hands out again once the program has let
    /// go of them.
    fences: FenceCache,
}

impl HalState {
    /// State with a fresh default device ([`DeviceOptions::default`]),
    /// drawing on `resources`.
    pub fn new(resources: irvm::ContextResources) -> HalState {
        HalState::with_device(resources, DeviceOptions::default())
    }

    /// State with a fresh device made with `options`.
    pub fn with_device(resources: irvm::ContextResources, options: DeviceOptions) -> HalState {
        HalState::on_device(resources, Device::new(DeviceConfig::new(options)))
    }

    /// State whose `hal.devices.get(0)` is `device`, drawing on `resources`.
    pub fn on_device(resources: irvm::ContextResources, device: HostRef<Device>) -> HalState {
        HalState {
            device,
            resources,
            fences: FenceCache::default(),
        }
    }
}

/// The last few fences `hal.fence.create` made, kept so that one the
/// program no longer holds is reset and handed out again instead of a new
/// allocation: a compiled function's call makes two fences and drops both
/// before it returns, so a steady run of calls allocates none. A kept
/// fence is reused only when this cache holds its sole handle
/// ([`HostRef::get_mut`]), so no one can see it change.
#[derive(Default)]
struct FenceCache {
    fences: Vec<HostRef<Fence>>,
}

impl FenceCache {
    /// Fences kept at most (more than a call holds at once in the programs
    /// iree-compile emits; each is a few words).
    const KEPT: usize = 4;

    /// A pending fence: a kept one no one else holds, reset, else a new
    /// one (kept if there is room).
    fn pending(&mut self) -> HostRef<Fence> {
        for kept in &mut self.fences {
            if let Some(fence) = kept.get_mut() {
                fence.reset();
                return kept.clone();
            }
        }
        let fence = Fence::new(false);
        if self.fences.len() < Self::KEPT {
            self.fences.push(fence.clone());
        }
        fence
    }
}

/// An export's results: at most two values, held inline, so that a hal
/// call allocates nothing for its results and hands them to the VM with a
/// move or two.
#[derive(Debug)]
pub struct ExportResults {
    values: [Value; 2],
    len: u8,
}

impl ExportResults {
    /// No results.
    pub fn none() -> Self {
        ExportResults {
            values: [Value::None, Value::None],
            len: 0,
        }
    }

    /// One result.
    pub fn one(v: Value) -> Self {
        ExportResults {
            values: [v, Value::None],
            len: 1,
        }
    }

    /// Two results.
    pub fn two(a: Value, b: Value) -> Self {
        ExportResults {
            values: [a, b],
            len: 2,
        }
    }

    /// Moves the results to the end of `out`, in order, leaving none
    /// (field by field, in place: see [`Value::take_into`]).
    pub fn take_into(&mut self, out: &mut Vec<Value>) {
        for v in &mut self.values[..usize::from(self.len)] {
            v.take_into(out);
        }
        self.len = 0;
    }
}

impl std::ops::Deref for ExportResults {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.values[..usize::from(self.len)]
    }
}

/// An export's implementation.
pub type ExportFn = fn(&mut HalState, &mut Args) -> Result<ExportResults, Trap>;

/// `(name, calling convention, implementation or None if unimplemented)`,
/// sorted by name as IREE's table is.
pub const EXPORTS: &[(&str, &str, Option<ExportFn>)] = &[
    ("allocator.allocate", "0rIiiI_r", Some(allocator_allocate)),
    ("allocator.import", "0riIiirII_r", Some(allocator_import)),
    ("allocator.select", "0iiICrID_rI", Some(allocator_select)),
    (
        "buffer.allocation.discard",
        "0r_i",
        Some(buffer_allocation_flag),
    ),
    (
        "buffer.allocation.is_terminal",
        "0r_i",
        Some(buffer_allocation_flag),
    ),
    (
        "buffer.allocation.preserve",
        "0r_v",
        Some(buffer_allocation_preserve),
    ),
    ("buffer.assert", "0rrrIii_v", Some(buffer_assert)),
    ("buffer.length", "0r_I", Some(buffer_length)),
    ("buffer.load", "0rIi_i", Some(buffer_load)),
    ("buffer.store", "0irIi_v", Some(buffer_store)),
    ("buffer.subspan", "0rII_r", Some(buffer_subspan)),
    ("buffer_view.assert", "0rriiCID_v", Some(buffer_view_assert)),
    ("buffer_view.buffer", "0r_r", Some(buffer_view_buffer)),
    (
        "buffer_view.create",
        "0rIIiiCID_r",
        Some(buffer_view_create),
    ),
    ("buffer_view.dim", "0ri_I", Some(buffer_view_dim)),
    (
        "buffer_view.element_type",
        "0r_i",
        Some(buffer_view_element_type),
    ),
    (
        "buffer_view.encoding_type",
        "0r_i",
        Some(buffer_view_encoding_type),
    ),
    ("buffer_view.rank", "0r_i", Some(buffer_view_rank)),
    ("buffer_view.trace", "0rCrD_v", Some(buffer_view_trace)),
    ("channel.create", "0rIIrrii_r", None),
    ("channel.rank_and_count", "0r_ii", None),
    ("channel.split", "0riiI_r", None),
    (
        "command_buffer.advise_buffer",
        "0rrIIIi_v",
        Some(command_buffer_advise),
    ),
    (
        "command_buffer.begin_debug_group",
        "0rr_v",
        Some(command_buffer_begin_debug_group),
    ),
    ("command_buffer.collective", "0rriiiirrIIIII_v", None),
    (
        "command_buffer.copy_buffer",
        "0riirIrIII_v",
        Some(command_buffer_copy),
    ),
    (
        "command_buffer.create",
        "0riiIi_r",
        Some(command_buffer_create),
    ),
    (
        "command_buffer.dispatch",
        "0rrIiiiICiDCiirIID_v",
        Some(command_buffer_dispatch),
    ),
    (
        "command_buffer.dispatch.indirect",
        "0rrIirIICiDCiirIID_v",
        Some(command_buffer_dispatch_indirect),
    ),
    (
        "command_buffer.end_debug_group",
        "0r_v",
        Some(command_buffer_end_debug_group),
    ),
    (
        "command_buffer.execution_barrier",
        "0riiI_v",
        Some(command_buffer_barrier),
    ),
    (
        "command_buffer.fill_buffer",
        "0rrIIiIiI_v",
        Some(command_buffer_fill),
    ),
    (
        "command_buffer.finalize",
        "0r_v",
        Some(command_buffer_finalize),
    ),
    (
        "command_buffer.flush_buffer",
        "0rirII_v",
        Some(command_buffer_flush_or_invalidate),
    ),
    (
        "command_buffer.invalidate_buffer",
        "0rirII_v",
        Some(command_buffer_flush_or_invalidate),
    ),
    (
        "command_buffer.update_buffer",
        "0rrIrIIiI_v",
        Some(command_buffer_update),
    ),
    ("device.allocator", "0r_r", Some(device_allocator)),
    ("device.query.i64", "0rrr_iI", Some(device_query_i64)),
    ("device.queue.alloca", "0rIrrIiiII_r", Some(queue_alloca)),
    ("device.queue.barrier", "0rIrrI_v", Some(queue_barrier)),
    ("device.queue.copy", "0rIrrrIrIII_v", Some(queue_copy)),
    ("device.queue.dealloca", "0rIrrrI_v", Some(queue_dealloca)),
    ("device.queue.execute", "0rIrrrI_v", Some(queue_execute)),
    (
        "device.queue.execute.indirect",
        "0rIrrrICrIID_v",
        Some(queue_execute_indirect),
    ),
    ("device.queue.fill", "0rIrrrIIIiI_v", Some(queue_fill)),
    ("device.queue.flush", "0rI_v", Some(queue_flush)),
    ("device.queue.read", "0rIrrrIrIII_v", Some(queue_read)),
    ("device.queue.update", "0rIrrrIrIII_v", Some(queue_update)),
    ("device.queue.write", "0rIrrrIrIII_v", Some(queue_write)),
    ("devices.count", "0v_i", Some(devices_count)),
    ("devices.get", "0i_r", Some(devices_get)),
    ("ex.file.from_memory", "0rIirIIi_r", Some(file_from_memory)),
    ("executable.create", "0rIrrr_r", Some(executable_create)),
    (
        "executable.lookup.function",
        "0rr_I",
        Some(executable_lookup_function),
    ),
    ("fence.await", "0iICrD_i", Some(fence_await)),
    ("fence.create", "0rI_r", Some(fence_create)),
    ("fence.fail", "0ri_v", Some(fence_fail)),
    ("fence.join", "0ICrD_r", Some(fence_join)),
    ("fence.query", "0r_i", Some(fence_query)),
    ("fence.signal", "0r_v", Some(fence_signal)),
];

/// Reads one call's flattened arguments in order, with errors naming the
/// function and argument: how the `hal` module's exports, and other host
/// modules that take hal objects (`io_parameters`), read theirs.
pub struct Args<'a> {
    module: &'a str,
    function: &'a str,
    values: &'a [Value],
    next: usize,
}

impl<'a> Args<'a> {
    /// A reader over `values` for export `function`.
    pub fn new(function: &'a str, values: &'a [Value]) -> Args<'a> {
        Args::in_module("hal", function, values)
    }

    /// A reader over `values` for export `function` of module `module`.
    pub fn in_module(module: &'a str, function: &'a str, values: &'a [Value]) -> Args<'a> {
        Args {
            module,
            function,
            values,
            next: 0,
        }
    }

    /// An error of this call.
    pub fn error(&self, code: StatusCode, message: impl std::fmt::Display) -> Trap {
        Trap::new(
            code,
            format!("{}.{}: {message}", self.module, self.function),
        )
    }

    #[inline]
    fn value(&mut self) -> Result<&'a Value, Trap> {
        let k = self.next;
        self.next += 1;
        match self.values.get(k) {
            Some(v) => Ok(v),
            None => Err(self.missing(k)),
        }
    }

    /// The error for a call with fewer arguments than its reader asks for
    /// (out of line: the argument readers are inlined into every export).
    #[cold]
    #[inline(never)]
    fn missing(&self, k: usize) -> Trap {
        self.error(StatusCode::InvalidArgument, format!("argument {k} missing"))
    }

    /// The error for argument `k`, `got`, where a `wanted` was expected.
    #[cold]
    #[inline(never)]
    fn mistyped(&self, k: usize, wanted: &str, got: &Value) -> Trap {
        self.error(
            StatusCode::InvalidArgument,
            format!("argument {k}: expected {wanted}, got {got}"),
        )
    }

    #[inline]
    pub fn i32(&mut self) -> Result<i32, Trap> {
        let k = self.next;
        match self.value()? {
            Value::I32(v) => Ok(*v),
            other => Err(self.mistyped(k, "i32", other)),
        }
    }

    #[inline]
    pub fn i64(&mut self) -> Result<i64, Trap> {
        let k = self.next;
        match self.value()? {
            Value::I64(v) => Ok(*v),
            other => Err(self.mistyped(k, "i64", other)),
        }
    }

    /// A variadic span's element count.
    fn count(&mut self) -> Result<usize, Trap> {
        let n = self.i32()?;
        usize::try_from(n).map_err(|_| {
            self.error(
                StatusCode::InvalidArgument,
                format!("negative span count {n}"),
            )
        })
    }

    pub fn any_ref(&mut self) -> Result<&'a Ref, Trap> {
        let k = self.next;
        match self.value()? {
            Value::Ref(r) => Ok(r),
            other => Err(self.error(
                StatusCode::InvalidArgument,
                format!("argument {k}: expected a ref, got {other}"),
            )),
        }
    }

    /// A host object of type `type_name` holding a `T`, or null.
    fn object_or_null<T: Send + Sync + 'static>(
        &mut self,
        type_name: &str,
    ) -> Result<Option<HostRef<T>>, Trap> {
        let k = self.next;
        let r = self.any_ref()?;
        if r.is_null() {
            return Ok(None);
        }
        HostRef::<T>::from_ref(r).map(Some).ok_or_else(|| {
            self.error(
                StatusCode::InvalidArgument,
                format!("argument {k}: expected a !{type_name}, got {r}"),
            )
        })
    }

    /// A host object of type `type_name` holding a `T`, or null, borrowed
    /// from the argument (no count taken: for objects the call only reads).
    #[inline]
    fn borrow_or_null<T: Send + Sync + 'static>(
        &mut self,
        type_name: &str,
    ) -> Result<Option<&'a T>, Trap> {
        let k = self.next;
        let r = self.any_ref()?;
        if r.is_null() {
            return Ok(None);
        }
        match r.downcast::<T>() {
            Some(v) => Ok(Some(v)),
            None => Err(self.not_a(k, type_name, r)),
        }
    }

    /// A host object of type `type_name` holding a `T`, borrowed from the
    /// argument.
    #[inline]
    fn borrow<T: Send + Sync + 'static>(&mut self, type_name: &str) -> Result<&'a T, Trap> {
        let k = self.next;
        match self.borrow_or_null(type_name)? {
            Some(v) => Ok(v),
            None => Err(self.null_for(k, type_name)),
        }
    }

    /// The error for argument `k`, `got`, where a `!type_name` was expected.
    #[cold]
    #[inline(never)]
    fn not_a(&self, k: usize, type_name: &str, got: &Ref) -> Trap {
        self.error(
            StatusCode::InvalidArgument,
            format!("argument {k}: expected a !{type_name}, got {got}"),
        )
    }

    /// The error for argument `k`, null, where a `!type_name` was expected.
    #[cold]
    #[inline(never)]
    fn null_for(&self, k: usize, type_name: &str) -> Trap {
        self.error(
            StatusCode::InvalidArgument,
            format!("argument {k}: expected a !{type_name}, got null"),
        )
    }

    /// A host object of type `type_name` holding a `T`.
    fn object<T: Send + Sync + 'static>(&mut self, type_name: &str) -> Result<HostRef<T>, Trap> {
        let k = self.next;
        self.object_or_null(type_name)?.ok_or_else(|| {
            self.error(
                StatusCode::InvalidArgument,
                format!("argument {k}: expected a !{type_name}, got null"),
            )
        })
    }

    /// A `!vm.buffer` ref (checked).
    pub fn vm_buffer(&mut self) -> Result<&'a Ref, Trap> {
        let k = self.next;
        let r = self.any_ref()?;
        match r {
            Ref::Buffer(_) => Ok(r),
            other => Err(self.error(
                StatusCode::InvalidArgument,
                format!("argument {k}: expected a !vm.buffer, got {other}"),
            )),
        }
    }

    /// A `!vm.buffer` read as text.
    pub fn string(&mut self) -> Result<String, Trap> {
        let r = self.vm_buffer()?;
        text_of(r)
    }

    pub fn buffer(&mut self) -> Result<HostRef<HalBuffer>, Trap> {
        self.object(type_names::BUFFER)
    }

    /// A `!vm.buffer` ref or null (checked).
    fn vm_buffer_or_null(&mut self) -> Result<Option<&'a Ref>, Trap> {
        let k = self.next;
        match self.any_ref()? {
            Ref::Null => Ok(None),
            r @ Ref::Buffer(_) => Ok(Some(r)),
            other => Err(self.not_a(k, "vm.buffer", other)),
        }
    }

    /// A `!hal.channel` (checked by its type: irvm makes no channels, so
    /// only an embedder's object of that type passes).
    fn channel(&mut self) -> Result<(), Trap> {
        let k = self.next;
        let r = self.any_ref()?;
        if r.is_null() {
            return Err(self.null_for(k, type_names::CHANNEL));
        }
        if r.ref_type() != Some(hal_types::CHANNEL.id()) {
            return Err(self.not_a(k, type_names::CHANNEL, r));
        }
        Ok(())
    }

    fn buffer_or_null(&mut self) -> Result<Option<HostRef<HalBuffer>>, Trap> {
        self.object_or_null(type_names::BUFFER)
    }

    fn view(&mut self) -> Result<HostRef<BufferView>, Trap> {
        self.object(type_names::BUFFER_VIEW)
    }

    pub fn device(&mut self) -> Result<HostRef<Device>, Trap> {
        self.object(type_names::DEVICE)
    }

    fn command_buffer(&mut self) -> Result<HostRef<CommandBuffer>, Trap> {
        self.object(type_names::COMMAND_BUFFER)
    }

    pub fn fence_or_null(&mut self) -> Result<Option<HostRef<Fence>>, Trap> {
        self.object_or_null(type_names::FENCE)
    }

    /// Reads the arguments every queue operation starts with (device,
    /// queue affinity, wait fence, signal fence) and waits: the device is
    /// synchronous, so a wait fence must already be signalled. A failed
    /// one fails the signal fence too, as IREE's queues do.
    pub fn queue_prologue(&mut self) -> Result<(HostRef<Device>, Option<HostRef<Fence>>), Trap> {
        let device = self.device()?;
        let _affinity = self.i64()?;
        let wait = self.borrow_or_null::<Fence>(type_names::FENCE)?;
        let signal = self.fence_or_null()?;
        self.check_wait(wait, signal.as_deref())?;
        Ok((device, signal))
    }

    /// [`Args::queue_prologue`] for the hal's own queue operations, which
    /// only read the device and fences: borrowed, no counts taken.
    fn queue_wait(&mut self) -> Result<Option<&'a Fence>, Trap> {
        self.borrow::<Device>(type_names::DEVICE)?;
        let _affinity = self.i64()?;
        let wait = self.borrow_or_null::<Fence>(type_names::FENCE)?;
        let signal = self.borrow_or_null::<Fence>(type_names::FENCE)?;
        self.check_wait(wait, signal)?;
        Ok(signal)
    }

    /// Checks that `wait` (if any) has been signalled; a failed one fails
    /// `signal` too.
    fn check_wait(&self, wait: Option<&Fence>, signal: Option<&Fence>) -> Result<(), Trap> {
        let Some(w) = wait else {
            return Ok(());
        };
        match w.status() {
            Some(Ok(())) => Ok(()),
            Some(Err((code, message))) => {
                if let Some(s) = signal {
                    s.fail(code, message.clone());
                }
                Err(self.error(code, format!("waited-on fence failed: {message}")))
            }
            None => Err(self.error(
                StatusCode::FailedPrecondition,
                "queue operation waits on a fence nothing has signalled; irvm's device \
                 is synchronous, so it would wait forever",
            )),
        }
    }

    pub fn offset(&mut self) -> Result<u64, Trap> {
        let k = self.next;
        let v = self.i64()?;
        u64::try_from(v).map_err(|_| {
            self.error(
                StatusCode::OutOfRange,
                format!("argument {k}: negative offset {v}"),
            )
        })
    }
}

fn none() -> Result<ExportResults, Trap> {
    Ok(ExportResults::none())
}

fn one(v: impl Into<Value>) -> Result<ExportResults, Trap> {
    Ok(ExportResults::one(v.into()))
}

fn obj<T: Send + Sync + 'static>(ty: &HalType, value: T) -> Value {
    Value::Ref(ty.object(value).into_ref())
}

// The exports below do nothing on irvm's device (its memory is the host's,
// coherent, and debug groups record nothing), but read their arguments as
// IREE's do: a ref of another type is INVALID_ARGUMENT, not ignored.

/// `command_buffer.advise_buffer(command_buffer, buffer or null (a slot),
/// offset, length, flags, slot)`.
fn command_buffer_advise(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.borrow::<CommandBuffer>(type_names::COMMAND_BUFFER)?;
    a.borrow_or_null::<HalBuffer>(type_names::BUFFER)?;
    none()
}

/// `command_buffer.begin_debug_group(command_buffer, label)`: the label a
/// `!vm.buffer` (or null).
fn command_buffer_begin_debug_group(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.borrow::<CommandBuffer>(type_names::COMMAND_BUFFER)?;
    let k = a.next;
    let label = a.any_ref()?;
    if !label.is_null() && !matches!(label, Ref::Buffer(_)) {
        return Err(a.error(
            StatusCode::InvalidArgument,
            format!("argument {k}: expected a !vm.buffer, got {label}"),
        ));
    }
    none()
}

/// `command_buffer.end_debug_group(command_buffer)`.
fn command_buffer_end_debug_group(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.borrow::<CommandBuffer>(type_names::COMMAND_BUFFER)?;
    none()
}

/// `command_buffer.flush_buffer` and `invalidate_buffer(command_buffer,
/// slot, buffer or null, offset, length)`.
fn command_buffer_flush_or_invalidate(
    _: &mut HalState,
    a: &mut Args,
) -> Result<ExportResults, Trap> {
    a.borrow::<CommandBuffer>(type_names::COMMAND_BUFFER)?;
    let _slot = a.i32()?;
    a.borrow_or_null::<HalBuffer>(type_names::BUFFER)?;
    none()
}

/// `device.queue.flush(device, queue affinity)`.
fn queue_flush(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.borrow::<Device>(type_names::DEVICE)?;
    none()
}

// --- allocator ------------------------------------------------------------

fn allocator_allocate(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let allocator: HostRef<Allocator> = a.object(type_names::ALLOCATOR)?;
    let (_affinity, _types, _usage) = (a.i64()?, a.i32()?, a.i32()?);
    let size = a.i64()?;
    let buffer = allocator
        .allocate(size, &state.resources)
        .map_err(|t| a.error(t.code, t.message))?;
    one(obj(&hal_types::BUFFER, buffer))
}

/// Imports of read-only memory (a module's rodata) of at most this many
/// bytes are private copies: iree-compile may import a constant and then
/// write into it in place (a sort, scatter or gather of an
/// `util.unfoldable_constant` into itself), which IREE's runtime runs
/// because it reads modules into writable memory. Larger imports (model
/// weights, never written) stay zero-copy views; a native kernel's write
/// to one lands in the module file's private mapping
/// ([`irvm::loader::FileMapping::CopyOnWrite`]), a vmvx kernel's is
/// refused (PERMISSION_DENIED).
pub const IMPORT_COPY_BYTES: u64 = 1 << 20;

fn allocator_import(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let allocator: HostRef<Allocator> = a.object(type_names::ALLOCATOR)?;
    let (_try, _affinity, _types, _usage) = (a.i32()?, a.i64()?, a.i32()?, a.i32()?);
    let source = a.vm_buffer()?.clone();
    let offset = a.offset()?;
    let length = a.i64()?;
    let buffer = HalBuffer::over(source)?
        .subspan(offset, length)
        .map_err(|t| {
            a.error(
                StatusCode::InvalidArgument,
                format!("import: {}", t.message),
            )
        })?;
    let read_only = !buffer.storage.buffer("imported memory")?.is_mutable();
    if !read_only || buffer.length > IMPORT_COPY_BYTES {
        return one(obj(&hal_types::BUFFER, buffer));
    }
    let copy = allocator
        .allocate(buffer.length as i64, &state.resources)
        .map_err(|t| a.error(t.code, t.message))?;
    let from = buffer.storage_view(buffer.offset, buffer.length)?;
    let into = copy.storage.buffer("imported memory")?;
    from.buffer("imported memory")?
        .with_bytes(|bytes| into.with_bytes_mut(|d| d.copy_from_slice(bytes)))?;
    one(obj(&hal_types::BUFFER, copy))
}

fn allocator_select(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let (_types, _usage, _flags) = (a.i32()?, a.i32()?, a.i64()?);
    let n = a.count()?;
    if n == 0 {
        return Err(a.error(
            StatusCode::NotFound,
            "no devices to select an allocator from",
        ));
    }
    let device = a.device()?;
    let affinity = a.i64()?;
    Ok(ExportResults::two(
        Value::Ref(device.to_ref()),
        Value::I64(affinity),
    ))
}

// --- buffer ---------------------------------------------------------------

fn buffer_allocation_flag(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.buffer()?;
    one(1i32)
}

/// The text of a `!vm.buffer` argument (read only when needed: the
/// asserts' messages are read only when an assert fails).
fn text_of(r: &Ref) -> Result<String, Trap> {
    let b = r.buffer("string")?;
    Ok(b.with_bytes(|bytes| String::from_utf8_lossy(bytes).into_owned()))
}

fn buffer_allocation_preserve(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.buffer()?;
    none()
}

fn buffer_assert(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let buffer = a.borrow::<HalBuffer>(type_names::BUFFER)?;
    let message = a.vm_buffer()?;
    a.borrow::<Allocator>(type_names::ALLOCATOR)?;
    let minimum = a.i64()?;
    if (buffer.length as i128) < minimum as i128 {
        let message = text_of(message)?;
        return Err(a.error(
            StatusCode::InvalidArgument,
            format!(
                "{message} buffer byte length {} less than expected minimum {minimum}",
                buffer.length
            ),
        ));
    }
    none()
}

fn buffer_length(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    one(a.buffer()?.length as i64)
}

fn buffer_load(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let buffer = a.buffer()?;
    let offset = a.offset()?;
    let length = a.i32()?;
    if !(0..=4).contains(&length) {
        return Err(a.error(
            StatusCode::InvalidArgument,
            format!("load length byte count {length} exceeds max"),
        ));
    }
    let bytes = buffer.subspan(offset, length as i64)?.to_vec()?;
    let mut word = [0u8; 4];
    word[..bytes.len()].copy_from_slice(&bytes);
    one(i32::from_le_bytes(word))
}

fn buffer_store(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let value = a.i32()?;
    let buffer = a.buffer()?;
    let offset = a.offset()?;
    let length = a.i32()?;
    if !(0..=4).contains(&length) {
        return Err(a.error(
            StatusCode::InvalidArgument,
            format!("store length byte count {length} exceeds max"),
        ));
    }
    let target = buffer.subspan(offset, length as i64).map_err(|_| {
        a.error(
            StatusCode::OutOfRange,
            format!(
                "store out of bounds (target_offset={offset}, length={length} into max {})",
                buffer.length
            ),
        )
    })?;
    let bytes = value.to_le_bytes();
    target.with_bytes_mut(|b| b.copy_from_slice(&bytes[..length as usize]))?;
    none()
}

fn buffer_subspan(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let buffer = a.buffer()?;
    let offset = a.offset()?;
    let length = a.i64()?;
    let sub = buffer.subspan(offset, length).map_err(|t| {
        a.error(
            t.code,
            format!(
                "invalid subspan of an existing buffer (source_offset={offset}, length={length}): {}",
                t.message
            ),
        )
    })?;
    one(obj(&hal_types::BUFFER, sub))
}

// --- buffer views -----------------------------------------------------------

/// A shape: ranks up to 8 need no allocation.
type Dims = smallvec::SmallVec<[i64; 8]>;

fn dims(a: &mut Args) -> Result<Dims, Trap> {
    let n = a.count()?;
    let mut shape = Dims::with_capacity(n);
    for _ in 0..n {
        shape.push(a.i64()?);
    }
    Ok(shape)
}

/// Reads a shape argument (count, dimensions) and says whether it is
/// `have`; stops reading at the first difference.
fn same_dims(a: &mut Args, have: &[i64]) -> Result<bool, Trap> {
    if a.count()? != have.len() {
        return Ok(false);
    }
    for &d in have {
        if a.i64()? != d {
            return Ok(false);
        }
    }
    Ok(true)
}

fn buffer_view_assert(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let view = a.borrow::<BufferView>(type_names::BUFFER_VIEW)?;
    let message = a.vm_buffer()?;
    let element_type = ElementType(a.i32()? as u32);
    let encoding = a.i32()? as u32;
    // The shape the view has passes without being gathered (the common
    // case, on every call of a compiled function); any other is read again
    // for the error message.
    let at_dims = a.next;
    if view.encoding == encoding
        && view.element_type.satisfies(element_type)
        && same_dims(a, &view.shape)?
    {
        return none();
    }
    a.next = at_dims;
    let shape = dims(a)?;
    let fail = |m: String| match text_of(message) {
        Ok(message) => a.error(StatusCode::InvalidArgument, format!("{message} {m}")),
        Err(e) => e,
    };
    // As IREE: the encoding first (an opaque one, 0, passes), then the
    // element type by IREE's compatibility rule (opaque data, and integers
    // of the expected width whatever their signedness, pass).
    if view.encoding != 0 && view.encoding != encoding {
        return Err(fail(format!(
            "encoding mismatch; expected {encoding:08X} but have {:08X}",
            view.encoding
        )));
    }
    if !view.element_type.satisfies(element_type) {
        return Err(fail(format!(
            "element type mismatch; expected {} ({:08X}) but have {} ({:08X})",
            element_type.name(),
            element_type.0,
            view.element_type.name(),
            view.element_type.0
        )));
    }
    // As IREE: the rank, then the first differing dimension; either way
    // both shapes are appended.
    let text = |dims: &[i64]| {
        dims.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("x")
    };
    let mismatch = if view.shape.len() != shape.len() {
        let scalar = |n: usize| if n == 0 { " (scalar)" } else { "" };
        Some(format!(
            "shape rank mismatch; expected {}{} but have {}{}",
            shape.len(),
            scalar(shape.len()),
            view.shape.len(),
            scalar(view.shape.len())
        ))
    } else {
        shape
            .iter()
            .zip(&view.shape)
            .enumerate()
            .find(|(_, (want, have))| want != have)
            .map(|(i, (want, have))| {
                format!("shape dimension {i} mismatch; expected {want} but have {have}")
            })
    };
    if let Some(mismatch) = mismatch {
        return Err(fail(format!(
            "{mismatch}; expected shape `{}`, actual shape `{}`",
            text(&shape),
            text(&view.shape)
        )));
    }
    none()
}

fn buffer_view_buffer(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let view = a.borrow::<BufferView>(type_names::BUFFER_VIEW)?;
    one(Value::Ref(view.buffer.to_ref()))
}

fn buffer_view_create(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let buffer = a.buffer()?;
    let offset = a.offset()?;
    let length = a.i64()?;
    let element_type = ElementType(a.i32()? as u32);
    let encoding = a.i32()? as u32;
    let shape = dims(a)?.into_vec();
    let buffer = if offset == 0 && length == buffer.length as i64 {
        buffer
    } else {
        let sub = buffer.subspan(offset, length).map_err(|t| {
            a.error(
                t.code,
                format!(
                    "invalid subspan of an existing buffer (source_offset={offset}, \
                     length={length}): {}",
                    t.message
                ),
            )
        })?;
        hal_types::BUFFER.object(sub)
    };
    let need = view_byte_size(&shape, element_type).map_err(|t| a.error(t.code, t.message))?;
    if need > buffer.length {
        return Err(a.error(
            StatusCode::OutOfRange,
            format!(
                "shape {} needs {need} bytes but the buffer has {}",
                shape_text(&shape, element_type),
                buffer.length
            ),
        ));
    }
    one(obj(
        &hal_types::BUFFER_VIEW,
        BufferView {
            buffer,
            shape,
            element_type,
            encoding,
        },
    ))
}

fn buffer_view_dim(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let view = a.view()?;
    let index = a.i32()?;
    let dim = usize::try_from(index)
        .ok()
        .and_then(|i| view.shape.get(i))
        .ok_or_else(|| {
            a.error(
                StatusCode::OutOfRange,
                format!("dimension {index} out of range (rank {})", view.shape.len()),
            )
        })?;
    one(*dim)
}

fn buffer_view_element_type(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    one(a.view()?.element_type.0 as i32)
}

fn buffer_view_encoding_type(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    one(a.view()?.encoding as i32)
}

fn buffer_view_rank(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    one(a.view()?.shape.len() as i32)
}

fn buffer_view_trace(s: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let key = a.vm_buffer()?;
    let n = a.count()?;
    let mut views = Vec::new();
    for _ in 0..n {
        let k = a.next;
        a.view()?;
        if let Some(Value::Ref(r)) = a.values.get(k) {
            views.push(r.clone());
        }
    }
    // Without a debug sink (`DeviceOptions::on_trace`) this only checks.
    if let Some(hook) = &s.device.config.options.on_trace {
        let Ref::Buffer(key) = key else {
            return none();
        };
        let key = key.with_bytes(|b| String::from_utf8_lossy(b).into_owned());
        (hook.0)(&key, &views).map_err(|t| a.error(t.code, t.message))?;
    }
    none()
}

// --- command buffers --------------------------------------------------------

fn command_buffer_create(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.device()?;
    let (_modes, _categories, _affinity) = (a.i32()?, a.i32()?, a.i64()?);
    let capacity = a.i32()?;
    let capacity = u32::try_from(capacity).map_err(|_| {
        a.error(
            StatusCode::InvalidArgument,
            format!("negative binding capacity {capacity}"),
        )
    })?;
    one(obj(
        &hal_types::COMMAND_BUFFER,
        CommandBuffer::new(capacity),
    ))
}

fn command_buffer_barrier(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let cb = a.command_buffer()?;
    // Stage masks and flags: every barrier orders all commands.
    let (_source, _target, _flags) = (a.i32()?, a.i32()?, a.i64()?);
    record(a, &cb, Command::Barrier)
}

fn command_buffer_finalize(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let cb = a.command_buffer()?;
    cb.finalize().map_err(|t| a.error(t.code, t.message))?;
    none()
}

fn record(a: &Args, cb: &CommandBuffer, command: Command) -> Result<ExportResults, Trap> {
    cb.record(command).map_err(|t| a.error(t.code, t.message))?;
    none()
}

fn command_buffer_fill(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let cb = a.command_buffer()?;
    let buffer = a.buffer_or_null()?;
    let offset = a.offset()?;
    let length = a.i64()?;
    let slot = a.i32()? as u32;
    let pattern = a.i64()? as u64;
    let pattern_length = a.i32()? as u32;
    let _flags = a.i64()?;
    let target = BufferRef {
        slot,
        buffer,
        offset,
        length,
    };
    record(
        a,
        &cb,
        Command::Fill {
            target,
            pattern,
            pattern_length,
        },
    )
}

fn command_buffer_update(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let cb = a.command_buffer()?;
    let source = a.vm_buffer()?.clone();
    let source_offset = a.offset()?;
    let buffer = a.buffer_or_null()?;
    let offset = a.offset()?;
    let length = a.i64()?;
    let slot = a.i32()? as u32;
    let _flags = a.i64()?;
    let len = u64::try_from(length).map_err(|_| {
        a.error(
            StatusCode::InvalidArgument,
            format!("invalid length {length}"),
        )
    })?;
    let data = source.buffer("update source")?.with_bytes(|b| {
        source_offset
            .checked_add(len)
            .and_then(|end| b.get(source_offset as usize..end as usize))
            .map(|s| s.to_vec())
    });
    let data = data.ok_or_else(|| {
        a.error(
            StatusCode::OutOfRange,
            format!("update source range {source_offset}+{len} out of bounds"),
        )
    })?;
    let target = BufferRef {
        slot,
        buffer,
        offset,
        length,
    };
    record(a, &cb, Command::Update { target, data })
}

fn command_buffer_copy(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let cb = a.command_buffer()?;
    let source_slot = a.i32()? as u32;
    let target_slot = a.i32()? as u32;
    let source_buffer = a.buffer_or_null()?;
    let source_offset = a.offset()?;
    let target_buffer = a.buffer_or_null()?;
    let target_offset = a.offset()?;
    let length = a.i64()?;
    let _flags = a.i64()?;
    let source = BufferRef {
        slot: source_slot,
        buffer: source_buffer,
        offset: source_offset,
        length,
    };
    let target = BufferRef {
        slot: target_slot,
        buffer: target_buffer,
        offset: target_offset,
        length,
    };
    record(a, &cb, Command::Copy { source, target })
}

/// Most bindings one dispatch may name (IREE's limit).
const MAX_DISPATCH_BINDINGS: usize = 32;

fn constants_and_bindings(a: &mut Args) -> Result<(Vec<u32>, Vec<BufferRef>), Trap> {
    let n = a.count()?;
    let constants = (0..n)
        .map(|_| a.i32().map(|v| v as u32))
        .collect::<Result<Vec<_>, _>>()?;
    let n = a.count()?;
    if n > MAX_DISPATCH_BINDINGS {
        return Err(a.error(
            StatusCode::OutOfRange,
            format!("binding count {n} > {MAX_DISPATCH_BINDINGS}"),
        ));
    }
    let mut bindings = Vec::with_capacity(n);
    for _ in 0..n {
        let _ordinal = a.i32()?;
        let slot = a.i32()? as u32;
        let buffer = a.buffer_or_null()?;
        let offset = a.offset()?;
        let length = a.i64()?;
        bindings.push(BufferRef {
            slot,
            buffer,
            offset,
            length,
        });
    }
    Ok((constants, bindings))
}

fn command_buffer_dispatch(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let cb = a.command_buffer()?;
    let executable: HostRef<Executable> = a.object(type_names::EXECUTABLE)?;
    let function = a.i64()?;
    let workgroups = [a.i32()? as u32, a.i32()? as u32, a.i32()? as u32];
    let _flags = a.i64()?;
    let (constants, bindings) = constants_and_bindings(a)?;
    record(
        a,
        &cb,
        Command::Dispatch {
            executable,
            function,
            workgroups: Workgroups::Static(workgroups),
            constants,
            bindings,
            location: state.resources.call_site().map(|l| l.to_string()),
        },
    )
}

fn command_buffer_dispatch_indirect(
    state: &mut HalState,
    a: &mut Args,
) -> Result<ExportResults, Trap> {
    let cb = a.command_buffer()?;
    let executable: HostRef<Executable> = a.object(type_names::EXECUTABLE)?;
    let function = a.i64()?;
    let slot = a.i32()? as u32;
    let buffer = a.buffer_or_null()?;
    let offset = a.offset()?;
    let _flags = a.i64()?;
    let (constants, bindings) = constants_and_bindings(a)?;
    let counts = BufferRef {
        slot,
        buffer,
        offset,
        length: 12,
    };
    record(
        a,
        &cb,
        Command::Dispatch {
            executable,
            function,
            workgroups: Workgroups::Indirect(counts),
            constants,
            bindings,
            location: state.resources.call_site().map(|l| l.to_string()),
        },
    )
}

// --- devices and queues -----------------------------------------------------

fn devices_count(_: &mut HalState, _: &mut Args) -> Result<ExportResults, Trap> {
    one(1i32)
}

fn devices_get(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let index = a.i32()?;
    one(if index == 0 {
        state.device.to_ref()
    } else {
        Ref::Null
    })
}

fn device_allocator(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let device = a.borrow::<Device>(type_names::DEVICE)?;
    one(Value::Ref(device.allocator.to_ref()))
}

fn device_query_i64(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let device = a.device()?;
    let category = a.string()?;
    let key = a.string()?;
    Ok(match device.query_i64(&category, &key) {
        Some(v) => ExportResults::two(Value::I32(1), Value::I64(v)),
        None => ExportResults::two(Value::I32(0), Value::I64(0)),
    })
}

/// Reads `device, affinity, wait fence, signal fence`, checks the wait
/// fence has been signalled (the device is synchronous: nothing could
/// signal it later) and returns the signal fence.
fn queue_prologue<'a>(a: &mut Args<'a>) -> Result<Option<&'a Fence>, Trap> {
    a.queue_wait()
}

/// Signals `signal` on success or fails it (and the call) on error.
fn queue_epilogue(a: &Args, signal: Option<&Fence>, result: Result<(), Trap>) -> Result<(), Trap> {
    settle(signal, &result);
    result.map_err(|t| a.error(t.code, t.message))
}

/// Signals `signal` when `result` is a success, fails it with the error
/// otherwise.
fn settle<T>(signal: Option<&Fence>, result: &Result<T, Trap>) {
    if let Some(s) = signal {
        match result {
            Ok(_) => s.signal(),
            Err(t) => s.fail(t.code, t.message.clone()),
        }
    }
}

/// Ends a queue operation as IREE's synchronous queue does: signals
/// `signal` when `result` is a success, fails it with the error otherwise,
/// and returns `result` unchanged.
pub fn signal_after<T>(signal: Option<HostRef<Fence>>, result: Result<T, Trap>) -> Result<T, Trap> {
    settle(signal.as_deref(), &result);
    result
}

fn queue_alloca(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let pool = a.i64()?;
    if pool != 0 {
        return Err(a.error(
            StatusCode::Unimplemented,
            "VM queue allocation pools are not supported",
        ));
    }
    let (_types, _usage) = (a.i32()?, a.i32()?);
    let size = a.i64()?;
    let _flags = a.i64()?;
    match state.device.allocator.allocate(size, &state.resources) {
        Ok(buffer) => {
            queue_epilogue(a, signal, Ok(()))?;
            one(obj(&hal_types::BUFFER, buffer))
        }
        Err(t) => {
            queue_epilogue(a, signal, Err(t))?;
            none()
        }
    }
}

fn queue_dealloca(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    a.buffer()?;
    let _flags = a.i64()?;
    queue_epilogue(a, signal, Ok(()))?;
    none()
}

fn queue_barrier(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let _flags = a.i64()?;
    queue_epilogue(a, signal, Ok(()))?;
    none()
}

fn queue_fill(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let buffer = a.buffer()?;
    let offset = a.offset()?;
    let length = a.i64()?;
    let pattern = a.i64()? as u64;
    let pattern_length = a.i32()? as u32;
    let _flags = a.i64()?;
    let command = Command::Fill {
        target: BufferRef::direct(buffer, offset, length),
        pattern,
        pattern_length,
    };
    let result = run_once(command, &state.resources);
    queue_epilogue(a, signal, result)?;
    none()
}

fn queue_copy(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let source = a.buffer()?;
    let source_offset = a.offset()?;
    let target = a.buffer()?;
    let target_offset = a.offset()?;
    let length = a.i64()?;
    let _flags = a.i64()?;
    let command = Command::Copy {
        source: BufferRef::direct(source, source_offset, length),
        target: BufferRef::direct(target, target_offset, length),
    };
    let result = run_once(command, &state.resources);
    queue_epilogue(a, signal, result)?;
    none()
}

fn queue_update(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let source = a.vm_buffer()?.clone();
    let source_offset = a.offset()?;
    let target = a.buffer()?;
    let target_offset = a.offset()?;
    let length = a.i64()?;
    let _flags = a.i64()?;
    // Run now, so the source need not be captured: a copy, as
    // `queue_read`'s.
    let result = HalBuffer::over(source)?
        .subspan(source_offset, length)
        .and_then(|s| run_once(copy_into(s, target, target_offset), &state.resources));
    queue_epilogue(a, signal, result)?;
    none()
}

/// A `!hal.file`: a read-only byte range of a `!vm.buffer` (IREE's
/// `ex.file.from_memory` files are read-only too).
pub struct File {
    /// The bytes.
    pub contents: HalBuffer,
}

fn file_from_memory(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.device()?;
    let _affinity = a.i64()?;
    let access = a.i32()?;
    let buffer = a.vm_buffer()?.clone();
    let offset = a.offset()?;
    let length = a.i64()?;
    let _flags = a.i32()?;
    if access & !1 != 0 {
        return Err(a.error(
            StatusCode::PermissionDenied,
            "only read-only memory can be accessed via a file handle (today)",
        ));
    }
    let contents = HalBuffer::over(buffer)?
        .subspan(offset, length)
        .map_err(|t| a.error(t.code, t.message))?;
    one(obj(&hal_types::FILE, File { contents }))
}

fn queue_read(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let file: HostRef<File> = a.object(type_names::FILE)?;
    let source_offset = a.offset()?;
    let target = a.buffer()?;
    let target_offset = a.offset()?;
    let length = a.i64()?;
    let _flags = a.i64()?;
    // A copy from the file's memory: straight into the target, in pieces
    // that the deadline can stop, charged before it starts (no copy of the
    // whole source first).
    let result = file
        .contents
        .subspan(source_offset, length)
        .and_then(|s| run_once(copy_into(s, target, target_offset), &state.resources));
    queue_epilogue(a, signal, result)?;
    none()
}

/// A copy of all of `source` to `target_offset` of `target` (whose length
/// must hold it).
fn copy_into(source: HalBuffer, target: HostRef<HalBuffer>, target_offset: u64) -> Command {
    let length = source.length as i64;
    Command::Copy {
        source: BufferRef::direct(hal_types::BUFFER.object(source), 0, length),
        target: BufferRef::direct(target, target_offset, length),
    }
}

fn queue_write(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    a.buffer()?;
    let _source_offset = a.offset()?;
    let _: HostRef<File> = a.object(type_names::FILE)?;
    let result = Err(Trap::new(
        StatusCode::PermissionDenied,
        "files from memory are read-only; nothing can be written to them",
    ));
    queue_epilogue(a, signal, result)?;
    none()
}

/// Runs one command now, as a one-command buffer with no binding table.
fn run_once(command: Command, resources: &irvm::ContextResources) -> Result<(), Trap> {
    let cb = CommandBuffer::new(0);
    cb.record(command)?;
    cb.finalize()?;
    cb.execute(&[], resources)
}

fn queue_execute(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let cb = a.borrow::<CommandBuffer>(type_names::COMMAND_BUFFER)?;
    let _flags = a.i64()?;
    let result = cb.execute(&[], &state.resources);
    queue_epilogue(a, signal, result)?;
    none()
}

fn queue_execute_indirect(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let signal = queue_prologue(a)?;
    let cb = a.borrow::<CommandBuffer>(type_names::COMMAND_BUFFER)?;
    let _flags = a.i64()?;
    let n = a.count()?;
    let mut table = BindingTable::with_capacity(n.min(1024));
    for _ in 0..n {
        let buffer = a.borrow_or_null::<HalBuffer>(type_names::BUFFER)?;
        let offset = a.offset()?;
        let length = a.i64()?;
        table.push(Binding {
            buffer,
            offset,
            length,
        });
    }
    let result = cb.execute(&table, &state.resources);
    queue_epilogue(a, signal, result)?;
    none()
}

/// A queue execution's binding table: the tables iree-compile emits have a
/// few entries, held inline.
type BindingTable<'a> = smallvec::SmallVec<[Binding<'a>; 8]>;

// --- executables ------------------------------------------------------------

fn executable_create(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.device()?;
    let _affinity = a.i64()?;
    let format = a.string()?;
    let data = a.vm_buffer()?.buffer("executable data")?.to_vec();
    let constants = executable_constants(a)?;
    let config = state.device.config.clone();
    let executable = Executable::load(&format, data, &constants, state.resources.clone(), &config)
        .map_err(|t| a.error(t.code, t.message))?;
    one(obj(&hal_types::EXECUTABLE, executable))
}

/// Reads an executable's constants: a `!vm.buffer` of 4-byte words, or
/// null for none.
fn executable_constants(a: &mut Args) -> Result<Vec<u32>, Trap> {
    match a.any_ref()? {
        Ref::Buffer(b) => {
            if b.len() % 4 != 0 {
                return Err(a.error(
                    StatusCode::InvalidArgument,
                    format!(
                        "constant buffer data must contain 4-byte elements but data length is {}",
                        b.len()
                    ),
                ));
            }
            Ok(b.with_bytes(|bytes| {
                bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            }))
        }
        _ => Ok(Vec::new()),
    }
}

fn executable_lookup_function(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let executable: HostRef<Executable> = a.object(type_names::EXECUTABLE)?;
    let name = a.string()?;
    let id = executable
        .lookup(&name)
        .map_err(|t| a.error(t.code, t.message))?;
    one(id)
}

// --- fences -----------------------------------------------------------------

fn fence_create(state: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    a.borrow::<Device>(type_names::DEVICE)?;
    let _flags = a.i64()?;
    one(Value::Ref(state.fences.pending().into_ref()))
}

fn fence_join(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let _flags = a.i64()?;
    let n = a.count()?;
    let mut fences = Vec::new();
    for _ in 0..n {
        if let Some(f) = a.fence_or_null()? {
            fences.push(f);
        }
    }
    // Fences holding no timepoint among them (none given, nulls, joins of
    // nothing) join to a null fence, settled by definition, as IREE's
    // `hal.fence.join` answers them.
    if fences.iter().all(|f| f.timepoint_count() == 0) {
        return one(Value::Ref(Ref::Null));
    }
    // A join of settled fences is settled now; of pending ones, never
    // (nothing runs in the background).
    let joined = Fence::joining(&fences);
    let mut outcome = Some(Ok(()));
    for f in &fences {
        match f.status() {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                outcome = Some(Err(e));
                break;
            }
            None => outcome = None,
        }
    }
    match outcome {
        Some(Ok(())) => joined.signal(),
        Some(Err((code, message))) => joined.fail(code, message),
        None => {}
    }
    one(Value::Ref(joined.into_ref()))
}

fn fence_query(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let fence: HostRef<Fence> = a.object(type_names::FENCE)?;
    one(match fence.status() {
        Some(Ok(())) => 0,
        Some(Err((code, _))) => code as i32,
        None => StatusCode::Deferred as i32,
    })
}

fn fence_signal(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let fence: HostRef<Fence> = a.object(type_names::FENCE)?;
    fence.signal();
    none()
}

fn fence_fail(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let fence: HostRef<Fence> = a.object(type_names::FENCE)?;
    let code = a.i32()?;
    // As IREE reads it: the low 5 bits (IREE_STATUS_CODE_MASK).
    let code = StatusCode::from_u32(code as u32 & 0x1F);
    if code == StatusCode::Ok {
        // IREE 3.13 makes an OK status of it, which fails nothing the
        // same way twice (waiters are released, a query still finds the
        // fence pending): refused here, as no failure at all.
        return Err(a.error(
            StatusCode::InvalidArgument,
            "status 0 (OK) is not a failure; \
             hal.fence.signal signals a fence",
        ));
    }
    fence.fail(code, "failed by the program (hal.fence.fail)".into());
    none()
}

fn fence_await(_: &mut HalState, a: &mut Args) -> Result<ExportResults, Trap> {
    let timeout_millis = a.i32()?;
    let _flags = a.i64()?;
    let n = a.count()?;
    for _ in 0..n {
        let Some(fence) = a.borrow_or_null::<Fence>(type_names::FENCE)? else {
            continue;
        };
        match fence.status() {
            Some(Ok(())) => {}
            Some(Err((code, _))) => return one(code as i32),
            None if timeout_millis == 0 => return one(StatusCode::DeadlineExceeded as i32),
            None => {
                return Err(a.error(
                    StatusCode::FailedPrecondition,
                    "waiting on a fence nothing will signal; irvm's device is synchronous, \
                     so the wait would never end",
                ))
            }
        }
    }
    one(0i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use irvm::Buffer;

    fn call(state: &mut HalState, name: &str, args: &[Value]) -> Result<Vec<Value>, Trap> {
        let (_, _, f) = EXPORTS.iter().find(|e| e.0 == name).unwrap();
        let mut results = Vec::new();
        f.unwrap()(state, &mut Args::new(name, args))?.take_into(&mut results);
        Ok(results)
    }

    #[test]
    fn files_from_memory_are_read_into_buffers() {
        let mut state = HalState::new(irvm::ContextResources::detached());
        let device = Value::Ref(state.device.to_ref());
        let bytes = Value::Ref(Ref::from(Buffer::from_vec((0u8..16).collect())));
        let file = call(
            &mut state,
            "ex.file.from_memory",
            &[
                device.clone(),
                Value::I64(0),
                Value::I32(1),
                bytes,
                Value::I64(4),
                Value::I64(8),
                Value::I32(0),
            ],
        )
        .unwrap()
        .remove(0);
        let target = Allocator::new().allocate(8, &state.resources).unwrap();
        let target_ref = Value::Ref(hal_types::BUFFER.object(target.clone()).to_ref());
        let null = Value::Ref(Ref::Null);
        let read = |state: &mut HalState, src: i64, len: i64| {
            call(
                state,
                "device.queue.read",
                &[
                    device.clone(),
                    Value::I64(0),
                    null.clone(),
                    null.clone(),
                    file.clone(),
                    Value::I64(src),
                    target_ref.clone(),
                    Value::I64(2),
                    Value::I64(len),
                    Value::I64(0),
                ],
            )
        };
        read(&mut state, 1, 4).unwrap();
        assert_eq!(target.to_vec().unwrap(), vec![0, 0, 5, 6, 7, 8, 0, 0]);
        // Past the end of the file's 8 bytes.
        assert!(read(&mut state, 6, 4).is_err());
        let write = call(
            &mut state,
            "device.queue.write",
            &[
                device.clone(),
                Value::I64(0),
                null.clone(),
                null,
                target_ref,
                Value::I64(0),
                file,
                Value::I64(0),
                Value::I64(4),
                Value::I64(0),
            ],
        );
        assert_eq!(write.unwrap_err().code, StatusCode::PermissionDenied);
    }

    fn fence_create(state: &mut HalState) -> Value {
        let device = Value::Ref(state.device.to_ref());
        call(state, "fence.create", &[device, Value::I64(0)])
            .unwrap()
            .remove(0)
    }

    fn fence_status(state: &mut HalState, fence: &Value) -> i32 {
        match call(state, "fence.query", std::slice::from_ref(fence)).unwrap()[..] {
            [Value::I32(status)] => status,
            ref other => panic!("fence.query returned {other:?}"),
        }
    }

    fn same_object(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Ref(a), Value::Ref(b)) => a.ptr_eq(b),
            _ => false,
        }
    }

    #[test]
    fn fences_let_go_of_are_reset_and_handed_out_again() {
        let mut state = HalState::new(irvm::ContextResources::detached());
        let first = fence_create(&mut state);
        let second = fence_create(&mut state);
        assert!(
            !same_object(&first, &second),
            "a held fence was handed out again"
        );
        call(&mut state, "fence.fail", &[first.clone(), Value::I32(13)]).unwrap();
        call(&mut state, "fence.signal", std::slice::from_ref(&second)).unwrap();
        assert_eq!(fence_status(&mut state, &first), 13);
        drop(first);
        // The failed fence no one holds any more comes back pending; the
        // signalled one still held keeps its state.
        let third = fence_create(&mut state);
        assert_eq!(
            fence_status(&mut state, &third),
            StatusCode::Deferred as i32
        );
        assert_eq!(fence_status(&mut state, &second), 0);
        assert_eq!(state.fences.fences.len(), 2, "a new fence was made");
        assert!(state
            .fences
            .fences
            .iter()
            .any(|kept| same_object(&Value::Ref(kept.to_ref()), &third)));
        // Past the cache's room, fences are made and not kept.
        let held: Vec<Value> = (0..2 * FenceCache::KEPT)
            .map(|_| fence_create(&mut state))
            .collect();
        assert_eq!(state.fences.fences.len(), FenceCache::KEPT);
        for (i, f) in held.iter().enumerate() {
            assert_eq!(fence_status(&mut state, f), StatusCode::Deferred as i32);
            assert!(held[..i].iter().all(|g| !same_object(f, g)));
        }
    }

    #[test]
    fn buffer_view_asserts_name_the_first_difference() {
        let mut state = HalState::new(irvm::ContextResources::detached());
        let view = BufferView::from_slice(&[2, 3], &[0f32; 6])
            .unwrap()
            .into_value();
        let message = Value::Ref(Ref::from(Buffer::from_vec(b"input 0".to_vec())));
        let assert_shape = |state: &mut HalState, ty: ElementType, shape: &[i64]| {
            let mut args = vec![
                view.clone(),
                message.clone(),
                Value::I32(ty.0 as i32),
                Value::I32(1),
                Value::I32(shape.len() as i32),
            ];
            args.extend(shape.iter().map(|&d| Value::I64(d)));
            call(state, "buffer_view.assert", &args).map(|_| ())
        };
        assert_shape(&mut state, ElementType::F32, &[2, 3]).unwrap();
        let err = |r: Result<(), Trap>| r.unwrap_err().message;
        assert_eq!(
            err(assert_shape(&mut state, ElementType::F32, &[2, 4])),
            "hal.buffer_view.assert: input 0 shape dimension 1 mismatch; expected 4 but have 3; \
             expected shape `2x4`, actual shape `2x3`"
        );
        assert_eq!(
            err(assert_shape(&mut state, ElementType::F32, &[2])),
            "hal.buffer_view.assert: input 0 shape rank mismatch; expected 1 but have 2; \
             expected shape `2`, actual shape `2x3`"
        );
        assert_eq!(
            err(assert_shape(&mut state, ElementType::F32, &[])),
            "hal.buffer_view.assert: input 0 shape rank mismatch; expected 0 (scalar) but have \
             2; expected shape ``, actual shape `2x3`"
        );
        assert!(err(assert_shape(&mut state, ElementType::I32, &[2, 3]))
            .starts_with("hal.buffer_view.assert: input 0 element type mismatch; expected i32"));
        // A shape argument cut short is an error, not a pass.
        let cut = [
            view.clone(),
            message.clone(),
            Value::I32(ElementType::F32.0 as i32),
            Value::I32(1),
            Value::I32(2),
            Value::I64(2),
        ];
        assert!(call(&mut state, "buffer_view.assert", &cut)
            .unwrap_err()
            .message
            .contains("argument 6 missing"));
    }
}
