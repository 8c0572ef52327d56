// Compiled for vmvx and llvm-cpu together (multi_backend.flags adds both
// backends to the one local device): the module holds an executable per
// format and its initializer picks the one the device supports (native
// code first), as iree-run-module's local devices support both.
func.func @predict(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %w = arith.constant dense<0.5> : tensor<8x3xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x3xf32>) -> tensor<4x3xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%fill : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %mm : tensor<4x3xf32>
}
