// Compiled with --iree-execution-model=inline-dynamic: the program imports
// hal_inline (buffers and buffer views without a device) and hal_loader
// (executables loaded and dispatched at once) instead of hal. IREE issues
// those dispatches without flushing denormals, unlike the hal module's:
// `scale` of 1e-10 by 1e-30 gives 9.99995E-41 here (0 through hal).
util.global private mutable @total = dense<0.0> : tensor<3xf32>
func.func @scale(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = arith.mulf %x, %y : tensor<?xf32>
  return %r : tensor<?xf32>
}
func.func @accumulate(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %c = util.global.load @total : tensor<3xf32>
  %s = arith.addf %c, %x : tensor<3xf32>
  util.global.store %s, @total : tensor<3xf32>
  %t = arith.addf %s, %x : tensor<3xf32>
  util.global.store %t, @total : tensor<3xf32>
  return %s, %t : tensor<3xf32>, tensor<3xf32>
}
func.func @matmul(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x3xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x4xf32>, tensor<4x3xf32>) outs(%fill : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
