//! Executables: vmvx bytecode (`vmvx-bytecode-fb`: a bytecode module of
//! its own, loaded into a private [`Context`] behind the `vmvx` host module,
//! `vmvx.rs`, its microkernels) and native code (llvm-cpu ELF libraries,
//! `native/`). A dispatch calls one entry function once per workgroup; on a
//! `local-task` device the workgroups of a vmvx dispatch run on every
//! worker, each in a context of its own (`vmvx_grid.rs`).

use std::sync::{Arc, Mutex};

use smallvec::SmallVec;

use crate::device::DeviceConfig;
use crate::native::NativeExecutable;
use crate::vmvx_grid::{Grid, Instance};

use irvm::errors::LinkError;
use irvm::{Buffer, Context, Func, Module, Ref, StatusCode, Trap, TypeRegistry, Value};

/// The executable format irvm loads.
pub const VMVX_FORMAT: &str = "vmvx-bytecode-fb";

/// The calling convention of a vmvx entry function: local memory,
/// constants, bindings, workgroup id xyz, size xyz, count xyz.
pub const ENTRY_SIGNATURE: &str = "0rrriiiiiiiii_v";

/// The arguments of a vmvx entry function ([`ENTRY_SIGNATURE`]): local
/// memory, constants and bindings, the workgroup's id, a workgroup size of
/// 1x1x1, the grid's counts. Made once per dispatch (the refs moved in, so
/// a workgroup's call counts no references of its own); each workgroup
/// sets only its id.
pub(crate) struct EntryArgs([Value; 12]);

impl EntryArgs {
    pub(crate) fn new(
        [local_memory, constants, bindings]: [Ref; 3],
        [cx, cy, cz]: [u32; 3],
    ) -> Self {
        let as_i32 = |v: u32| Value::I32(v as i32);
        EntryArgs([
            Value::Ref(local_memory),
            Value::Ref(constants),
            Value::Ref(bindings),
            as_i32(0),
            as_i32(0),
            as_i32(0),
            as_i32(1),
            as_i32(1),
            as_i32(1),
            as_i32(cx),
            as_i32(cy),
            as_i32(cz),
        ])
    }

    /// The arguments for workgroup `(x, y, z)`.
    pub(crate) fn for_workgroup(&mut self, [x, y, z]: [u32; 3]) -> &[Value] {
        self.0[3] = Value::I32(x as i32);
        self.0[4] = Value::I32(y as i32);
        self.0[5] = Value::I32(z as i32);
        &self.0
    }
}

/// Most workgroups one dispatch may run (a grid beyond this is refused as
/// absurd rather than run for hours).
pub const MAX_WORKGROUPS: u64 = 1 << 24;

/// Bytes per page of workgroup local memory (the `local_memory` attribute
/// is rounded down to whole pages, as IREE does).
const LOCAL_MEMORY_PAGE: usize = 4096;

struct Entry {
    name: String,
    local_memory: usize,
}

/// A loaded `!hal.executable`.
pub struct Executable {
    kind: Kind,
    format: String,
    name: String,
    device: Arc<DeviceConfig>,
}

enum Kind {
    Vmvx(Box<VmvxExecutable>),
    Native {
        code: Arc<NativeExecutable>,
        device: Arc<DeviceConfig>,
        resources: irvm::ContextResources,
    },
}

/// Whether `device` loads executables of `format` (`hal.executable.format`
/// queries).
pub fn supports_format(device: &DeviceConfig, format: &str) -> bool {
    format == VMVX_FORMAT
        || (device.options.native_executables && crate::native::NATIVE_FORMATS.contains(&format))
}

