//! [`TypeRegistry`] (the type registry shared by contexts) and [`Context`] (the
//! modules of one program, their per-context state, and the import links
//! between them), plus the embedding API to look up and call functions.
//!
//! Registering modules is the child module `link`; what registration
//! leaves behind for each module (functions, import links, globals) is
//! `state`.

use std::sync::{Arc, RwLock};

use crate::exec::{self, Stack};
use crate::func::{CallParams, CallResults, Func, FuncTarget, LookupError, TypedFunc};
use crate::loader::Module;
use crate::program::Signature;
use crate::trap::{StatusCode, Trap, TrapFrame};
use crate::values::Value;
use crate::values::{ElementType, Ref, RefType, TypeDef};

mod aside;
mod link;
mod state;

pub use link::LinkError;
pub(crate) use state::{BytecodeInstance, HostInstance, ImportTarget, Registered};

/// The registry of reference types, shared by every context created from
/// it (and across threads).
#[derive(Debug)]
pub struct TypeRegistry {
    /// Host types registered through this registry (for listing).
    types: RwLock<Vec<RefType>>,
}

impl TypeRegistry {
    /// A new registry with the built-in types (`vm.buffer`, `vm.list`).
    pub fn new() -> Arc<TypeRegistry> {
        Arc::new(TypeRegistry {
            types: RwLock::new(Vec::new()),
        })
    }

    /// Registers a host reference type named `name` (without `!`), or
    /// returns the existing id of that name. Ids are process-wide (see
    /// [`RefType::named`]).
    pub fn register_type(&self, name: &str) -> RefType {
        let t = RefType::named(name);
        let mut types = self.types.write().unwrap_or_else(|e| e.into_inner());
        if !types.contains(&t) {
            types.push(t);
        }
        t
    }

    /// The id of the type named `name` (without `!`), if registered.
    pub fn lookup_type(&self, name: &str) -> Option<RefType> {
        RefType::lookup(name)
    }

    /// Resolves a module type-table name (`i32`, `!vm.buffer`, `!vm.list<...>`,
    /// `!vm.opaque`, a registered `!name`). As in the reference, `?` and
    /// `!vm.ref<?>` are not names of any type (a `!vm.list<?>` allocation
    /// names its element `?` and fails to load).
    pub fn resolve_type_name(&self, full_name: &str) -> Option<TypeDef> {
        Some(match full_name {
            "i8" => TypeDef::Value(ElementType::I8),
            "i16" => TypeDef::Value(ElementType::I16),
            "i32" => TypeDef::Value(ElementType::I32),
            "i64" => TypeDef::Value(ElementType::I64),
            "f32" => TypeDef::Value(ElementType::F32),
            "f64" => TypeDef::Value(ElementType::F64),
            "!vm.opaque" => TypeDef::Any,
            n => TypeDef::Ref(self.lookup_type(n.strip_prefix('!')?)?),
        })
    }
}

/// How a call through [`Context::begin_call`] or [`Context::resume`] (or
/// [`TypedFunc::begin_call`](crate::TypedFunc::begin_call), then with typed
/// results `T`) ended.
#[derive(Clone, Debug, PartialEq)]
pub enum CallState<T = Vec<Value>> {
    /// Finished with these results.
    Done(T),
    /// The program yielded; call [`Context::resume`] to continue.
    Yielded,
    /// An [`crate::debug::Observer`] paused before an instruction; inspect
    /// with [`Context::frames`], continue with [`Context::resume`].
    Paused,
}

