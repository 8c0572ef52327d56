util.global private mutable @counter = dense<0.0> : tensor<3xf32>
func.func @accumulate(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = util.global.load @counter : tensor<3xf32>
  %s = arith.addf %c, %x : tensor<3xf32>
  util.global.store %s, @counter : tensor<3xf32>
  return %s : tensor<3xf32>
}
