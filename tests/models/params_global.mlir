// A mutable global initialized from the parameter `model::b`
// (4 x f32): step(x) adds x to it twice, storing each sum, and returns
// the value it started from and the last sum. The archive is not
// written: the program works on a copy.
util.global private mutable @acc = #stream.parameter.named<"model"::"b"> : tensor<4xf32>
func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = util.global.load @acc : tensor<4xf32>
  %s = arith.addf %a, %x : tensor<4xf32>
  util.global.store %s, @acc : tensor<4xf32>
  %b = util.global.load @acc : tensor<4xf32>
  %t = arith.addf %b, %x : tensor<4xf32>
  util.global.store %t, @acc : tensor<4xf32>
  return %a, %t : tensor<4xf32>, tensor<4xf32>
}
