//! Native executables (llvm-cpu): kernels compiled to machine code, in an
//! ELF shared object that follows IREE's executable library ABI
//! ([`abi`]). Both of IREE's x86-64 formats load the same way here:
//!
//! - `embedded-elf-x86_64` (iree-compile's default): a self-contained ELF
//!   with no libc dependency;
//! - `system-elf-x86_64` (`--iree-llvmcpu-link-embedded=false`): a plain
//!   shared library, possibly followed by IREE's debug-database footer.
//!
//! The bytes go into an anonymous in-memory file (`memfd_create`, no temp
//! file) that the system loader maps (`dlopen` of `/proc/self/fd/N`). The
//! library's query function hands back its tables; a dispatch then calls
//! an export once per workgroup, on the calling thread (`local-sync`) or
//! across the device's worker pool (`local-task`).
//!
//! This is code from the module running with the host's rights: a
//! [`crate::DeviceOptions`] with `native_executables: false` never gets
//! here.

pub mod abi;
pub mod cpu;
mod dynamic;
pub mod elf;
pub mod library_cache;
pub mod region;

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use irvm::{ContextResources, StatusCode, Trap};

use self::abi::{DispatchAttrs, DispatchFn, Environment, LibraryV0};
pub use self::region::PreparedDispatch;
use crate::device::DeviceConfig;
use crate::executable::BoundRange;

/// The native formats irvm loads on this host.
pub const NATIVE_FORMATS: &[&str] = if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
    &["embedded-elf-x86_64", "system-elf-x86_64"]
} else {
    &[]
};

/// Most exports one library may declare (a larger count is a corrupt table).
const MAX_EXPORTS: u32 = 1 << 16;

/// One exported dispatch function.
struct Export {
    name: String,
    function: DispatchFn,
    attrs: DispatchAttrs,
    /// `file:line` of the op the export was made from, when the library
    /// carries source locations (profiles show it).
    location: Option<String>,
}

/// A loaded native executable.
pub struct NativeExecutable {
    /// What the library calls itself (its header's name).
    name: String,
    exports: Vec<Export>,
    /// Points into `constants`; the library reads it on every call.
    environment: Box<Environment>,
    /// Executable-level constants (kept alive for `environment`).
    _constants: Box<[u32]>,
    /// The null import functions and contexts `environment` points at.
    _imports: ImportSlots,
    /// Keeps the code and tables mapped; dropped after the fields above.
    _library: libloading::Library,
    /// The in-memory file the library was loaded from, closed only after
    /// the library is unloaded: the system loader knows a library by the
    /// path it was opened under (`/proc/self/fd/N`), so the descriptor
    /// number must not be reused while the library is loaded, or loading
    /// another library under the same path would return this one.
    _file: std::fs::File,
}

// SAFETY: the library's tables and code are immutable once loaded and live
// as long as `_library`; IREE's ABI requires dispatch functions to be
// callable from any thread, concurrently (its task executor does so). The
// environment is written only during `load`, before the value is shared.
unsafe impl Send for NativeExecutable {}
// SAFETY: as above: nothing is mutated through `&self`.
unsafe impl Sync for NativeExecutable {}

fn failed(message: impl Into<String>) -> Trap {
    Trap::new(StatusCode::FailedPrecondition, message.into())
}

/// The loaded library's segments at their addresses: every pointer the
/// runtime takes from the library is checked against them before it is
/// read or called, so a corrupted table is refused, not followed.
struct Mapped {
    /// The load base (`l_addr`): segment addresses are relative to it.
    base: usize,
    layout: elf::Layout,
}

impl Mapped {
    /// The offset from the base of `p` when `count` values of `T` there
    /// lie in one segment (in code with `code`) and `p` is aligned for `T`.
    fn offset<T>(&self, p: *const T, count: usize, code: bool) -> Option<u64> {
        let at = (p as usize).checked_sub(self.base)? as u64;
        let len = std::mem::size_of::<T>().checked_mul(count)? as u64;
        ((p as usize) % std::mem::align_of::<T>() == 0 && self.layout.contains(at, len, code))
            .then_some(at)
    }

