// Long vmvx microkernel calls, for Ctrl-C and timeout tests
// (python/tests/test_threads_and_interrupts.py). Compiled by iree-compile
// 3.13 with --iree-hal-target-device=local
// --iree-hal-local-target-device-backends=vmvx
// --iree-vmvx-enable-microkernels --iree-opt-data-tiling: `matmul` packs
// its operands (vmvx.pack), multiplies them in one workgroup whose
// vmvx.mmt4d call runs for seconds in a debug build, and unpacks the
// result; `add` is a quick call (vmvx.add.2d) to see the module still works;
// `add_wide` takes two 16 KiB inputs (max_memory_bytes adds them up).
func.func @matmul(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256x256xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%fill : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @add_wide(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = arith.addf %a, %b : tensor<4096xf32>
  return %r : tensor<4096xf32>
}
