func.func @scale_i64(%a: tensor<2x2xi64>) -> (tensor<2x2xi64>, tensor<2x2xi8>) {
  %c = arith.constant dense<3> : tensor<2x2xi64>
  %r = arith.muli %a, %c : tensor<2x2xi64>
  %t = arith.trunci %r : tensor<2x2xi64> to tensor<2x2xi8>
  return %r, %t : tensor<2x2xi64>, tensor<2x2xi8>
}
