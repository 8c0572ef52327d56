// A matmul called through the low-level API, and a scalar function whose
// assertion fails on a negative input (python/tests/test_samples.py). Compiled by
// iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/sample_checked_matmul.mlir -o python/tests/data/sample_checked_matmul.vmfb
func.func @matmul(%lhs: tensor<2x3xf32>, %rhs: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %init = tensor.empty() : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%lhs, %rhs : tensor<2x3xf32>, tensor<3x2xf32>) outs(%acc : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
func.func @checked_sqrt(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %ok = arith.cmpf oge, %x, %zero : f32
  cf.assert %ok, "checked_sqrt: the input is negative"
  %r = math.sqrt %x : f32
  return %r : f32
}
