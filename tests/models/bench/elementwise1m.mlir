func.func @chain(%a: tensor<1048576xf32>, %b: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %half = arith.constant dense<0.5> : tensor<1048576xf32>
  %0 = arith.mulf %a, %b : tensor<1048576xf32>
  %1 = arith.addf %0, %a : tensor<1048576xf32>
  %2 = arith.mulf %1, %half : tensor<1048576xf32>
  %3 = arith.subf %2, %b : tensor<1048576xf32>
  %4 = arith.maximumf %3, %a : tensor<1048576xf32>
  return %4 : tensor<1048576xf32>
}
