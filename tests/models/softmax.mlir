func.func @softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %init = tensor.empty() : tensor<2x4xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<2x4xf32>) outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
