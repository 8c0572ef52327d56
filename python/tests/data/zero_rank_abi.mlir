// A function with iree.abi (v1) reflection taking and returning 0-d
// tensors: FunctionInvoker packs a Python or numpy scalar, or a 0-d
// array, as a rank-0 buffer view, as iree.runtime does (irvm.compat made
// each one a 1-element 1-d array before, which the program refused:
// "shape rank mismatch"). python/tests/test_compat.py,
// iree_abi_zero_rank_arguments_keep_their_rank.
// Compiled by iree-compile 3.13:
// iree-compile --iree-hal-target-backends=vmvx zero_rank_abi.mlir -o zero_rank_abi.vmfb
func.func @doubled(%x: tensor<i32>, %y: tensor<f32>) -> (tensor<i32>, tensor<f32>) attributes {
  iree.reflection = {"iree.abi" = "{\"a\": [[\"ndarray\", \"i32\", 0], [\"ndarray\", \"f32\", 0]], \"r\": [[\"ndarray\", \"i32\", 0], [\"ndarray\", \"f32\", 0]], \"v\": 1}"}
} {
  %a = arith.addi %x, %x : tensor<i32>
  %b = arith.addf %y, %y : tensor<f32>
  return %a, %b : tensor<i32>, tensor<f32>
}
