// Functions over each element type a NumPy file can carry into
// iree-run-module (tests/all/numpy_io.rs): booleans, unsigned and signed
// integers, floats; and scalar results, written to .npy as 0-d arrays.
func.func @not(%a: tensor<4xi1>) -> tensor<4xi1> {
  %t = arith.constant dense<true> : tensor<4xi1>
  %r = arith.xori %a, %t : tensor<4xi1>
  return %r : tensor<4xi1>
}
func.func @add_i8(%a: tensor<2x2xi8>, %b: tensor<2x2xi8>) -> tensor<2x2xi8> {
  %r = arith.addi %a, %b : tensor<2x2xi8>
  return %r : tensor<2x2xi8>
}
func.func @add_i16(%a: tensor<3xi16>, %b: tensor<3xi16>) -> tensor<3xi16> {
  %r = arith.addi %a, %b : tensor<3xi16>
  return %r : tensor<3xi16>
}
func.func @add_i32(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  %r = arith.addi %a, %b : tensor<3xi32>
  return %r : tensor<3xi32>
}
func.func @add_i64(%a: tensor<3xi64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  %r = arith.addi %a, %b : tensor<3xi64>
  return %r : tensor<3xi64>
}
func.func @add_f64(%a: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %r = arith.addf %a, %b : tensor<3xf64>
  return %r : tensor<3xf64>
}
func.func @pass_f16(%a: tensor<3xf16>, %b: tensor<3xf16>) -> tensor<3xf16> {
  return %b : tensor<3xf16>
}
func.func @scalars(%x: i32) -> (i32, i64, f32, f64) {
  %c = arith.constant 3 : i32
  %a = arith.muli %x, %c : i32
  %b = arith.extsi %a : i32 to i64
  %f = arith.sitofp %x : i32 to f32
  %h = arith.constant 0.5 : f32
  %g = arith.addf %f, %h : f32
  %d = arith.extf %g : f32 to f64
  return %a, %b, %g, %d : i32, i64, f32, f64
}
