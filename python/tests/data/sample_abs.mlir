// IREE's simple_abs sample: a scalar tensor (python/tests/test_samples.py). Compiled by
// iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/sample_abs.mlir -o python/tests/data/sample_abs.vmfb
func.func @abs(%input : tensor<f32>) -> tensor<f32> {
  %result = math.absf %input : tensor<f32>
  return %result : tensor<f32>
}