impl Executable {
    /// Loads executable `data` of `format` with executable-level
    /// `constants` for `device`; its dispatches run on `resources` (the
    /// loading context's budget, fuel, deadline and interrupt).
    pub fn load(
        format: &str,
        data: Vec<u8>,
        constants: &[u32],
        resources: irvm::ContextResources,
        device: &Arc<DeviceConfig>,
    ) -> Result<Executable, Trap> {
        let kind = if format == VMVX_FORMAT {
            Kind::Vmvx(Box::new(VmvxExecutable::load(
                data,
                constants,
                resources,
                device.options.tier,
            )?))
        } else if crate::native::NATIVE_FORMATS.contains(&format) {
            if !device.options.native_executables {
                return Err(Trap::new(
                    StatusCode::PermissionDenied,
                    format!(
                        "native executables (`{format}`) are disabled on this device; only \
                         `{VMVX_FORMAT}` is loaded"
                    ),
                ));
            }
            Kind::Native {
                code: crate::native::library_cache::load_shared(format, &data, constants)?,
                device: device.clone(),
                resources,
            }
        } else {
            let mut known = vec![VMVX_FORMAT];
            if device.options.native_executables {
                known.extend(crate::native::NATIVE_FORMATS);
            }
            return Err(Trap::new(
                StatusCode::NotFound,
                format!(
                    "no executable loader for format `{format}` (irvm loads {})",
                    known
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let name = match &kind {
            Kind::Vmvx(v) => v.name.clone(),
            Kind::Native { code, .. } => code.name().to_string(),
        };
        Ok(Executable {
            kind,
            format: format.to_string(),
            name,
            device: device.clone(),
        })
    }

    /// Its name: a vmvx module's, a native library's.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The format it was loaded from.
    pub fn format(&self) -> &str {
        &self.format
    }

    /// Entry point names, in ordinal order.
    pub fn entry_names(&self) -> Vec<String> {
        match &self.kind {
            Kind::Vmvx(v) => v.entries.iter().map(|e| e.name.clone()).collect(),
            Kind::Native { code, .. } => code.export_names().map(str::to_string).collect(),
        }
    }

    /// The functions of a vmvx executable compiled to machine code so far,
    /// and their code bytes (`Context::compiled_functions` of its
    /// context); `(0, 0)` for a native executable.
    pub fn compiled_functions(&self) -> (usize, usize) {
        match &self.kind {
            Kind::Vmvx(v) => v
                .first
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .context
                .compiled_functions(),
            Kind::Native { .. } => (0, 0),
        }
    }

    /// The entry index of exported function `name`.
    pub fn lookup(&self, name: &str) -> Result<i64, Trap> {
        let found = match &self.kind {
            Kind::Vmvx(v) => v.entries.iter().position(|e| e.name == name),
            Kind::Native { code, .. } => code.lookup(name),
        };
        found.map(|i| i as i64).ok_or_else(|| {
            Trap::new(
                StatusCode::NotFound,
                format!("no exported function with the name `{name}` found in module"),
            )
        })
    }

    /// The resources of the context that loaded it.
    fn resources(&self) -> &irvm::ContextResources {
        match &self.kind {
            Kind::Vmvx(v) => &v.resources,
            Kind::Native { resources, .. } => resources,
        }
    }

    /// Where entry `function` came from in the source, when the
    /// executable says (native libraries' location tables).
    fn export_location(&self, function: i64) -> Option<String> {
        let ordinal = usize::try_from(function).ok()?;
        match &self.kind {
            Kind::Native { code, .. } => code.export_location(ordinal).map(str::to_owned),
            Kind::Vmvx(_) => None,
        }
    }

    /// The name of entry `function` (`?` when out of range).
    fn entry_name(&self, function: i64) -> String {
        let names = self.entry_names();
        usize::try_from(function)
            .ok()
            .and_then(|i| names.get(i))
            .map_or_else(|| "?".to_owned(), String::clone)
    }

    /// Calls the device's dispatch hook for `dispatch` and, while the
    /// loading context is profiled, registers its site: returns the
    /// profile, the site and the dispatch's start.
    fn announce(&self, dispatch: &Dispatch<'_>) -> Option<(Arc<irvm::profile::Profile>, u32, u64)> {
        if let Some(hook) = &self.device.options.on_dispatch {
            let entry = self.entry_name(dispatch.function);
            (hook.0)(&crate::device::DispatchEvent {
                executable: &self.name,
                format: &self.format,
                entry: &entry,
                workgroups: dispatch.workgroups,
            });
        }
        self.resources().profile().map(|profile| {
            let site = profile.dispatch_site(irvm::profile::DispatchSite {
                executable: self.name.clone(),
                format: self.format.clone(),
                entry: self.entry_name(dispatch.function),
                workgroups: dispatch.workgroups,
                location: self
                    .export_location(dispatch.function)
                    .or_else(|| dispatch.location.map(str::to_owned)),
            });
            let start = profile.now_ns();
            (profile, site, start)
        })
    }

    /// Runs every workgroup of `dispatch`. When the loading context is
    /// profiled ([`irvm::ContextResources::profile`]), the dispatch is
    /// recorded on the calling thread's track, and each batch of
    /// workgroups on the track of the thread that ran it.
    pub fn dispatch(&self, dispatch: Dispatch<'_>) -> Result<(), Trap> {
        self.dispatch_borrowed(&dispatch)
    }

    /// [`Executable::dispatch`] of a dispatch the caller keeps (a region's,
    /// which is not moved again).
    fn dispatch_borrowed(&self, dispatch: &Dispatch<'_>) -> Result<(), Trap> {
        let profiled = self.announce(dispatch);
        let result = match &self.kind {
            Kind::Vmvx(v) => v.dispatch(
                dispatch,
                &self.device,
                profiled.as_ref().map(|(p, site, _)| (&**p, *site)),
            ),
            Kind::Native {
                code,
                device,
                resources,
            } => NativeExecutable::dispatch(
                code,
                dispatch.function,
                dispatch.workgroups,
                dispatch.constants,
                &dispatch.bindings,
                crate::native::DispatchTarget {
                    device,
                    resources,
                    profile: profiled.as_ref().map(|(p, site, _)| (p, *site)),
                },
            ),
        };
        if let Some((profile, site, start)) = profiled {
            profile.dispatch(site, start, profile.now_ns());
        }
        result
    }
}

/// Runs `dispatches`, recorded one after another with no execution
/// barrier between them (so their workgroups may run in any order and at
/// once, as IREE's task executor runs them), each as
/// [`Executable::dispatch`] would: the device's dispatch hook called and
/// the dispatch profiled on its site. Native dispatches on one `local-task`
/// device share one handing-out of workgroups to the workers and one join
/// ([`crate::native::region::run_region`]); anything else runs one
/// dispatch after another.
pub fn dispatch_region(dispatches: &RegionDispatches<'_>) -> Result<(), Trap> {
    let Some(device) = shared_task_device(dispatches)? else {
        for (executable, dispatch) in dispatches {
            executable.dispatch_borrowed(dispatch)?;
        }
        return Ok(());
    };
    // Hooks and sites first, in recording order; the profile handles must
    // outlive the prepared dispatches that borrow them.
    let announced: SmallVec<[_; 4]> = dispatches.iter().map(|(e, d)| e.announce(d)).collect();
    let mut prepared: SmallVec<[_; 4]> = SmallVec::new();
    let mut spans: SmallVec<[_; 4]> = SmallVec::new();
    for ((executable, dispatch), profiled) in dispatches.iter().zip(&announced) {
        let Kind::Native {
            code, resources, ..
        } = &executable.kind
        else {
            continue;
        };
        let ready = NativeExecutable::prepare(
            code,
            dispatch.function,
            dispatch.workgroups,
            dispatch.constants,
            &dispatch.bindings,
            resources,
            profiled.as_ref().map(|(p, site, _)| (p, *site)),
        )?;
        if let Some(ready) = ready {
            prepared.push(ready);
            spans.push(profiled);
        } else if let Some((profile, site, start)) = profiled {
            profile.dispatch(*site, *start, profile.now_ns());
        }
    }
    let ends = crate::native::region::run_region(&device, &prepared)?;
    // Each dispatch on the issuing thread's track: from the region's start
    // to its own last workgroup's end.
    for (k, span) in spans.into_iter().enumerate() {
        if let Some((profile, site, start)) = span {
            let end = ends.get(k).copied().unwrap_or(0).max(*start);
            profile.dispatch(*site, *start, end);
        }
    }
    Ok(())
}

/// The device of `dispatches` when there are several, all native, all on
/// one `local-task` device (so they can share its workers).
fn shared_task_device(
    dispatches: &[(&Executable, Dispatch<'_>)],
) -> Result<Option<Arc<DeviceConfig>>, Trap> {
    let mut device: Option<&Arc<DeviceConfig>> = None;
    for (executable, _) in dispatches {
        let Kind::Native { device: d, .. } = &executable.kind else {
            return Ok(None);
        };
        match device {
            Some(first) if !Arc::ptr_eq(first, d) => return Ok(None),
            _ => device = Some(d),
        }
    }
    match device {
        Some(d) if dispatches.len() > 1 && d.workers()?.is_some() => Ok(Some(d.clone())),
        _ => Ok(None),
    }
}

/// A vmvx executable: its bytecode in a private context, and one more per
/// worker of a `local-task` device once a dispatch shares its workgroups.
struct VmvxExecutable {
    name: String,
    /// The context made at load: every dispatch on the calling thread.
    first: Arc<Mutex<Instance>>,
    /// One per worker of a `local-task` device (the calling thread is
    /// worker 0): made (as the first, by the same `__init` and
    /// `__set_constants`) at the first dispatch that shares its workgroups,
    /// and kept. Not the first: a buffer of the first's (a ref global) that
    /// a dispatch on the calling thread touched stays leased to the
    /// program's run until it returns, where a worker under the region's
    /// token could not reach it; these are only ever run by workers, which
    /// give back what they leased when the dispatch ends.
    workers: Mutex<Vec<Arc<Mutex<Instance>>>>,
    entries: Vec<Entry>,
    /// What another instance is made from.
    module: Module,
    constants: Vec<u32>,
    tier: Option<irvm::Tier>,
    /// The resources of the context that loaded it: dispatches run on
    /// its fuel, deadline and interrupt.
    resources: irvm::ContextResources,
}

/// The dispatches of one region with their executables, in recording
/// order: a few, held inline (no allocation per queue execution).
pub type RegionDispatches<'a> = smallvec::SmallVec<[(&'a Executable, Dispatch<'a>); 4]>;

/// One binding of a dispatch: `length` bytes at byte `offset` of
/// `buffer` (a `!vm.buffer`), borrowed for the dispatch.
#[derive(Clone, Copy, Debug)]
pub struct BoundRange<'a> {
    /// The buffer (anything else fails the dispatch, FAILED_PRECONDITION).
    pub buffer: &'a Ref,
    /// First byte of the range.
    pub offset: u64,
    /// Bytes in the range.
    pub length: u64,
}

/// A dispatch's bindings: a few, held inline.
pub type Bindings<'a> = SmallVec<[BoundRange<'a>; 8]>;

impl<'a> BoundRange<'a> {
    /// All of `buffer` (length 0 when it is not a buffer).
    pub fn whole(buffer: &'a Ref) -> BoundRange<'a> {
        let length = match buffer {
            Ref::Buffer(b) => b.len() as u64,
            _ => 0,
        };
        BoundRange {
            buffer,
            offset: 0,
            length,
        }
    }

    /// Each of `buffers`, whole.
    pub fn each_whole(buffers: &'a [Ref]) -> Bindings<'a> {
        buffers.iter().map(BoundRange::whole).collect()
    }

    /// Binding `i`'s buffer and range as `usize`s, checked: a buffer
    /// (FAILED_PRECONDITION else) holding the whole range (OUT_OF_RANGE
    /// else).
    pub fn checked(&self, i: usize) -> Result<(&'a Arc<Buffer>, usize, usize), Trap> {
        let Ref::Buffer(b) = self.buffer else {
            return Err(Trap::new(
                StatusCode::FailedPrecondition,
                format!(
                    "required binding {i} is {}; all bindings must be buffers",
                    self.buffer
                ),
            ));
        };
        let in_range = self
            .offset
            .checked_add(self.length)
            .is_some_and(|end| end <= b.len() as u64);
        if !in_range {
            return Err(Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "binding {i}: range {}+{} is outside its buffer of {} bytes",
                    self.offset,
                    self.length,
                    b.len()
                ),
            ));
        }
        Ok((b, self.offset as usize, self.length as usize))
    }

    /// Binding `i` as a `!vm.buffer` of its range (what a vmvx kernel's
    /// bindings list holds): the buffer itself when the range is all of it,
    /// else a view of the range.
    pub fn view(&self, i: usize) -> Result<Ref, Trap> {
        let (b, offset, length) = self.checked(i)?;
        if offset == 0 && length == b.len() {
            return Ok(Ref::Buffer(b.clone()));
        }
        Ok(Ref::from(Buffer::view(b, offset, length)?))
    }
}

/// One dispatch's resolved arguments.
pub struct Dispatch<'a> {
    /// Entry index (what `executable.lookup.function` returned).
    pub function: i64,
    /// Workgroup counts x, y, z.
    pub workgroups: [u32; 3],
    /// Push constants.
    pub constants: &'a [u32],
    /// The bound byte ranges, borrowed for the dispatch (no views made:
    /// a vmvx dispatch makes the views its kernels' bindings list holds).
    pub bindings: Bindings<'a>,
    /// Source location of the op that recorded it, when known.
    pub location: Option<&'a str>,
}

fn invalid(message: String) -> Trap {
    Trap::new(StatusCode::InvalidArgument, message)
}

impl VmvxExecutable {
    /// Loads a vmvx executable as IREE's vmvx loader does
    /// (`iree_hal_vmvx_executable_create` in
    /// `runtime/src/iree/hal/local/loaders/vmvx_module_loader.c`): every
    /// export of the module is an entry point, in export order, and must
    /// have the entry calling convention ([`ENTRY_SIGNATURE`]), names
    /// starting with `__` included; anything else is refused before any of
    /// the module's code runs. Then the module is registered (running its
    /// exported `__init`, if any) and its exported `__set_constants`, if
    /// any, is called with the constants, both on `resources` (the loading
    /// program's fuel, deadline, interrupt, memory budget and limits, see
    /// [`irvm::ContextResources::run_within`]).
    fn load(
        data: Vec<u8>,
        constants: &[u32],
        resources: irvm::ContextResources,
        tier: Option<irvm::Tier>,
    ) -> Result<VmvxExecutable, Trap> {
        // (Equal bytes loaded before give the same module: verified and
        // lowered once, its kernels compiled once.)
        let module = crate::vmvx_modules::load(data)
            .map_err(|e| invalid(format!("loading vmvx executable: {e}")))?;
        let module_name = module.name().to_string();
        let mut declared = Vec::new();
        for export in module.exports() {
            let sig = module.function_signature(export.internal_ordinal);
            let cconv = sig
                .as_ref()
                .and_then(|s| s.calling_convention)
                .unwrap_or("");
            let attr = |key: &str| {
                sig.as_ref()
                    .and_then(|s| s.attrs.iter().find(|(k, _)| *k == key))
                    .and_then(|(_, v)| v.parse::<usize>().ok())
                    .unwrap_or(0)
            };
            if cconv != ENTRY_SIGNATURE {
                let special = if export.local_name.starts_with("__") {
                    " (every export of a vmvx executable is an entry point, `__`-prefixed \
                     ones included, as IREE's vmvx loader takes them)"
                } else {
                    ""
                };
                return Err(invalid(format!(
                    "executable entry point `{}` does not match the expected calling \
                     convention; expected '{ENTRY_SIGNATURE}' but got '{cconv}'{special}",
                    export.local_name
                )));
            }
            let pages = attr("local_memory") / LOCAL_MEMORY_PAGE;
            declared.push((export.local_name.to_string(), pages * LOCAL_MEMORY_PAGE));
        }
        let first = Self::instantiate(&module, &declared, constants, &resources, tier)?;
        let entries = declared
            .into_iter()
            .map(|(name, local_memory)| Entry { name, local_memory })
            .collect();
        Ok(VmvxExecutable {
            name: module_name,
            first: Arc::new(Mutex::new(first)),
            workers: Mutex::new(Vec::new()),
            entries,
            module,
            constants: constants.to_vec(),
            tier,
            resources,
        })
    }

    /// A context holding `module`, registered (running its `__init`) and
    /// given `constants` (its `__set_constants`) on `resources`, and its
    /// entry functions (`declared`, in order).
    fn instantiate(
        module: &Module,
        declared: &[(String, usize)],
        constants: &[u32],
        resources: &irvm::ContextResources,
        tier: Option<irvm::Tier>,
    ) -> Result<Instance, Trap> {
        let module_name = module.name().to_string();
        let registry = TypeRegistry::new();
        let mut context = Context::new(&registry);
        if let Some(tier) = tier {
            context.set_tier(tier);
        }
        context
            .register_host_module(
                &super::vmvx::vmvx_module()
                    .map_err(|e| invalid(format!("building the vmvx module: {e}")))?,
            )
            .map_err(|e| invalid(format!("linking vmvx executable: {e}")))?;
        // Registration runs the module's `__init`: on the loading
        // program's fuel, deadline, interrupt, budget and limits.
        resources
            .run_within(&mut context, |context| {
                context.register_module(module.clone())
            })
            .map_err(|e| match e {
                LinkError::Init { trap, .. } => Trap::new(
                    trap.code,
                    format!(
                        "initializing vmvx executable `{module_name}` (its globals and \
                         `__init`): {}",
                        trap.message
                    ),
                ),
                // The executable's module, held in memory, is charged to
                // the loading program's budget.
                LinkError::ModuleMemory { trap, .. } => Trap::new(
                    trap.code,
                    format!("loading vmvx executable `{module_name}`: {}", trap.message),
                ),
                e => invalid(format!("linking vmvx executable: {e}")),
            })?;
        let mut funcs = Vec::with_capacity(declared.len());
        for (name, _) in declared {
            let func = context
                .function(&format!("{module_name}.{name}"))
                .map_err(|e| invalid(format!("executable entry `{name}` not found: {e}")))?;
            funcs.push(func);
        }
        match context
            .function(&format!("{module_name}.__set_constants"))
            .ok()
        {
            Some(set) => {
                if constants.is_empty() {
                    return Err(invalid(
                        "executable requires executable-level constants but none were provided"
                            .into(),
                    ));
                }
                // IREE passes the constants as one `!vm.buffer` argument.
                // An export of the only convention accepted above takes
                // twelve, so this call is refused before any code runs;
                // IREE fails here too before running any (OUT_OF_RANGE:
                // `iree_hal_vmvx_executable_set_constants` gives its
                // argument list too little storage).
                let bytes: Vec<u8> = constants.iter().flat_map(|c| c.to_le_bytes()).collect();
                let buffer = Value::Ref(Ref::from(Buffer::from_vec(bytes)));
                resources
                    .run_within(&mut context, |context| context.invoke(&set, &[buffer]))
                    .map_err(|t| {
                        Trap::new(
                            t.code,
                            format!(
                                "setting the constants of vmvx executable `{module_name}`: {}",
                                t.message
                            ),
                        )
                    })?;
            }
            None if !constants.is_empty() => {
                return Err(invalid(format!(
                    "executable has no executable-level constants but {} constants were provided",
                    constants.len()
                )))
            }
            None => {}
        }
        Ok(Instance::new(context, funcs))
    }

    /// The instances of `count` workers, made now when missing (charged to
    /// the loading context).
    fn instances(&self, count: usize) -> Result<Vec<Arc<Mutex<Instance>>>, Trap> {
        let mut made = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        let declared: Vec<(String, usize)> = self
            .entries
            .iter()
            .map(|e| (e.name.clone(), e.local_memory))
            .collect();
        while made.len() < count {
            let instance = Self::instantiate(
                &self.module,
                &declared,
                &self.constants,
                &self.resources,
                self.tier,
            )?;
            made.push(Arc::new(Mutex::new(instance)));
        }
        Ok(made[..count].to_vec())
    }

    /// Runs every workgroup of `dispatch`: on every worker of a
    /// `local-task` `device` (unless the loading context has a fuel limit,
    /// which is spent in program order), else on the calling thread, z
    /// outermost and x innermost. While profiled (`profile`: the profile
    /// and the dispatch's site), each thread's run of workgroups is a batch
    /// on its track.
    fn dispatch(
        &self,
        dispatch: &Dispatch<'_>,
        device: &DeviceConfig,
        profile: Option<(&irvm::profile::Profile, u32)>,
    ) -> Result<(), Trap> {
        let index = usize::try_from(dispatch.function)
            .ok()
            .filter(|&i| i < self.entries.len());
        let entry = index.and_then(|i| self.entries.get(i)).ok_or_else(|| {
            Trap::new(
                StatusCode::OutOfRange,
                format!(
                    "function id {} out of range (count: {})",
                    dispatch.function,
                    self.entries.len()
                ),
            )
        })?;
        let [cx, cy, cz] = dispatch.workgroups;
        let total = cx as u64 * cy as u64 * cz as u64;
        if total > MAX_WORKGROUPS {
            return Err(Trap::new(
                StatusCode::ResourceExhausted,
                format!(
                    "dispatch of `{}` asks for {cx}x{cy}x{cz} workgroups; irvm runs at most \
                     {MAX_WORKGROUPS} per dispatch",
                    entry.name
                ),
            ));
        }
        let bytes: SmallVec<[u8; 128]> = dispatch
            .constants
            .iter()
            .flat_map(|c| c.to_le_bytes())
            .collect();
        let views = dispatch
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| b.view(i))
            .collect::<Result<SmallVec<[Ref; 8]>, Trap>>()?;
        let shared = match device.workers()? {
            Some(pool) if pool.count() > 1 && total > 1 && self.resources.fuel().is_none() => {
                Some(pool)
            }
            _ => None,
        };
        if let (Some(pool), Some(index)) = (shared, index) {
            let workers = pool.count();
            // (Each worker's local memory is the program's, as below:
            // charged by `Instance::arguments` as long as it is kept.)
            let instances = self.instances(workers)?;
            let grid = Grid {
                entry: index,
                name: &entry.name,
                counts: [cx, cy, cz],
                constants: &bytes,
                bindings: &views,
                local_memory: entry.local_memory,
                resources: &self.resources,
                profile,
            };
            return crate::vmvx_grid::run(&grid, pool, &instances);
        }
        let start = profile.map(|(p, _)| p.now_ns());
        // Workgroup local memory is the program's, like the kernels' own
        // allocations (charged through `run_within`): `arguments` charges
        // it for as long as the instance keeps it.
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        let [local_memory, constants, bindings] =
            first.arguments(&self.resources, entry.local_memory, &bytes, &views)?;
        drop(views);
        let Instance { context, funcs, .. } = &mut *first;
        let func = index
            .and_then(|i| funcs.get(i))
            .ok_or_else(|| invalid(format!("executable entry `{}` has no function", entry.name)))?;
        // The kernel's bytecode runs on the calling program's fuel,
        // deadline and interrupt: one budget for program and dispatches.
        let result = self.resources.run_within(context, |context| {
            Self::run_grid(
                context,
                entry,
                func,
                [cx, cy, cz],
                [local_memory, constants, bindings],
            )
        });
        first.end_dispatch();
        if let (Some((profile, site)), Some(start)) = (profile, start) {
            // In order, on the calling thread.
            profile.batch(site, start, profile.now_ns(), total);
        }
        result
    }

    fn run_grid(
        context: &mut Context,
        entry: &Entry,
        func: &Func,
        [cx, cy, cz]: [u32; 3],
        arguments: [Ref; 3],
    ) -> Result<(), Trap> {
        let _flush = super::fpu::FlushDenormals::begin();
        let mut args = EntryArgs::new(arguments, [cx, cy, cz]);
        for z in 0..cz {
            for y in 0..cy {
                for x in 0..cx {
                    context
                        .invoke(func, args.for_workgroup([x, y, z]))
                        .map_err(|t| {
                            Trap::new(
                                t.code,
                                format!(
                                    "dispatch `{}` workgroup ({x}, {y}, {z}): {}",
                                    entry.name, t.message
                                ),
                            )
                        })?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_range_is_checked_against_its_buffer_and_views_only_its_bytes() {
        let buf = Ref::from(Buffer::from_vec((0u8..16).collect()));
        let r = BoundRange {
            buffer: &buf,
            offset: 4,
            length: 8,
        };
        let (b, offset, length) = r.checked(0).unwrap();
        assert_eq!((b.len(), offset, length), (16, 4, 8));
        let view = r.view(0).unwrap();
        assert_eq!(
            view.buffer("v").unwrap().to_vec(),
            (4u8..12).collect::<Vec<_>>()
        );
        assert_eq!(BoundRange::whole(&buf).length, 16);

        for (offset, length) in [(9, 8), (16, 1), (u64::MAX, 2)] {
            let e = BoundRange {
                buffer: &buf,
                offset,
                length,
            }
            .checked(3)
            .err()
            .expect("out of range");
            assert_eq!(e.code, StatusCode::OutOfRange);
            assert!(e.message.starts_with("binding 3: range"), "{}", e.message);
        }
        let null = Ref::Null;
        let e = BoundRange::whole(&null)
            .checked(1)
            .err()
            .expect("not a buffer");
        assert_eq!(e.code, StatusCode::FailedPrecondition);
        assert!(e.message.contains("required binding 1"), "{}", e.message);
    }
}
