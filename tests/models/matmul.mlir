func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<3x5xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<3x5xf32>) -> tensor<3x5xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%fill : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}
