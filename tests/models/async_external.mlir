// Compiled with --iree-execution-model=async-external: each export takes a
// wait fence and a signal fence after its inputs (reflection attribute
// iree.abi.model = "coarse-fences"), which iree-run-module supplies (null,
// and a fence it waits on after the call).
util.global private mutable @total = dense<0.0> : tensor<3xf32>
func.func @scale(%x: tensor<?xf32>, %k: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i)->(i)>, affine_map<(i)->(i)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
func.func @accumulate(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = util.global.load @total : tensor<3xf32>
  %s = arith.addf %c, %x : tensor<3xf32>
  util.global.store %s, @total : tensor<3xf32>
  return %s : tensor<3xf32>
}
