func.func @compare(%a: tensor<5xi32>, %b: tensor<5xi32>) -> tensor<5xi1> {
  %r = arith.cmpi slt, %a, %b : tensor<5xi32>
  return %r : tensor<5xi1>
}
