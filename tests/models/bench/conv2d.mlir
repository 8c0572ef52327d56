func.func @conv(%x: tensor<1x32x32x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x30x30x16xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x30x30x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<1x30x30x16xf32>) -> tensor<1x30x30x16xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x32x32x8xf32>, tensor<3x3x8x16xf32>) outs(%fill : tensor<1x30x30x16xf32>) -> tensor<1x30x30x16xf32>
  return %r : tensor<1x30x30x16xf32>
}
