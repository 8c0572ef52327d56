func.func @math(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %a = math.exp %x : tensor<6xf32>
  %b = math.tanh %x : tensor<6xf32>
  %c = math.sqrt %a : tensor<6xf32>
  %d = math.log %a : tensor<6xf32>
  return %a, %b, %c, %d : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}