/// The modules of one program and their state: bytecode modules and host
/// modules in registration order, each module's globals and rodata, the
/// links from imports to exports, the call stack of a yielded or paused
/// call, and the program's [`Limits`].
///
/// Register host modules before the bytecode modules that import from
/// them; [`Context::register_module`] links imports and runs the module's
/// `__init`. Call exports through [`Context::typed_func`] (checked once,
/// Rust values) or [`Context::function`] and [`Context::invoke`]
/// ([`Value`] slices, checked per call). A call that yields is driven with
/// `begin_call` and `resume`.
///
/// A context is `Send`: it may move to another thread with everything in
/// it (host module state must be `Send`, host objects `Send + Sync`), and
/// is used from one thread at a time (`&mut self`).
///
/// ```
/// use irvm::{CallState, Context, TypeRegistry, Limits, Module, StatusCode};
///
/// let module = Module::from_assembly(
///     r#"
/// vm.module @counter version 0
/// vm.export @steps
/// vm.func @steps(%i0: i32) -> (i32, i32) {
/// ^bb0:
///   %i1 = vm.const.i32 1
///   %i2 = vm.add.i32 %i0, %i1
///   vm.yield ^bb1()
/// ^bb1:
///   %i3 = vm.add.i32 %i2, %i1
///   vm.return %i2, %i3
/// }
/// vm.export @spin
/// vm.func @spin() -> () {
/// ^bb0:
///   vm.br ^bb0()
/// }
/// "#,
///     "counter.vmasm",
/// )?;
/// let registry = TypeRegistry::new();
/// let mut ctx = Context::with_limits(&registry, Limits { max_stack_depth: 256, ..Limits::default() });
/// ctx.register_module(module)?;
///
/// // Two results come back as a tuple; the yield is resumed by `call`.
/// let steps = ctx.typed_func::<i32, (i32, i32)>("counter.steps")?;
/// assert_eq!(steps.call(&mut ctx, 1)?, (2, 3));
///
/// // Or step through the yield.
/// let mut state = steps.begin_call(&mut ctx, 10)?;
/// assert_eq!(state, CallState::Yielded);
/// state = steps.resume(&mut ctx)?;
/// assert_eq!(state, CallState::Done((11, 12)));
///
/// // A budget of instructions ends a call that would never return.
/// ctx.set_fuel(Some(10_000));
/// let spin = ctx.typed_func::<(), ()>("spin")?;
/// assert_eq!(spin.call(&mut ctx, ()).unwrap_err().code, StatusCode::ResourceExhausted);
///
/// // Lookup errors say what there is.
/// let missing = ctx.function("counter.step").unwrap_err();
/// assert_eq!(
///     missing.to_string(),
///     "NOT_FOUND; no function `step` exported by module `counter`; exports: steps, spin"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Context {
    registry: Arc<TypeRegistry>,
    /// Unique per context in the process: a [`Func`] remembers it, so a
    /// function is only ever called in the context it was found in.
    id: u64,
    pub(crate) modules: Vec<Registered>,
    pub(crate) stack: Stack,
    pub(crate) limits: Limits,
    pub(crate) hooks: crate::exec::hooks::Hooks,
    /// Lists allocated by bytecode, for the cycle collector.
    pub(crate) lists: crate::values::list::cycles::ListTracker,
    /// Host functions called from bytecode ([`Context::host_calls`]).
    pub(crate) host_calls: u64,
    /// Times the interpreter entered compiled code
    /// ([`Context::compiled_entries`]).
    pub(crate) compiled_entries: u64,
    /// What the context's programs hold against `Limits::max_memory_bytes`.
    pub(crate) memory: Arc<crate::budget::MemoryBudget>,
    /// What host modules see of the context ([`crate::ContextResources`]).
    pub(crate) resources: crate::ContextResources,
    /// `Some` while a debugger asks to see the frames of a failed call:
    /// the frames as they were when the last call trapped.
    pub(crate) trap_frames: Option<Vec<FrameInfo>>,
    /// Which tier runs bytecode ([`Context::set_tier`]).
    pub(crate) tier: crate::Tier,
}

impl Drop for Context {
    fn drop(&mut self) {
        // Release the holders that die with the context (the registers of a
        // paused or suspended call, the ref globals), then reclaim the
        // cycles left behind. Host module states drop afterwards, with the
        // modules, as before: objects they hold count as outside holders.
        self.stack = Stack::with_budget(&self.memory);
        for m in &mut self.modules {
            if let Registered::Bytecode(b) = m {
                b.global_refs.clear();
            }
        }
        self.lists.collect();
    }
}

/// Resource limits of a context's invocations (see [`Context::set_limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest call stack, in frames; a call beyond it fails with
    /// RESOURCE_EXHAUSTED ("VM stack overflow").
    pub max_stack_depth: usize,
    /// Largest `vm.buffer.alloc`/`vm.buffer.clone`, in bytes.
    pub max_buffer_bytes: u64,
    /// Largest list capacity or size (`vm.list.alloc`/`reserve`/`resize`),
    /// in elements.
    pub max_list_elements: u32,
    /// Largest global storage (rwdata) a module may declare, in bytes.
    pub max_global_bytes: u64,
    /// Most ref globals a module may declare.
    pub max_global_refs: u64,
    /// Largest call stack, in bytes of the reference's VM stack: a call
    /// whose frame would not fit fails with RESOURCE_EXHAUSTED. Frames are
    /// sized as IREE sizes them (a 128-byte header, then the i32 and ref
    /// registers), and the default is what `iree-run-module`'s stack can
    /// grow to (1 MiB less its bookkeeping), so recursion stops at the same
    /// depth: 6,476 frames of 5 to 8 i32 registers.
    pub max_stack_bytes: u64,
    /// Most memory the context's programs may hold at once, in bytes:
    /// buffers they allocate or clone, lists they allocate or grow (their
    /// elements and the list itself), the register stacks and the module
    /// globals. Exceeding it fails the allocation with RESOURCE_EXHAUSTED.
    /// Memory is given back when its holder is dropped, wherever it went.
    /// A compile of the compiling tier is charged too while it runs (an
    /// estimate from the function's size; one that does not fit leaves the
    /// function to the interpreter). Rodata (the module file) and host
    /// modules' own objects are not counted.
    pub max_memory_bytes: u64,
}

