// simple_mul from IREE's Python documentation, compiled for llvm-cpu
// (python/tests/test_samples.py). Compiled by
// iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu
//   --iree-llvmcpu-target-cpu=generic
//   python/tests/data/sample_mul.mlir -o python/tests/data/sample_mul.vmfb
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
