// Compiled with data tiling and microkernels: vmvx.pack, vmvx.mmt4d and
// vmvx.unpack (odd sizes, so packing pads).
func.func @datatiled_matmul(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<5x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<5x7xf32>, tensor<7x3xf32>) outs(%fill : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