/// The default [`Limits::max_memory_bytes`]: 8 GiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 8 << 30;

/// The reference's largest VM stack: its frame storage starts at 8 KiB less
/// the stack's own header (8,096 bytes) and doubles while it stays within
/// 1 MiB (`IREE_VM_STACK_MAX_SIZE`), so 128 × 8,096 bytes.
pub const DEFAULT_STACK_BYTES: u64 = 128 * 8_096;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_stack_depth: 16 * 1024,
            max_buffer_bytes: 4 << 30,
            max_list_elements: 128 << 20,
            max_global_bytes: 256 << 20,
            max_global_refs: 1 << 20,
            max_stack_bytes: DEFAULT_STACK_BYTES,
            max_memory_bytes: DEFAULT_MEMORY_BYTES,
        }
    }
}

/// One frame of a paused or suspended call, for debuggers.
#[derive(Clone, Debug)]
pub struct FrameInfo {
    /// Module, function, bytecode offset (the next instruction for a paused
    /// top frame, the call for callers) and source location.
    pub frame: TrapFrame,
    /// The frame's module's place in the context, in registration order
    /// (as [`Context::module_names`] and [`Context::bytecode_modules`] list
    /// them): what tells apart two modules registered under one name.
    pub module_index: usize,
    /// The i32 register file (i64/f64 span two slots).
    pub i32s: Vec<u32>,
    /// The ref registers, summarized (`(null)`, `!vm.buffer[16]`, ...).
    pub refs: Vec<String>,
    /// The ref registers themselves (for inspecting lists and buffers).
    pub ref_values: Vec<Ref>,
}

impl Context {
    pub(crate) fn stack_limit(&self) -> crate::exec::StackLimit {
        crate::exec::StackLimit {
            frames: self.limits.max_stack_depth,
            bytes: self.limits.max_stack_bytes,
        }
    }

    /// An empty context over `registry`'s types.
    pub fn new(registry: &Arc<TypeRegistry>) -> Context {
        Context::with_limits(registry, Limits::default())
    }

    /// An empty context over `registry`'s types with `limits` in force
    /// from the start: they bound every module's `__init` as much as the
    /// calls that follow. (Fuel, deadline and interrupt are set with
    /// [`Context::set_fuel`], [`Context::set_deadline`] and
    /// [`Context::interrupt_handle`]; set them, too, before registering
    /// modules whose initializers should be bounded.)
    pub fn with_limits(registry: &Arc<TypeRegistry>, limits: Limits) -> Context {
        let memory = crate::budget::MemoryBudget::new(limits.max_memory_bytes);
        let stop = crate::stop::StopWord::new();
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Context {
            registry: registry.clone(),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            modules: Vec::new(),
            stack: Stack::with_budget(&memory),
            limits,
            hooks: crate::exec::hooks::Hooks {
                stop: stop.clone(),
                ..Default::default()
            },
            lists: Default::default(),
            host_calls: 0,
            compiled_entries: 0,
            resources: {
                let r = crate::ContextResources::new(&memory, &stop);
                r.set_limits(&limits);
                r
            },
            memory,
            trap_frames: None,
            tier: crate::tier::default_tier(),
        }
    }

    /// Chooses how bytecode runs: interpreted, compiled, or compiled once
    /// hot (the default, [`crate::Tier::Auto`]). Results and traps are
    /// the same either way; see [`crate::Tier`].
    pub fn set_tier(&mut self, tier: crate::Tier) {
        self.tier = tier;
    }

    /// How bytecode runs in this context ([`Context::set_tier`]).
    pub fn tier(&self) -> crate::Tier {
        self.tier
    }

    /// How many machine-code copies of the context's bytecode functions
    /// have been made so far (one per function, or two when it ran both
    /// with and without limits set), and the bytes of that code.
    pub fn compiled_functions(&self) -> (usize, usize) {
        let mut count = (0, 0);
        for m in &self.modules {
            if let Registered::Bytecode(b) = m {
                for f in &b.funcs {
                    for code in f.jit.codes() {
                        count.0 += 1;
                        count.1 += code.size;
                    }
                }
            }
        }
        count
    }