    /// Checks that `p` points at `count` values of `T` in the library's
    /// data; `what` names them in the error.
    fn table<T>(&self, p: *const T, count: usize, what: &str) -> Result<(), Trap> {
        self.offset(p, count, false)
            .map(|_| ())
            .ok_or_else(|| failed(format!("executable {what} points outside the library")))
    }

    /// Whether `f` is an address in the library's code.
    fn is_code(&self, f: usize) -> bool {
        self.offset(f as *const u8, 1, true).is_some()
    }

    /// The NUL-terminated string at `p` (`None` for null); it must end
    /// inside the segment it starts in, within 4 KiB.
    fn string(&self, p: *const std::ffi::c_char, what: &str) -> Result<Option<String>, Trap> {
        if p.is_null() {
            return Ok(None);
        }
        let outside = || failed(format!("executable {what} points outside the library"));
        let at = self.offset(p, 1, false).ok_or_else(outside)?;
        let len = self.layout.remaining(at).min(4096) as usize;
        // SAFETY: `len` bytes from `p` lie in one mapped segment of the
        // loaded library (checked just above), which stays mapped while
        // the library is loaded.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
        let end = bytes
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| failed(format!("executable {what} is not NUL-terminated")))?;
        Ok(Some(String::from_utf8_lossy(&bytes[..end]).into_owned()))
    }
}

/// Import thunk handed to libraries: calls the import directly (the
/// calling convention of x86-64 System V needs no adaptation).
unsafe extern "C" fn call_import(
    function: abi::ImportFn,
    params: *mut c_void,
    context: *mut c_void,
    reserved: *mut c_void,
) -> c_int {
    // SAFETY: the library passes one of the import pointers it was given
    // (irvm gives none, so this is only reached by a corrupt library,
    // which is trusted code either way).
    unsafe { function(params, context, reserved) }
}

/// The null import functions and contexts an [`Environment`] points at.
type ImportSlots = (Box<[Option<abi::ImportFn>]>, Box<[*const c_void]>);

/// The shared object inside `data`, when this host loads `format`.
fn library_image<'a>(format: &str, data: &'a [u8]) -> Result<&'a [u8], Trap> {
    if !NATIVE_FORMATS.contains(&format) {
        return Err(Trap::new(
            StatusCode::NotFound,
            format!("no executable loader for format `{format}` on this host"),
        ));
    }
    elf::library_bytes(format, data)
}

/// The library's query function, checked to be in its code.
fn query_function(library: &libloading::Library, mapped: &Mapped) -> Result<abi::QueryFn, Trap> {
    // SAFETY: the symbol is the library query function of IREE's ABI;
    // its type is `abi::QueryFn`.
    let query: abi::QueryFn = unsafe {
        *library
            .get::<abi::QueryFn>(abi::QUERY_SYMBOL.as_bytes())
            .map_err(|_| {
                Trap::new(
                    StatusCode::NotFound,
                    format!("executable library has no `{}` export", abi::QUERY_SYMBOL),
                )
            })?
    };
    if !mapped.is_code(query as usize) {
        return Err(failed(format!(
            "executable library's `{}` is not in its code",
            abi::QUERY_SYMBOL
        )));
    }
    Ok(query)
}

/// The environment every call of the library sees: `constants`, no
/// imports (yet) and this processor's features.
fn environment_for(constants: &[u32]) -> Box<Environment> {
    Box::new(Environment {
        constants: if constants.is_empty() {
            std::ptr::null()
        } else {
            constants.as_ptr()
        },
        import_thunk: None,
        import_funcs: std::ptr::null(),
        import_contexts: std::ptr::null(),
        processor: cpu::processor_data(),
    })
}

