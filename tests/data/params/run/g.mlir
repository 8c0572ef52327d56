util.global private mutable @acc = #stream.parameter.named<"b"> : tensor<4xf32>
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = util.global.load @acc : tensor<4xf32>
  %s = arith.addf %a, %x : tensor<4xf32>
  util.global.store %s, @acc : tensor<4xf32>
  return %s : tensor<4xf32>
}
