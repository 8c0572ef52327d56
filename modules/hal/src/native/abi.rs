//! The executable library ABI that llvm-cpu kernels are compiled against
//! (IREE 3.13, `runtime/src/iree/hal/local/executable_library.h`, version
//! 0.6): the C structures passed across the boundary, laid out as C lays
//! them out. Field-for-field mirrors; the comments say what irvm puts in
//! or reads out.

use std::ffi::{c_char, c_int, c_void};

/// The library version irvm hosts (`IREE_HAL_EXECUTABLE_LIBRARY_VERSION_0_6`).
pub const LIBRARY_VERSION: u32 = 0x0000_0006;

/// The symbol every executable library exports.
pub const QUERY_SYMBOL: &str = "iree_hal_executable_library_query";

/// Bytes per page of workgroup local memory.
pub const LOCAL_MEMORY_PAGE: usize = 4096;

/// Most push constants and bindings one dispatch may declare.
pub const MAX_CONSTANT_COUNT: u32 = 64;
/// See [`MAX_CONSTANT_COUNT`].
pub const MAX_BINDING_COUNT: u32 = 64;

/// Words of processor data in the environment.
pub const PROCESSOR_DATA_WORDS: usize = 8;

/// `iree_hal_executable_library_header_t`.
#[repr(C)]
pub struct LibraryHeader {
    pub version: u32,
    pub name: *const c_char,
    pub features: u32,
    /// `iree_hal_executable_library_sanitizer_kind_t` (0: none).
    pub sanitizer: c_int,
}

/// `iree_hal_executable_library_query_fn_t`: returns a pointer to the
/// library's header pointer (the first field of [`LibraryV0`]), or null
/// when it cannot serve `max_version`.
pub type QueryFn = unsafe extern "C" fn(
    max_version: u32,
    environment: *const Environment,
) -> *const *const LibraryHeader;

/// `iree_hal_executable_import_v0_t`.
pub type ImportFn =
    unsafe extern "C" fn(params: *mut c_void, context: *mut c_void, reserved: *mut c_void) -> c_int;

/// `iree_hal_executable_import_thunk_v0_t`.
pub type ImportThunk = unsafe extern "C" fn(
    function: ImportFn,
    params: *mut c_void,
    context: *mut c_void,
    reserved: *mut c_void,
) -> c_int;

/// `iree_hal_executable_dispatch_v0_t`: 0 on success.
pub type DispatchFn = unsafe extern "C" fn(
    environment: *const Environment,
    dispatch_state: *const DispatchState,
    workgroup_state: *const WorkgroupState,
) -> c_int;

/// `iree_hal_executable_import_table_v0_t`: `count` symbol names, sorted;
/// a leading `?` marks an optional import.
#[repr(C)]
pub struct ImportTable {
    pub count: u32,
    pub symbols: *const *const c_char,
}

/// `iree_hal_executable_environment_v0_t`: what every call sees of the
/// host. irvm provides no imports, so the import fields stay null (a
/// library that requires one is refused at load).
#[repr(C)]
pub struct Environment {
    /// Executable-level constants (as many as the library declares).
    pub constants: *const u32,
    pub import_thunk: Option<ImportThunk>,
    pub import_funcs: *const Option<ImportFn>,
    pub import_contexts: *const *const c_void,
    /// `iree_hal_processor_v0_t`: the CPU's feature words ([`super::cpu`]).
    pub processor: [u64; PROCESSOR_DATA_WORDS],
}

/// `iree_hal_executable_dispatch_state_v0_t`.
#[repr(C)]
pub struct DispatchState {
    pub workgroup_size_x: u32,
    pub workgroup_size_y: u32,
    pub workgroup_size_z: u16,
    pub constant_count: u16,
    pub workgroup_count_x: u32,
    pub workgroup_count_y: u32,
    pub workgroup_count_z: u16,
    pub max_concurrency: u8,
    pub binding_count: u8,
    pub constants: *const u32,
    pub binding_ptrs: *const *mut c_void,
    pub binding_lengths: *const usize,
}

