/* A hand-written executable library for tests/all/native.rs, following the
 * executable library ABI (version 0.6) that iree-compile's llvm-cpu output
 * uses. Built by the test with `cc -shared -fPIC -nostdlib`; macros pick
 * the variant:
 *   REQUIRE_IMPORT   declares a required import irvm cannot provide
 *   OPTIONAL_IMPORT  declares an optional one (loads; the entry is null)
 *   SANITIZER=N      claims a sanitizer
 *   VERSION=N        reports another library version
 *   NO_LIBRARY       the query function returns null
 *   CONSTANTS=N      declares N executable-level constants
 *   HOSTILE=N        hands the runtime a pointer outside the library: 1 the
 *                    table (a fixed low address), 2 the library name (the
 *                    runtime's own environment), 3 an export function (the
 *                    header, data)
 *
 * Entry points:
 *   record   writes, for workgroup (x,y,z), a record of 8 u32 into binding
 *            0 at index x + y*cx + z*cx*cy: 1 (ran), x, y, z, the worker's
 *            local memory check (1 when its memory held only what this
 *            workgroup wrote), the first push constant, the first
 *            executable constant (or 0), and processor data word 0's low
 *            32 bits; binding 1 gets the counts and binding lengths.
 *   fail     returns the push constant as its status.
 *   step     a 1-D grid of n workgroups: workgroup i spins a little, then
 *            writes binding1[i] = binding0[(i + 1) % n] * 3 + the push
 *            constant (it reads what another workgroup of the dispatch
 *            that wrote binding 0 wrote: a dependent dispatch run too
 *            early reads stale values).
 */
#include <stdint.h>
#include <stddef.h>

typedef struct {
  uint32_t version;
  const char* name;
  uint32_t features;
  int32_t sanitizer;
} header_t;

typedef struct {
  const uint32_t* constants;
  void* import_thunk;
  const void* const* import_funcs;
  const void** import_contexts;
  uint64_t processor[8];
} environment_t;

typedef struct {
  uint32_t workgroup_size_x, workgroup_size_y;
  uint16_t workgroup_size_z, constant_count;
  uint32_t workgroup_count_x, workgroup_count_y;
  uint16_t workgroup_count_z;
  uint8_t max_concurrency, binding_count;
  const uint32_t* constants;
  void* const* binding_ptrs;
  const size_t* binding_lengths;
} dispatch_state_t;

typedef struct {
  uint32_t workgroup_id_x, workgroup_id_y;
  uint16_t workgroup_id_z, reserved;
  uint32_t processor_id;
  void* local_memory;
  uint32_t local_memory_size;
} workgroup_state_t;

typedef int (*dispatch_fn)(const environment_t*, const dispatch_state_t*,
                           const workgroup_state_t*);

typedef struct {
  uint64_t flags;
  uint16_t local_memory_pages;
  uint8_t constant_count, binding_count;
  uint32_t workgroup_size_x, workgroup_size_y;
  uint16_t workgroup_size_z, parameter_count;
  uint64_t reserved[5];
} attrs_t;

typedef struct {
  const header_t* header;
  struct { uint32_t count; const char* const* symbols; } imports;
  struct {
    uint32_t count;
    const dispatch_fn* ptrs;
    const attrs_t* attrs;
    const void* params;
    const void* occupancy;
    const char* const* names;
    const char* const* tags;
    const char* const* parameter_names;
    const void* source_locations;
    const void* stage_locations;
  } exports;
  struct { uint32_t count; } constants;
  struct { uint32_t count; const void* files; } sources;
} library_t;

#ifndef VERSION
#define VERSION 6
#endif
#ifndef SANITIZER
#define SANITIZER 0
#endif
#ifndef CONSTANTS
#define CONSTANTS 0
#endif

