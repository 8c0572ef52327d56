// hal.buffer_view.trace through a debug sink (python/tests/test_compat.py):
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/trace.mlir -o python/tests/data/trace.vmfb
func.func @traced(%x: tensor<4xf32>, %n: tensor<2x3xi32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  flow.tensor.trace "inputs" = [%x : tensor<4xf32>, %n : tensor<2x3xi32>]
  flow.tensor.trace "doubled" = [%y : tensor<4xf32>]
  return %y : tensor<4xf32>
}