/// `iree_hal_executable_workgroup_state_v0_t`.
#[repr(C)]
pub struct WorkgroupState {
    pub workgroup_id_x: u32,
    pub workgroup_id_y: u32,
    pub workgroup_id_z: u16,
    pub reserved: u16,
    pub processor_id: u32,
    pub local_memory: *mut c_void,
    pub local_memory_size: u32,
}

/// `iree_hal_executable_dispatch_attrs_v0_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DispatchAttrs {
    pub flags: u64,
    pub local_memory_pages: u16,
    pub constant_count: u8,
    pub binding_count: u8,
    pub workgroup_size_x: u32,
    pub workgroup_size_y: u32,
    pub workgroup_size_z: u16,
    pub parameter_count: u16,
    pub reserved: [u64; 5],
}

/// `iree_hal_executable_export_table_v0_t`.
#[repr(C)]
pub struct ExportTable {
    pub count: u32,
    pub ptrs: *const Option<DispatchFn>,
    pub attrs: *const DispatchAttrs,
    pub params: *const *const c_void,
    pub occupancy: *const c_void,
    pub names: *const *const c_char,
    pub tags: *const *const c_char,
    pub parameter_names: *const *const c_char,
    pub source_locations: *const c_void,
    pub stage_locations: *const c_void,
}

/// `iree_hal_executable_source_location_v0_t`: where an export came from
/// (`source_locations` holds one per export).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SourceLocation {
    pub line: u32,
    pub path_length: u32,
    pub path: *const c_char,
}

/// `iree_hal_executable_constant_table_v0_t`.
#[repr(C)]
pub struct ConstantTable {
    pub count: u32,
}

/// `iree_hal_executable_source_file_table_v0_t`.
#[repr(C)]
pub struct SourceFileTable {
    pub count: u32,
    pub files: *const c_void,
}

/// `iree_hal_executable_library_v0_t`.
#[repr(C)]
pub struct LibraryV0 {
    pub header: *const LibraryHeader,
    pub imports: ImportTable,
    pub exports: ExportTable,
    pub constants: ConstantTable,
    pub sources: SourceFileTable,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The offsets C gives these structures on LP64 targets (from the
    /// header's field order, natural alignment).
    #[test]
    fn layouts_match_the_c_header() {
        assert_eq!(size_of::<Environment>(), 32 + 64);
        assert_eq!(offset_of!(Environment, processor), 32);
        assert_eq!(offset_of!(DispatchState, constant_count), 10);
        assert_eq!(offset_of!(DispatchState, workgroup_count_z), 20);
        assert_eq!(offset_of!(DispatchState, max_concurrency), 22);
        assert_eq!(offset_of!(DispatchState, binding_count), 23);
        assert_eq!(offset_of!(DispatchState, constants), 24);
        assert_eq!(size_of::<DispatchState>(), 48);
        assert_eq!(offset_of!(WorkgroupState, processor_id), 12);
        assert_eq!(offset_of!(WorkgroupState, local_memory), 16);
        assert_eq!(size_of::<WorkgroupState>(), 32);
        assert_eq!(size_of::<DispatchAttrs>(), 64);
        assert_eq!(offset_of!(DispatchAttrs, parameter_count), 22);
        assert_eq!(offset_of!(LibraryV0, exports), 24);
        assert_eq!(offset_of!(ExportTable, names), 40);
        assert_eq!(offset_of!(LibraryV0, constants), 104);
        assert_eq!(size_of::<LibraryV0>(), 128);
        assert_eq!(offset_of!(LibraryHeader, sanitizer), 20);
        assert_eq!(size_of::<SourceLocation>(), 16);
        assert_eq!(offset_of!(SourceLocation, path), 8);
    }
}