static int record(const environment_t* env, const dispatch_state_t* d,
                  const workgroup_state_t* w) {
  uint32_t cx = d->workgroup_count_x, cy = d->workgroup_count_y;
  uint32_t i = w->workgroup_id_x + w->workgroup_id_y * cx +
               (uint32_t)w->workgroup_id_z * cx * cy;
  volatile uint32_t* local = (volatile uint32_t*)w->local_memory;
  uint32_t stamp = 0x9e3779b9u ^ i;
  uint32_t clean = 0;
  if (local && w->local_memory_size >= 4096) {
    for (int k = 0; k < 1024; ++k) local[k] = stamp + k;
    /* Spin a little so that workgroups on other workers overlap. */
    for (volatile int k = 0; k < 20000; ++k) {}
    clean = 1;
    for (int k = 0; k < 1024; ++k) clean &= local[k] == stamp + k;
  }
  uint32_t* out = (uint32_t*)d->binding_ptrs[0] + (size_t)i * 8;
  out[0] = 1;
  out[1] = w->workgroup_id_x;
  out[2] = w->workgroup_id_y;
  out[3] = w->workgroup_id_z;
  out[4] = clean;
  out[5] = d->constant_count ? d->constants[0] : 0;
  out[6] = CONSTANTS ? env->constants[0] : 0;
  out[7] = (uint32_t)env->processor[0];
  uint32_t* info = (uint32_t*)d->binding_ptrs[1];
  if (i == 0) {
    info[0] = cx;
    info[1] = cy;
    info[2] = d->workgroup_count_z;
    info[3] = (uint32_t)d->binding_lengths[0];
    info[4] = (uint32_t)d->binding_lengths[1];
  }
  return 0;
}

static int fail(const environment_t* env, const dispatch_state_t* d,
                const workgroup_state_t* w) {
  (void)env;
  (void)w;
  return (int)d->constants[0];
}

static int step(const environment_t* env, const dispatch_state_t* d,
                const workgroup_state_t* w) {
  (void)env;
  uint32_t n = d->workgroup_count_x, i = w->workgroup_id_x;
  const uint32_t* in = (const uint32_t*)d->binding_ptrs[0];
  uint32_t* out = (uint32_t*)d->binding_ptrs[1];
  for (volatile int k = 0; k < 5000; ++k) {}
  out[i] = in[(i + 1) % n] * 3u + d->constants[0];
  return 0;
}

#ifndef HOSTILE
#define HOSTILE 0
#endif
static const environment_t* seen_environment;
static header_t header = {VERSION, "irvm_testlib", 0, SANITIZER};
#if HOSTILE == 3
static const dispatch_fn ptrs[] = {(dispatch_fn)(const void*)&header, fail, step};
#else
static const dispatch_fn ptrs[] = {record, fail, step};
#endif
static const attrs_t attrs[] = {
    {0, 1, 1, 2, 1, 1, 1, 0, {0}},
    {0, 0, 1, 0, 1, 1, 1, 0, {0}},
    {0, 0, 1, 2, 1, 1, 1, 0, {0}},
};
static const char* const names[] = {"record", "fail", "step"};
#if defined(REQUIRE_IMPORT)
static const char* const imports[] = {"irvm_test_missing_v1"};
#elif defined(OPTIONAL_IMPORT)
static const char* const imports[] = {"?irvm_test_optional_v1"};
#endif

static const library_t library = {
    &header,
#if defined(REQUIRE_IMPORT) || defined(OPTIONAL_IMPORT)
    {1, imports},
#else
    {0, 0},
#endif
    {3, ptrs, attrs, 0, 0, names, 0, 0, 0, 0},
    {CONSTANTS},
    {0, 0},
};

const library_t** iree_hal_executable_library_query(
    uint32_t max_version, const environment_t* environment) {
  seen_environment = environment;
#if HOSTILE == 1
  return (const library_t**)(uintptr_t)0x10000;
#elif HOSTILE == 2
  header.name = (const char*)seen_environment;
#endif
#ifdef NO_LIBRARY
  return 0;
#else
  return max_version >= 6 ? (const library_t**)&library : 0;
#endif
}
