// IREE's dynamic_shapes sample: tensors of dynamic dimensions
// (python/tests/test_samples.py). Compiled by
// iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/sample_dynamic_shapes.mlir -o python/tests/data/sample_dynamic_shapes.vmfb
func.func @reduce_sum_1d(%input: tensor<?xi32>) -> tensor<i32> {
  %init = tensor.empty() : tensor<i32>
  %c0 = arith.constant 0 : i32
  %zero = linalg.fill ins(%c0 : i32) outs(%init : tensor<i32>) -> tensor<i32>
  %sum = linalg.generic {
    indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
    iterator_types = ["reduction"]}
    ins(%input : tensor<?xi32>) outs(%zero : tensor<i32>) {
  ^bb0(%in: i32, %acc: i32):
    %s = arith.addi %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  return %sum : tensor<i32>
}
func.func @reduce_sum_2d(%input: tensor<?x3xi32>) -> tensor<3xi32> {
  %init = tensor.empty() : tensor<3xi32>
  %c0 = arith.constant 0 : i32
  %zero = linalg.fill ins(%c0 : i32) outs(%init : tensor<3xi32>) -> tensor<3xi32>
  %sum = linalg.generic {
    indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
    iterator_types = ["reduction", "parallel"]}
    ins(%input : tensor<?x3xi32>) outs(%zero : tensor<3xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %s = arith.addi %in, %acc : i32
    linalg.yield %s : i32
  } -> tensor<3xi32>
  return %sum : tensor<3xi32>
}
func.func @add_one(%input: tensor<?xi32>) -> tensor<?xi32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %input, %c0 : tensor<?xi32>
  %init = tensor.empty(%n) : tensor<?xi32>
  %one = arith.constant 1 : i32
  %r = linalg.generic {
    indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
    iterator_types = ["parallel"]}
    ins(%input : tensor<?xi32>) outs(%init : tensor<?xi32>) {
  ^bb0(%in: i32, %out: i32):
    %s = arith.addi %in, %one : i32
    linalg.yield %s : i32
  } -> tensor<?xi32>
  return %r : tensor<?xi32>
}
