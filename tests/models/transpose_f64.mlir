func.func @transpose_f64(%x: tensor<2x3xf64>) -> tensor<3x2xf64> {
  %init = tensor.empty() : tensor<3x2xf64>
  %r = linalg.transpose ins(%x : tensor<2x3xf64>) outs(%init : tensor<3x2xf64>) permutation = [1, 0]
  return %r : tensor<3x2xf64>
}
