// x * w + b + c: w and b are the parameters `model::w` and `model::b`, c
// the unscoped parameter `c` (4 x f32 each). The archives are in--*.irpa,
// in--*.safetensors, in--*.gguf (inputs.py); the runs name them with
// --parameters lines.
util.global private @w = #stream.parameter.named<"model"::"w"> : tensor<4xf32>
util.global private @b = #stream.parameter.named<"model"::"b"> : tensor<4xf32>
util.global private @c = #stream.parameter.named<"c"> : tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = util.global.load @w : tensor<4xf32>
  %b = util.global.load @b : tensor<4xf32>
  %c = util.global.load @c : tensor<4xf32>
  %xw = arith.mulf %x, %w : tensor<4xf32>
  %xwb = arith.addf %xw, %b : tensor<4xf32>
  %r = arith.addf %xwb, %c : tensor<4xf32>
  return %r : tensor<4xf32>
}