/// Asks the library for its v0 table, checked to lie in its data; it
/// stays valid while `library` is loaded.
fn library_table<'l>(
    _library: &'l libloading::Library,
    query: abi::QueryFn,
    environment: &Environment,
    mapped: &Mapped,
) -> Result<&'l LibraryV0, Trap> {
    // SAFETY: calling the library's query function as its ABI says,
    // with an environment that outlives the library's use of it.
    let header_ptr = unsafe { query(abi::LIBRARY_VERSION, environment) };
    if header_ptr.is_null() {
        return Err(failed(format!(
            "executable does not support this version of the runtime ({:08X})",
            abi::LIBRARY_VERSION
        )));
    }
    let table_ptr = header_ptr as *const LibraryV0;
    mapped.table(table_ptr, 1, "library table")?;
    // SAFETY: the v0 table lies, aligned, in a mapped segment of the
    // library (checked just above), static data mapped while `library`
    // lives.
    Ok(unsafe { &*table_ptr })
}

/// Checks the library's header (version, sanitizer); returns its name.
fn check_library_header(table: &LibraryV0, mapped: &Mapped) -> Result<String, Trap> {
    if table.header.is_null() {
        return Err(failed("executable library returned no header"));
    }
    mapped.table(table.header, 1, "library header")?;
    // SAFETY: the header lies, aligned, in a mapped segment (checked).
    let header = unsafe { &*table.header };
    let name = mapped.string(header.name, "name")?.unwrap_or_default();
    if header.version > abi::LIBRARY_VERSION {
        return Err(failed(format!(
            "executable `{name}` was built for library version {:08X}, newer than the \
             runtime's ({:08X})",
            header.version,
            abi::LIBRARY_VERSION
        )));
    }
    if header.sanitizer != 0 {
        return Err(Trap::new(
            StatusCode::Unavailable,
            format!(
                "executable `{name}` requires a sanitizer (kind {}); irvm runs none",
                header.sanitizer
            ),
        ));
    }
    Ok(name)
}

/// Refuses required imports (irvm provides none) and points `environment`
/// at null slots for the optional ones; returns those slots.
fn resolve_imports(
    imports: &abi::ImportTable,
    name: &str,
    mapped: &Mapped,
    environment: &mut Environment,
) -> Result<ImportSlots, Trap> {
    if imports.count == 0 {
        return Ok((Box::new([]), Box::new([])));
    }
    if imports.symbols.is_null() {
        return Err(failed(format!(
            "executable `{name}` declares imports without names"
        )));
    }
    mapped.table(imports.symbols, imports.count as usize, "import table")?;
    let mut optional = 0usize;
    for i in 0..imports.count as usize {
        // SAFETY: `symbols` holds `count` string pointers in a
        // mapped segment (checked above).
        let symbol = mapped
            .string(unsafe { *imports.symbols.add(i) }, "import name")?
            .unwrap_or_default();
        match symbol.strip_prefix('?') {
            Some(_) => optional += 1,
            None => {
                return Err(Trap::new(
                    StatusCode::NotFound,
                    format!(
                        "executable `{name}` requires import `{symbol}`, which irvm \
                         does not provide (it provides no executable imports or plugins)"
                    ),
                ))
            }
        }
    }
    // Optional imports resolve to null; the thunk is set as IREE sets it.
    let import_funcs: Box<[Option<abi::ImportFn>]> = vec![None; optional].into_boxed_slice();
    let import_contexts: Box<[*const c_void]> = vec![std::ptr::null(); optional].into_boxed_slice();
    environment.import_thunk = Some(call_import);
    environment.import_funcs = import_funcs.as_ptr();
    environment.import_contexts = import_contexts.as_ptr();
    Ok((import_funcs, import_contexts))
}

