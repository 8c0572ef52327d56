// Compiled with data tiling and microkernels: i8 x i8 -> i32 through
// vmvx.query_tile_sizes.2d, vmvx.pack, vmvx.mmt4d and vmvx.unpack.
func.func @datatiled_i8(%a: tensor<3x5xi8>, %b: tensor<5x6xi8>) -> tensor<3x6xi32> {
  %zero = arith.constant 0 : i32
  %init = tensor.empty() : tensor<3x6xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%init : tensor<3x6xi32>) -> tensor<3x6xi32>
  %r = linalg.matmul ins(%a, %b : tensor<3x5xi8>, tensor<5x6xi8>) outs(%fill : tensor<3x6xi32>) -> tensor<3x6xi32>
  return %r : tensor<3x6xi32>
}
