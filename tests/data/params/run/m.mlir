util.global private @w = #stream.parameter.named<"model"::"w"> : tensor<4xf32>
util.global private @b = #stream.parameter.named<"b"> : tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = util.global.load @w : tensor<4xf32>
  %b = util.global.load @b : tensor<4xf32>
  %r = arith.mulf %x, %w : tensor<4xf32>
  %s = arith.addf %r, %b : tensor<4xf32>
  return %s : tensor<4xf32>
}