    /// The bytecode functions the compiling tier has left to the
    /// interpreter so far for a reason worth knowing, with the reason: too
    /// large to compile within the compiling tier's bounds, a compile that
    /// did not fit in the memory budget, or a code generator that failed
    /// (its panic caught, its message kept). Functions with nothing worth
    /// compiling, never hot, or still compiling in the background are not
    /// listed. Such functions run in the interpreter, with the same
    /// results. `irvm run --print_statistics` prints these.
    pub fn functions_left_to_interpreter(&self) -> Vec<crate::jit::LeftToInterpreter> {
        let mut out = Vec::new();
        for (m, r) in self.modules.iter().enumerate() {
            let Registered::Bytecode(b) = r else {
                continue;
            };
            for (ordinal, f) in b.funcs.iter().enumerate() {
                let mut reasons: Vec<&crate::jit::CompileRefusal> = f.jit.refusals().collect();
                reasons.dedup();
                for reason in reasons {
                    out.push(crate::jit::LeftToInterpreter {
                        module: b.name.clone(),
                        function: self.describe(m as u32, ordinal as u32, 0).function,
                        reason: reason.clone(),
                    });
                }
            }
        }
        out
    }

    /// The bytecode modules of the context, in registration order, each
    /// with its place among all the context's modules (host modules
    /// included: the index [`FrameInfo::module_index`] and
    /// [`crate::ExecView::module_index`] give) and its name.
    pub fn bytecode_modules(&self) -> Vec<(usize, &str, &Module)> {
        self.modules
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Registered::Bytecode(b) => Some((i, b.name.as_str(), &b.module)),
                Registered::Host(_) => None,
            })
            .collect()
    }

    /// Reclaims lists that only reference cycles keep alive: lists the
    /// context's bytecode allocated that nothing outside those lists (no
    /// register, global, host object or embedder value) can reach any more
    /// are emptied, so their cycles break and they drop. Returns how many
    /// lists were emptied. The context also does this by itself whenever
    /// the lists that can form cycles have doubled, and when it is dropped.
    pub fn collect_cycles(&mut self) -> usize {
        self.lists.collect()
    }

    /// Sets the stack depth, buffer, list and module state limits.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
        self.memory.set_limit(limits.max_memory_bytes);
        self.resources.set_limits(&limits);
    }

    /// Bytes the context's programs hold now against
    /// [`Limits::max_memory_bytes`].
    pub fn memory_in_use(&self) -> u64 {
        self.memory.used()
    }

    /// The most memory the context's programs have held at once (what
    /// [`Context::memory_in_use`] counts), since the context was made.
    pub fn memory_peak(&self) -> u64 {
        self.memory.peak()
    }

    /// How many host functions bytecode has called (imports, including the
    /// hal's), since the context was made.
    pub fn host_calls(&self) -> u64 {
        self.host_calls
    }

    /// How many times the interpreter has entered compiled code (at a loop
    /// head, at a function's start, or, with [`crate::Tier::Jit`], after
    /// an instruction compiled code left to it), since the context was
    /// made: a loop that stays in compiled code is entered once, one whose
    /// body leaves for the interpreter once per pass.
    pub fn compiled_entries(&self) -> u64 {
        self.compiled_entries
    }

    /// The handle host modules get on this context's memory budget, fuel,
    /// deadline and interrupt flag (see [`crate::ContextResources`]).
    pub fn resources(&self) -> &crate::ContextResources {
        &self.resources
    }

    /// The stack depth, buffer, list and module state limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Gives invocations a budget of `fuel` instructions in total (`None`:
    /// unlimited). Running out fails the call with RESOURCE_EXHAUSTED, at
    /// the same instruction in every tier: the interpreter and compiled code
    /// charge whole straight runs of instructions at once, and when a run
    /// costs more than is left, go on one instruction at a time.
    /// Bulk work (buffer fills, copies, ...) costs a unit per 64 bytes on top.
    pub fn set_fuel(&mut self, fuel: Option<u64>) {
        self.hooks.fuel = fuel;
    }

    /// The fuel left, if a budget is set.
    pub fn fuel(&self) -> Option<u64> {
        self.hooks.fuel
    }

    /// Fails invocations still running at `deadline` with DEADLINE_EXCEEDED
    /// (`None`: no deadline). No loop reads the clock: a watchdog thread
    /// (one for the process) raises the context's stop word when the
    /// deadline comes, and the interpreter and compiled code see it at the
    /// next loop back edge or call.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.hooks.deadline = deadline;
        self.hooks.stop.arm(deadline);
        self.resources.set_deadline(deadline);
    }

    /// A handle that stops this context's running (or next) invocation
    /// from another thread (CANCELLED), at its next loop back edge or call.
    pub fn interrupt_handle(&mut self) -> crate::debug::InterruptHandle {
        self.hooks.interruptible = true;
        self.resources.set_interruptible();
        crate::debug::InterruptHandle {
            stop: self.hooks.stop.clone(),
        }
    }

    /// Records the context's invocations in `profile` (or stops, with
    /// `None`): host calls timed (waits apart), the call stack sampled as
    /// [`crate::profile::ProfileOptions::sample_every`] says (the
    /// interpreter then polls as it does for a deadline), and host modules
    /// see the profile through [`crate::ContextResources::profile`].
    ///
    /// ```
    /// use irvm::profile::{Profile, ProfileOptions};
    /// use irvm::{Context, Module, TypeRegistry, Value};
    ///
    /// let module = Module::from_assembly(
    ///     "vm.module @m version 0\nvm.export @spin\n\
    ///      vm.func @spin(%i0: i32) -> (i32) {\n^bb0:\n  %i1 = vm.const.i32.zero\n  \
    ///      %i2 = vm.const.i32 1\n  vm.br ^bb1(%i1->%i3)\n^bb1:\n  \
    ///      %i3 = vm.add.i32 %i3, %i2\n  %i4 = vm.cmp.lt.i32.s %i3, %i0\n  \
    ///      vm.cond_br %i4, ^bb1(), ^bb2()\n^bb2:\n  vm.return %i3\n}\n",
    ///     "spin.vmasm",
    /// )?;
    /// let mut ctx = Context::new(&TypeRegistry::new());
    /// ctx.register_module(module)?;
    /// let profile = Profile::new(ProfileOptions::default());
    /// ctx.set_profile(Some(profile.clone()));
    /// let spin = ctx.function("m.spin")?;
    /// ctx.invoke(&spin, &[Value::I32(20_000_000)])?;
    /// profile.finish();
    /// let data = profile.data();
    /// // Sampled: every stack is the one function.
    /// assert!(!data.stacks.is_empty());
    /// assert!(data.frames.iter().all(|f| f.function == "m.spin"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_profile(&mut self, profile: Option<Arc<crate::profile::Profile>>) {
        if let Some(p) = &profile {
            p.attach(&self.hooks.stop);
        }
        self.resources.set_profile(profile.clone());
        self.hooks.profile = profile.map(|p| crate::exec::profiling::ProfileHook::new(p, self.id));
    }

    /// Pauses this context's running invocation when `flag` turns true
    /// (`None`: no pause flag). The call returns [`CallState::Paused`] and
    /// [`Context::resume`] goes on; the flag is cleared when it is seen.
    /// Unlike an observer it costs almost nothing: the loops check it at
    /// backward branches and calls only, with the stop word (the hooked
    /// loop before every instruction). Debuggers use it for Ctrl-C.
    pub fn set_pause_flag(&mut self, flag: Option<Arc<std::sync::atomic::AtomicBool>>) {
        self.hooks.pause = flag;
    }

    /// Attaches (or with `None` detaches) an observer that sees every
    /// instruction before it runs and may pause there.
    pub fn set_observer(&mut self, observer: Option<Box<dyn crate::debug::Observer>>) {
        self.hooks.observer = observer;
        self.hooks.resume_quietly = false;
    }

    /// Whether a call that traps leaves its frames, registers included, for
    /// [`Context::take_trap_frames`] (a debugger stopping in the faulting
    /// frame). Off by default: the frames are copied only while it is on.
    pub fn keep_trap_frames(&mut self, keep: bool) {
        self.trap_frames = keep.then(Vec::new);
    }

    /// The frames of the last call that trapped, innermost first (the top
    /// frame at the failing instruction), while [`Context::keep_trap_frames`]
    /// is on; empty otherwise or once taken.
    pub fn take_trap_frames(&mut self) -> Vec<FrameInfo> {
        self.trap_frames
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Records the frames of a call that is failing (before they are
    /// released), when asked to.
    pub(crate) fn record_trap_frames(&mut self) {
        if self.trap_frames.is_some() {
            let frames = self.frames();
            self.trap_frames = Some(frames);
        }
    }

    /// The frames of a paused or yielded call, innermost first, with their
    /// registers; empty when no call is suspended.
    pub fn frames(&self) -> Vec<FrameInfo> {
        let paused = self.stack.is_paused();
        self.stack
            .frame_windows()
            .enumerate()
            .map(|(k, (module, func, pc, i32s, refs))| {
                let at = if k == 0 && paused {
                    pc
                } else {
                    pc.saturating_sub(1)
                };
                let offset = func.offsets.get(at).copied().unwrap_or(0);
                FrameInfo {
                    frame: self.describe(module, func.ordinal, offset),
                    module_index: module as usize,
                    i32s: i32s.to_vec(),
                    refs: refs.iter().map(|r| r.to_string()).collect(),
                    ref_values: refs.to_vec(),
                }
            })
            .collect()
    }

    /// Sets i32 register slot `slot` of frame `frame` (0 = the innermost,
    /// as [`Context::frames`] lists them) of the paused or yielded call to
    /// `bits`: a debugger's `set var`. An i64 or f64 spans two slots, low
    /// word first. The call goes on with the new value ([`Context::resume`]).
    /// Ref registers cannot be set: the verifier proved what type each
    /// holds. Returns false, changing nothing, when no call is suspended or
    /// the frame or slot does not exist.
    pub fn set_frame_i32(&mut self, frame: usize, slot: usize, bits: u32) -> bool {
        match self
            .stack
            .frame_i32s_mut(frame)
            .and_then(|window| window.get_mut(slot))
        {
            Some(register) => {
                *register = bits;
                true
            }
            None => false,
        }
    }

    /// Makes frame `frame` (0 = the innermost, as [`Context::frames`]
    /// lists them) of the paused call go on at the instruction at bytecode
    /// `offset` of its own function (a debugger's `jump`): the innermost
    /// frame runs it next when the call is resumed, a caller when its callee
    /// returns. Only an instruction of the frame's own function is accepted
    /// (the verifier's proofs about registers hold per function); registers
    /// keep their values. Errors, changing nothing: no call paused (by an
    /// observer or the pause flag), no such frame, or no instruction starts
    /// at `offset`.
    pub fn set_frame_offset(&mut self, frame: usize, offset: u32) -> Result<(), Trap> {
        let modules = &self.modules;
        let module = self.stack.frame_module(frame);
        self.stack.set_frame_offset(frame, offset, |ordinal| {
            function_label(modules, module, ordinal)
        })?;
        if frame == 0 {
            // The next instruction is not the one the call paused at: an
            // observer sees it.
            self.hooks.resume_quietly = false;
        }
        Ok(())
    }

    /// Pops frame `frame` (0 = the innermost) of the paused call and every
    /// frame inside it, as if it returned `values` now (a debugger's
    /// `return`): its caller's result registers of the call receive them
    /// and the call stays paused in the caller, before the instruction the
    /// call returns to ([`CallState::Paused`]); from the outermost frame the
    /// call ends with `values` ([`CallState::Done`]). The popped frames'
    /// registers are released as a return releases them. `values` must be
    /// of the function's result types, in order (errors change nothing).
    pub fn return_from_frame(
        &mut self,
        frame: usize,
        values: Vec<Value>,
    ) -> Result<CallState, Trap> {
        let modules = &self.modules;
        let module = self.stack.frame_module(frame);
        let state = self.stack.return_from_frame(frame, values, |ordinal| {
            function_label(modules, module, ordinal)
        })?;
        self.hooks.resume_quietly = false;
        Ok(state)
    }

    /// The registry whose types this context uses.
    pub fn type_registry(&self) -> &Arc<TypeRegistry> {
        &self.registry
    }

    /// Names of the registered modules, in registration order.
    pub fn module_names(&self) -> Vec<&str> {
        self.modules.iter().map(|m| m.name()).collect()
    }

    /// Finds a function by `module.function` (in the most recently
    /// registered module of that name, which hides earlier ones), or by bare
    /// name in the most recently registered module that exports it. The
    /// error names the module and lists what it exports.
    pub fn function(&self, name: &str) -> Result<Func, LookupError> {
        let (m, f) = match name.split_once('.') {
            Some((m, f)) if self.modules.iter().any(|r| r.name() == m) => (Some(m), f),
            _ => (None, name),
        };
        let newest = m.and_then(|m| self.modules.iter().rposition(|r| r.name() == m));
        for (i, r) in self.modules.iter().enumerate().rev() {
            if newest.is_some_and(|n| n != i) {
                continue;
            }
            if let Some((target, sig)) = r.export(i as u32, f) {
                let target = match target {
                    ImportTarget::Bytecode { module, ordinal } => {
                        FuncTarget::Bytecode { module, ordinal }
                    }
                    ImportTarget::Host { module, index } => FuncTarget::Host { module, index },
                    ImportTarget::Unresolved => continue,
                };
                return Ok(Func::new(
                    self.id,
                    target,
                    format!("{}.{}", r.name(), f),
                    sig,
                ));
            }
        }
        let exports = match m {
            Some(m) => self.exports(Some(m)),
            None => self
                .modules
                .iter()
                .flat_map(|r| {
                    self.exports(Some(r.name()))
                        .into_iter()
                        .map(move |e| format!("{}.{e}", r.name()))
                })
                .collect(),
        };
        Err(LookupError::NotFound {
            function: f.to_string(),
            module: m.map(str::to_string),
            exports,
        })
    }

    /// Finds a function as [`Context::function`] does and checks once that
    /// it takes `Params` and returns `Results` (see [`TypedFunc`]); a
    /// mismatch is an error naming both signatures.
    ///
    /// ```
    /// # use irvm::{Context, TypeRegistry, Module};
    /// # let module = Module::from_assembly(
    /// #     "vm.module @m version 0\nvm.export @add\n\
    /// #      vm.func @add(%i0: i32, %i1: i32) -> (i32) {\n^bb0:\n\
    /// #      %i2 = vm.add.i32 %i0, %i1\nvm.return %i2\n}\n", "m.vmasm").unwrap();
    /// # let mut ctx = Context::new(&TypeRegistry::new());
    /// # ctx.register_module(module).unwrap();
    /// let add = ctx.typed_func::<(i32, i32), i32>("add")?;
    /// assert_eq!(add.call(&mut ctx, (40, 2))?, 42);
    /// let wrong = ctx.typed_func::<i64, i32>("add").unwrap_err();
    /// assert_eq!(
    ///     wrong.to_string(),
    ///     "INVALID_ARGUMENT; function `m.add` has signature (i32, i32) -> (i32) \
    ///      (calling convention `0ii_i`), but was requested as (i64) -> (i32)"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn typed_func<P: CallParams, R: CallResults>(
        &self,
        name: &str,
    ) -> Result<TypedFunc<P, R>, LookupError> {
        self.function(name)?.typed()
    }

    /// Names of the exported functions of module `module` (or of the last
    /// registered module).
    pub fn exports(&self, module: Option<&str>) -> Vec<String> {
        let r = match module {
            Some(m) => self.modules.iter().rev().find(|r| r.name() == m),
            None => self.modules.last(),
        };
        match r {
            Some(Registered::Bytecode(b)) => b
                .module
                .exports()
                .iter()
                .map(|e| e.local_name.to_string())
                .collect(),
            Some(Registered::Host(h)) => h.funcs.iter().map(|(n, _)| n.clone()).collect(),
            None => Vec::new(),
        }
    }

    /// Calls `func` with `args`, resuming through any yields, and returns its
    /// results.
    pub fn invoke(&mut self, func: &Func, args: &[Value]) -> Result<Vec<Value>, Trap> {
        let mut state = self.begin_call(func, args)?;
        loop {
            match state {
                CallState::Done(v) => return Ok(v),
                CallState::Yielded | CallState::Paused => state = self.resume()?,
            }
        }
    }

    /// Starts a call; it may yield ([`CallState::Yielded`]).
    pub fn begin_call(&mut self, func: &Func, args: &[Value]) -> Result<CallState, Trap> {
        if self.stack.is_suspended() {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                "a yielded call is still pending in this context; resume it first",
            ));
        }
        check_args(func.name(), &func.parsed, args)?;
        self.start_call(func, args)
    }

    /// [`Context::begin_call`] for a [`TypedFunc`]: its argument types were
    /// checked when it was made.
    pub(crate) fn begin_typed_call(
        &mut self,
        func: &Func,
        args: &[Value],
    ) -> Result<CallState, Trap> {
        if self.stack.is_suspended() {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                "a yielded call is still pending in this context; resume it first",
            ));
        }
        self.start_call(func, args)
    }

    fn start_call(&mut self, func: &Func, args: &[Value]) -> Result<CallState, Trap> {
        if func.context != self.id {
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "function {} belongs to another context; look it up in this one",
                    func.name()
                ),
            ));
        }
        // Native workgroups a stopped call left running still hold this
        // context's buffers: wait for them (interruptibly).
        self.resources.wait_for_background()?;
        let sig = &func.parsed;
        match &func.target {
            FuncTarget::Host { module, index } => {
                let Some(Registered::Host(h)) = self.modules.get_mut(*module as usize) else {
                    return Err(Trap::new(StatusCode::NotFound, "no such host module"));
                };
                self.resources.lend_fuel(self.hooks.fuel);
                let outcome = h.state.call(*index as usize, args);
                self.resources.reclaim_fuel(&mut self.hooks.fuel);
                match outcome? {
                    crate::host::HostOutcome::Done(v) => Ok(CallState::Done(v)),
                    crate::host::HostOutcome::Deferred => Err(Trap::new(
                        StatusCode::Unimplemented,
                        "direct calls of yielding host functions are not supported",
                    )),
                }
            }
            FuncTarget::Bytecode { module, ordinal } => {
                exec::begin(self, *module, *ordinal, sig, args)
            }
        }
    }

    /// Continues a call that yielded.
    pub fn resume(&mut self) -> Result<CallState, Trap> {
        if !self.stack.is_suspended() {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                "no yielded call to resume",
            ));
        }
        self.resources.wait_for_background()?;
        exec::resume(self)
    }

    /// Checks that the suspended call is a call of `func` before a
    /// [`crate::TypedFunc`] resumes it (its results are converted to
    /// `func`'s types); a mismatch leaves the call pending.
    pub(crate) fn check_pending_is(&self, func: &Func) -> Result<(), Trap> {
        let Some((module, ordinal)) = self.stack.suspended_entry() else {
            return Ok(()); // `resume` reports that nothing is pending.
        };
        if func.target == (FuncTarget::Bytecode { module, ordinal }) && func.context == self.id {
            return Ok(());
        }
        if func.context != self.id {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                format!(
                    "`{}` was looked up in another context; resume this context's \
                     pending call through its own TypedFunc or Context::resume (it is \
                     still pending)",
                    func.name()
                ),
            ));
        }
        let frame = self.describe(module, ordinal, 0);
        let pending = format!("{}.{}", frame.module, frame.function);
        Err(Trap::new(
            StatusCode::FailedPrecondition,
            format!(
                "the pending call is of `{pending}`, not `{}`; resume it through \
                 `{pending}`'s TypedFunc or Context::resume (it is still pending)",
                func.name()
            ),
        ))
    }

    /// Drops a suspended call (releasing its frames).
    pub fn abandon(&mut self) {
        self.stack.clear();
    }

    /// Zeroes every bytecode module's globals and releases its ref
    /// globals: the state the modules had when registered, before their
    /// `__init`s ran (a debugger's `run` starts the program afresh with
    /// this, then runs the initializers again:
    /// [`Context::register_module_deferring_init`]). Host modules' states
    /// are kept. A call paused or suspended is abandoned first (its frames
    /// would read globals of a program that no longer is).
    pub fn reset_globals(&mut self) {
        self.abandon();
        for m in &mut self.modules {
            if let Registered::Bytecode(b) = m {
                b.rwdata.fill(0);
                // In place: compiled code and the interpreter address the
                // storage, which stays where it is.
                for r in b.global_refs.iter_mut() {
                    *r = Ref::Null;
                }
            }
        }
        self.lists.collect();
    }

    /// Describes a frame for backtraces: module, function name, location.
    pub(crate) fn describe(&self, module: u32, ordinal: u32, offset: u32) -> TrapFrame {
        describe_frame(&self.modules, module, ordinal, offset)
    }
}

