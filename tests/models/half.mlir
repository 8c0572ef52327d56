func.func @half(%a: tensor<2x3xf16>) -> tensor<3x2xf16> {
  %init = tensor.empty() : tensor<3x2xf16>
  %r = linalg.transpose ins(%a : tensor<2x3xf16>) outs(%init : tensor<3x2xf16>) permutation = [1, 0]
  return %r : tensor<3x2xf16>
}
