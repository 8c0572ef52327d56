func.func @float_ops(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %a = math.absf %x : tensor<2x4xf32>
  %c = math.ceil %x : tensor<2x4xf32>
  %f = math.floor %x : tensor<2x4xf32>
  %e = math.exp %x : tensor<2x4xf32>
  %l = math.log %a : tensor<2x4xf32>
  %r = math.rsqrt %a : tensor<2x4xf32>
  %n = arith.negf %y : tensor<2x4xf32>
  %d = arith.divf %x, %y : tensor<2x4xf32>
  %s = arith.subf %d, %n : tensor<2x4xf32>
  %m = arith.mulf %s, %c : tensor<2x4xf32>
  %p = arith.addf %m, %f : tensor<2x4xf32>
  return %a, %p, %e, %l, %r, %n : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