/// Checks the library takes as many executable-level constants as given.
fn check_constant_count(table: &LibraryV0, given: usize) -> Result<(), Trap> {
    if table.constants.count as usize != given {
        return Err(failed(format!(
            "executable requires {} constants but caller provided {}; must match",
            table.constants.count, given
        )));
    }
    Ok(())
}

/// The library's exports, each checked: a name, constant and binding
/// counts within IREE's limits, and a function in the library's code.
fn read_exports(ex: &abi::ExportTable, name: &str, mapped: &Mapped) -> Result<Vec<Export>, Trap> {
    if ex.count > MAX_EXPORTS {
        return Err(failed(format!(
            "executable `{name}` declares {} exports (at most {MAX_EXPORTS})",
            ex.count
        )));
    }
    if ex.count > 0 && (ex.attrs.is_null() || ex.names.is_null() || ex.ptrs.is_null()) {
        return Err(failed(
            "executable exports must provide functions, dispatch attributes and names",
        ));
    }
    let count = ex.count as usize;
    if count > 0 {
        mapped.table(ex.attrs, count, "export attributes")?;
        mapped.table(ex.ptrs, count, "export functions")?;
        mapped.table(ex.names, count, "export names")?;
    }
    let mut exports = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the three tables hold `count` entries each in mapped
        // segments of the library (checked above).
        let (attrs, function, export_name) =
            unsafe { (*ex.attrs.add(i), *ex.ptrs.add(i), *ex.names.add(i)) };
        let export_name = mapped
            .string(export_name, "export name")?
            .filter(|n| !n.is_empty())
            .ok_or_else(|| failed(format!("executable export {i} missing function name")))?;
        check_export_counts(&attrs)?;
        let function = function
            .ok_or_else(|| failed(format!("executable export `{export_name}` has no function")))?;
        if !mapped.is_code(function as usize) {
            return Err(failed(format!(
                "executable export `{export_name}` is not in the library's code"
            )));
        }
        exports.push(Export {
            name: export_name,
            function,
            attrs,
            location: source_location(ex, i, mapped),
        });
    }
    Ok(exports)
}

/// Export `i`'s source location (`path:line`), read from the library's
/// optional location table; a table or path outside the library's data
/// is debug information missing, not an error.
fn source_location(ex: &abi::ExportTable, i: usize, mapped: &Mapped) -> Option<String> {
    let table = ex.source_locations.cast::<abi::SourceLocation>();
    if table.is_null() || mapped.table(table, ex.count as usize, "").is_err() {
        return None;
    }
    // SAFETY: the table holds `count` entries in the library's data
    // (checked above) and `i < count`.
    let loc = unsafe { *table.add(i) };
    let len = loc.path_length as usize;
    if loc.path.is_null() || len == 0 || len > 4096 {
        return None;
    }
    let path = loc.path.cast::<u8>();
    mapped.table(path, len, "").ok()?;
    // SAFETY: `len` bytes at `path` lie in the library's data (checked
    // above), which stays mapped while the library is loaded.
    let bytes = unsafe { std::slice::from_raw_parts(path, len) };
    Some(format!("{}:{}", String::from_utf8_lossy(bytes), loc.line))
}

/// Checks an export's constant and binding counts against IREE's limits.
fn check_export_counts(attrs: &DispatchAttrs) -> Result<(), Trap> {
    if u32::from(attrs.constant_count) > abi::MAX_CONSTANT_COUNT {
        return Err(Trap::new(
            StatusCode::OutOfRange,
            format!(
                "dispatch requiring {} constants exceeds limit of {}",
                attrs.constant_count,
                abi::MAX_CONSTANT_COUNT
            ),
        ));
    }
    if u32::from(attrs.binding_count) > abi::MAX_BINDING_COUNT {
        return Err(Trap::new(
            StatusCode::OutOfRange,
            format!(
                "dispatch requiring {} bindings exceeds limit of {}",
                attrs.binding_count,
                abi::MAX_BINDING_COUNT
            ),
        ));
    }
    Ok(())
}

