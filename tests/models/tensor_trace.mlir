// flow.tensor.trace of static and dynamic tensors: iree-run-module prints
// nothing for it on stdout (hal.buffer_view.trace goes to its log).
func.func @traced(%x: tensor<2x3xf32>, %y: tensor<?xi32>) -> tensor<2x3xf32> {
  flow.tensor.trace "input x" = [%x : tensor<2x3xf32>]
  %r = arith.addf %x, %x : tensor<2x3xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %y, %c0 : tensor<?xi32>
  flow.tensor.trace "sum and y" = [%r : tensor<2x3xf32>, %y : tensor<?xi32>{%d}]
  return %r : tensor<2x3xf32>
}
