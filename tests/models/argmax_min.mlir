func.func @stats(%x: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<f32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %inf = arith.constant 0x7F800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %mn0 = linalg.fill ins(%inf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %s = tensor.empty() : tensor<f32>
  %t0 = linalg.fill ins(%zero : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %mx = linalg.reduce ins(%x : tensor<3x5xf32>) outs(%mx0 : tensor<3xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %m = arith.maximumf %a, %b : f32
      linalg.yield %m : f32 }
  %mn = linalg.reduce ins(%x : tensor<3x5xf32>) outs(%mn0 : tensor<3xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %m = arith.minimumf %a, %b : f32
      linalg.yield %m : f32 }
  %t = linalg.reduce ins(%x : tensor<3x5xf32>) outs(%t0 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) { %m = arith.addf %a, %b : f32
      linalg.yield %m : f32 }
  return %mx, %mn, %t : tensor<3xf32>, tensor<3xf32>, tensor<f32>
}
