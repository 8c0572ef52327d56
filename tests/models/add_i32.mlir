func.func @add_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = arith.addi %a, %b : tensor<4xi32>
  return %r : tensor<4xi32>
}
