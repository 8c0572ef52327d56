// A function with iree.abi (v1) reflection, as TensorFlow-imported
// programs carry it: its second argument is the keyword argument `scale`,
// and its two results are one `slist` inlined into the results list.
// irvm.compat's FunctionInvoker reads the reflection
// (python/tests/test_compat.py, iree_abi_reflection_through_a_context).
// Compiled by iree-compile 3.13:
// iree-compile --iree-hal-target-backends=vmvx abi_reflection.mlir -o abi_reflection.vmfb
func.func @scaled(%x: tensor<2xi32>, %scale: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) attributes {
  iree.reflection = {"iree.abi" = "{\"a\": [[\"ndarray\", \"i32\", 1, 2], [\"named\", \"scale\", [\"ndarray\", \"i32\", 1, 2]]], \"r\": [[\"slist\", [\"ndarray\", \"i32\", 1, 2], [\"ndarray\", \"i32\", 1, 2]]], \"v\": 1}"}
} {
  %product = arith.muli %x, %scale : tensor<2xi32>
  %sum = arith.addi %x, %scale : tensor<2xi32>
  return %product, %sum : tensor<2xi32>, tensor<2xi32>
}