fn check_args(name: &str, sig: &Signature, args: &[Value]) -> Result<(), Trap> {
    if sig.variadic {
        return Ok(());
    }
    if args.len() != sig.args.len() {
        return Err(Trap::new(
            StatusCode::InvalidArgument,
            format!(
                "function {name} expects {} arguments (`{}`), got {}",
                sig.args.len(),
                sig.text(),
                args.len()
            ),
        ));
    }
    for (i, (a, &k)) in args.iter().zip(&sig.args).enumerate() {
        if a.kind_char() as u8 != k {
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "function {name} argument {i} must be {}, got {}",
                    kind_name(k),
                    kind_name(a.kind_char() as u8)
                ),
            ));
        }
    }
    Ok(())
}

/// `module.function` for errors about function `ordinal` of `module`.
fn function_label(modules: &[Registered], module: u32, ordinal: u32) -> String {
    let frame = describe_frame(modules, module, ordinal, 0);
    format!("{}.{}", frame.module, frame.function)
}

/// Human name of a calling-convention kind byte.
pub(crate) fn kind_name(k: u8) -> &'static str {
    match k {
        b'i' => "i32",
        b'I' => "i64",
        b'f' => "f32",
        b'F' => "f64",
        b'r' => "a ref",
        _ => "nothing",
    }
}