impl NativeExecutable {
    /// Loads `data` of native `format` with executable-level `constants`.
    pub fn load(format: &str, data: &[u8], constants: &[u32]) -> Result<NativeExecutable, Trap> {
        let image = library_image(format, data)?;
        let layout = elf::check_layout(image)?;
        let (library, file, base) = open_in_memory(image)?;
        let mapped = Mapped { base, layout };
        let query = query_function(&library, &mapped)?;
        let constants: Box<[u32]> = constants.into();
        let mut environment = environment_for(&constants);
        let table = library_table(&library, query, &environment, &mapped)?;
        let name = check_library_header(table, &mapped)?;
        let imports = resolve_imports(&table.imports, &name, &mapped, &mut environment)?;
        check_constant_count(table, constants.len())?;
        let exports = read_exports(&table.exports, &name, &mapped)?;
        Ok(NativeExecutable {
            name,
            exports,
            environment,
            _constants: constants,
            _imports: imports,
            _library: library,
            _file: file,
        })
    }

    /// The library's own name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Export names, in ordinal order.
    pub fn export_names(&self) -> impl Iterator<Item = &str> {
        self.exports.iter().map(|e| e.name.as_str())
    }

    /// Where export `ordinal` came from in the source (`file:line`), when
    /// the library says.
    pub fn export_location(&self, ordinal: usize) -> Option<&str> {
        self.exports.get(ordinal)?.location.as_deref()
    }

    /// The ordinal of export `name`.
    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.exports.iter().position(|e| e.name == name)
    }

    /// Checks a dispatch of export `function` over `workgroups` with push
    /// `constants` and `bindings` (byte ranges of buffers) for running in a
    /// region ([`region::run_region`]) on `resources` (the loading
    /// context's); `None` when it has no workgroups.
    pub fn prepare<'a>(
        this: &'a Arc<NativeExecutable>,
        function: i64,
        workgroups: [u32; 3],
        constants: &'a [u32],
        bindings: &'a [BoundRange<'a>],
        resources: &'a ContextResources,
        profile: Option<(&'a Arc<irvm::profile::Profile>, u32)>,
    ) -> Result<Option<PreparedDispatch<'a>>, Trap> {
        let index = usize::try_from(function)
            .ok()
            .filter(|&i| i < this.exports.len())
            .ok_or_else(|| {
                Trap::new(
                    StatusCode::OutOfRange,
                    format!(
                        "function id {function} out of range (count: {})",
                        this.exports.len()
                    ),
                )
            })?;
        let export = &this.exports[index];
        let attrs = &export.attrs;
        if constants.len() != usize::from(attrs.constant_count) {
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "constant count mismatch, expected {} but was provided {}",
                    attrs.constant_count,
                    constants.len()
                ),
            ));
        }
        if bindings.len() != usize::from(attrs.binding_count) {
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!(
                    "binding count mismatch, expected {} but was provided {}",
                    attrs.binding_count,
                    bindings.len()
                ),
            ));
        }
        let [cx, cy, cz] = workgroups;
        let total = u64::from(cx) * u64::from(cy) * u64::from(cz);
        if total == 0 {
            return Ok(None);
        }
        if total > super::executable::MAX_WORKGROUPS {
            return Err(Trap::new(
                StatusCode::ResourceExhausted,
                format!(
                    "dispatch of `{}` asks for {cx}x{cy}x{cz} workgroups; irvm runs at most \
                     {} per dispatch",
                    export.name,
                    super::executable::MAX_WORKGROUPS
                ),
            ));
        }
        if u16::try_from(cz).is_err() {
            return Err(Trap::new(
                StatusCode::InvalidArgument,
                format!("workgroup count z {cz} exceeds the ABI's 16-bit limit"),
            ));
        }
        for (i, b) in bindings.iter().enumerate() {
            b.checked(i)?;
        }
        Ok(Some(PreparedDispatch {
            code: this,
            export: index,
            counts: workgroups,
            constants,
            bindings,
            resources,
            profile,
        }))
    }

    /// Runs every workgroup of export `function` over `workgroups` with
    /// push `constants` and `bindings` (byte ranges of buffers), on
    /// `device`: a region of one dispatch.
    pub fn dispatch(
        this: &Arc<NativeExecutable>,
        function: i64,
        workgroups: [u32; 3],
        constants: &[u32],
        bindings: &[BoundRange<'_>],
        on: DispatchTarget<'_>,
    ) -> Result<(), Trap> {
        let DispatchTarget {
            device,
            resources,
            profile,
        } = on;
        match Self::prepare(
            this, function, workgroups, constants, bindings, resources, profile,
        )? {
            Some(prepared) => region::run_region(device, &[prepared]).map(|_| ()),
            None => Ok(()),
        }
    }
}

