// Compiled with `iree-compile --iree-hal-target-device=local
// --iree-hal-local-target-device-backends=vmvx
// --iree-flow-export-benchmark-funcs bench_entry.mlir -o bench_entry.vmfb`
// (IREE 3.13; used by tests/all/cli_bench.rs). The flag replaces the entry
// point with `add_benchmark`, a wrapper that takes no arguments (its
// inputs are globals) and carries `iree.benchmark = "entry"`.
// `--iree-hal-dump-executable-benchmarks-to=DIR` on the same command wrote
// bench_dispatch.mlir, compiled with `iree-compile bench_dispatch.mlir -o
// bench_dispatch.vmfb`: one function per dispatch, taking its repeat
// count, with `iree.benchmark = "dispatch"`.
func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = arith.addf %a, %b : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
