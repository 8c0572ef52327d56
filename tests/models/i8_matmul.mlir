func.func @i8_matmul(%a: tensor<2x3xi8>, %b: tensor<3x2xi8>) -> tensor<2x2xi32> {
  %zero = arith.constant 0 : i32
  %init = tensor.empty() : tensor<2x2xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%init : tensor<2x2xi32>) -> tensor<2x2xi32>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xi8>, tensor<3x2xi8>) outs(%fill : tensor<2x2xi32>) -> tensor<2x2xi32>
  return %r : tensor<2x2xi32>
}
