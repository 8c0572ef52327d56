// Compiled with data tiling and microkernels: at these small sizes the
// encodings ask vmvx.query_tile_sizes.2d for their tiles.
func.func @datatiled_small_i8(%a: tensor<2x3xi8>, %b: tensor<3x2xi8>) -> tensor<2x2xi32> {
  %zero = arith.constant 0 : i32
  %init = tensor.empty() : tensor<2x2xi32>
  %fill = linalg.fill ins(%zero : i32) outs(%init : tensor<2x2xi32>) -> tensor<2x2xi32>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xi8>, tensor<3x2xi8>) outs(%fill : tensor<2x2xi32>) -> tensor<2x2xi32>
  return %r : tensor<2x2xi32>
}