/// Where a native dispatch runs: the device (its worker pool), the
/// resources of the context that loaded the executable (interrupt,
/// deadline, memory), and the profile recording it with the dispatch's
/// site there.
pub struct DispatchTarget<'a> {
    /// The device.
    pub device: &'a DeviceConfig,
    /// The loading context's resources.
    pub resources: &'a ContextResources,
    /// The profile and the dispatch's site, while profiled.
    pub profile: Option<(&'a Arc<irvm::profile::Profile>, u32)>,
}

/// Maps `image` with the system loader from an anonymous in-memory file
/// (returned too: it must stay open while the library is loaded).
#[cfg(target_os = "linux")]
fn open_in_memory(image: &[u8]) -> Result<(libloading::Library, std::fs::File, usize), Trap> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let name = c"irvm-executable";
    // SAFETY: memfd_create with a NUL-terminated name; the returned fd is
    // owned by the `File` made from it.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(Trap::new(
            StatusCode::Unavailable,
            format!(
                "creating an in-memory file for a native executable: {}",
                std::io::Error::last_os_error()
            ),
        ));
    }
    // SAFETY: `fd` is a fresh descriptor owned by nothing else.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(image).map_err(|e| {
        Trap::new(
            StatusCode::Unavailable,
            format!("writing a native executable to an in-memory file: {e}"),
        )
    })?;
    let path = format!("/proc/self/fd/{fd}");
    // SAFETY: loading a library runs its initializers; an executable
    // library has none (its only export is the query function), and
    // loading module code at all is what the user allowed by enabling
    // native executables.
    let library = unsafe {
        libloading::os::unix::Library::open(
            Some(&path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .map_err(|e| {
        Trap::new(
            StatusCode::InvalidArgument,
            format!("the system loader refused the native executable: {e}"),
        )
    })?;
    let handle = library.into_raw();
    let mut map: *mut c_void = std::ptr::null_mut();
    // SAFETY: `handle` is a live handle from dlopen; RTLD_DI_LINKMAP stores
    // a pointer to its `struct link_map`, whose first field is the load
    // base `l_addr` (glibc's <link.h>).
    let base = unsafe {
        let ok = libc::dlinfo(handle, libc::RTLD_DI_LINKMAP, (&raw mut map).cast()) == 0;
        (ok && !map.is_null()).then(|| *map.cast::<usize>())
    };
    // SAFETY: `handle` came from `into_raw` just above and is owned again.
    let library = unsafe { libloading::os::unix::Library::from_raw(handle) };
    let base = base.ok_or_else(|| {
        Trap::new(
            StatusCode::Unavailable,
            "the system loader did not say where it loaded the native executable",
        )
    })?;
    Ok((library.into(), file, base))
}

#[cfg(not(target_os = "linux"))]
fn open_in_memory(_: &[u8]) -> Result<(libloading::Library, std::fs::File, usize), Trap> {
    Err(Trap::new(
        StatusCode::Unavailable,
        "native executables are loaded only on Linux",
    ))
}