/// Describes frame (`module`, function `ordinal`, bytecode `offset`) of a
/// context whose modules are `modules`: module, function name, location.
/// The name of internal function `ordinal` of a bytecode module: its
/// export's or import's, else its debug database's, else `fnN`.
pub(crate) fn function_name(b: &BytecodeInstance, ordinal: u32) -> String {
    b.names
        .get(ordinal as usize)
        .cloned()
        .flatten()
        .unwrap_or_else(|| {
            b.module
                .debug_database()
                .and_then(|db| db.function_local_name(ordinal))
                .unwrap_or_else(|| format!("fn{ordinal}"))
        })
}

pub(crate) fn describe_frame(
    modules: &[Registered],
    module: u32,
    ordinal: u32,
    offset: u32,
) -> TrapFrame {
    match modules.get(module as usize) {
        Some(Registered::Bytecode(b)) => {
            let db = b.module.debug_database();
            let function = function_name(b, ordinal);
            let loc = db.and_then(|db| db.location_index(ordinal, offset, &b.names));
            let (location, source) = match (db, loc) {
                (Some(db), Some(loc)) => (Some(db.render(loc)), db.call_chain(loc)),
                _ => (None, Vec::new()),
            };
            TrapFrame {
                module: b.name.clone(),
                function,
                ordinal: Some(ordinal),
                offset: Some(offset),
                location,
                source,
            }
        }
        Some(Registered::Host(h)) => TrapFrame {
            module: h.name.clone(),
            function: h
                .funcs
                .get(ordinal as usize)
                .map(|f| f.0.clone())
                .unwrap_or_default(),
            ordinal: None,
            offset: None,
            location: None,
            source: Vec::new(),
        },
        None => TrapFrame {
            module: "?".into(),
            function: "?".into(),
            ordinal: None,
            offset: None,
            location: None,
            source: Vec::new(),
        },
    }
}
