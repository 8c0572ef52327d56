// Every `check` function holding, for each element type family it takes.
// Compiled by tests/data/check/regenerate (llvm-cpu and vmvx); run by
// tests/all/check.rs with `irvm check`.

func.func @true_of_nonzero() {
  %v = util.unfoldable_constant 7 : i32
  check.expect_true(%v) : i32
  return
}

func.func @false_of_zero() {
  %v = util.unfoldable_constant 0 : i32
  check.expect_false(%v) : i32
  return
}

func.func @all_true_ints() {
  %a = util.unfoldable_constant dense<[1, -1, 127]> : tensor<3xi8>
  check.expect_all_true(%a) : tensor<3xi8>
  %b = util.unfoldable_constant dense<[[2, 3], [-4, 5]]> : tensor<2x2xi16>
  check.expect_all_true(%b) : tensor<2x2xi16>
  %c = util.unfoldable_constant dense<9> : tensor<2x3xi32>
  check.expect_all_true(%c) : tensor<2x3xi32>
  %d = util.unfoldable_constant dense<[4294967296, -1]> : tensor<2xi64>
  check.expect_all_true(%d) : tensor<2xi64>
  return
}

func.func @all_true_floats() {
  // The check dialect takes float tensors as buffer views only.
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[0.5, -2.0, 1.0e-30]> : tensor<3xf32>
  %av = hal.tensor.export %a : tensor<3xf32> -> !hal.buffer_view
  check.expect_all_true<%device>(%av) : !hal.buffer_view
  %b = util.unfoldable_constant dense<[1.0e-300, 3.0]> : tensor<2xf64>
  %bv = hal.tensor.export %b : tensor<2xf64> -> !hal.buffer_view
  check.expect_all_true<%device>(%bv) : !hal.buffer_view
  return
}

func.func @all_true_of_a_view() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %t = util.unfoldable_constant dense<3> : tensor<4xi32>
  %view = hal.tensor.export %t : tensor<4xi32> -> !hal.buffer_view
  check.expect_all_true<%device>(%view) : !hal.buffer_view
  return
}

// The compiler makes no unsigned tensors: views of their bytes typed
// ui8 (0x12000008) and ui32 (0x12000020).
func.func @all_true_unsigned() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[1, -56]> : tensor<2xi8>
  %abuf = hal.tensor.export %a : tensor<2xi8> -> !hal.buffer
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %ui8 = arith.constant 301989896 : i32
  %ui32 = arith.constant 301989920 : i32
  %dense = arith.constant 1 : i32
  %av = hal.buffer_view.create buffer(%abuf : !hal.buffer)[%c0, %c2] shape([%c2]) type(%ui8) encoding(%dense) : !hal.buffer_view
  check.expect_all_true<%device>(%av) : !hal.buffer_view
  %b = util.unfoldable_constant dense<[7, -1]> : tensor<2xi32>
  %bbuf = hal.tensor.export %b : tensor<2xi32> -> !hal.buffer
  %bv = hal.buffer_view.create buffer(%bbuf : !hal.buffer)[%c0, %c8] shape([%c2]) type(%ui32) encoding(%dense) : !hal.buffer_view
  check.expect_all_true<%device>(%bv) : !hal.buffer_view
  return
}

func.func @eq_ints() {
  %a = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi8>
  check.expect_eq_const(%a, dense<[1, 2, 3]> : tensor<3xi8>) : tensor<3xi8>
  %b = util.unfoldable_constant dense<[[1, -2], [3, -4]]> : tensor<2x2xi16>
  check.expect_eq_const(%b, dense<[[1, -2], [3, -4]]> : tensor<2x2xi16>) : tensor<2x2xi16>
  %c = util.unfoldable_constant dense<[10, 20]> : tensor<2xi32>
  %d = util.unfoldable_constant dense<[5, 10]> : tensor<2xi32>
  %e = arith.addi %d, %d : tensor<2xi32>
  check.expect_eq(%c, %e) : tensor<2xi32>
  %f = util.unfoldable_constant dense<[-9223372036854775808]> : tensor<1xi64>
  check.expect_eq_const(%f, dense<[-9223372036854775808]> : tensor<1xi64>) : tensor<1xi64>
  return
}

func.func @eq_floats_and_scalars() {
  %a = util.unfoldable_constant dense<2.5> : tensor<f32>
  check.expect_eq_const(%a, dense<2.5> : tensor<f32>) : tensor<f32>
  %b = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf16>
  check.expect_eq_const(%b, dense<[1.0, 2.0]> : tensor<2xf16>) : tensor<2xf16>
  %c = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xbf16>
  check.expect_eq_const(%c, dense<[1.0, 2.0]> : tensor<2xbf16>) : tensor<2xbf16>
  return
}

func.func @almost_eq_floats() {
  %a = util.unfoldable_constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  check.expect_almost_eq_const(%a, dense<[1.00005, 2.0, 3.0]> : tensor<3xf32>) : tensor<3xf32>
  %b = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = util.unfoldable_constant dense<[1.1, 2.1]> : tensor<2xf32>
  check.expect_almost_eq(%b, %c, atol 0.0, rtol 0.1) : tensor<2xf32>
  %d = util.unfoldable_constant dense<[0.0, 50.0]> : tensor<2xf16>
  check.expect_almost_eq_const(%d, dense<[0.005, 49.5]> : tensor<2xf16>, atol 1.0e-2, rtol 1.0e-2) : tensor<2xf16>
  %e = util.unfoldable_constant dense<[0.0, 50.0]> : tensor<2xbf16>
  check.expect_almost_eq_const(%e, dense<[0.005, 49.5]> : tensor<2xbf16>, atol 1.0e-2, rtol 1.0e-2) : tensor<2xbf16>
  return
}

func.func @almost_eq_f8() {
  %a = util.unfoldable_constant dense<[0.0, 64.0]> : tensor<2xf8E5M2>
  check.expect_almost_eq_const(%a, dense<[0.125, 56.0]> : tensor<2xf8E5M2>, atol 0.2, rtol 0.2) : tensor<2xf8E5M2>
  %b = util.unfoldable_constant dense<[0.0, 64.0]> : tensor<2xf8E4M3FN>
  check.expect_almost_eq_const(%b, dense<[0.125, 56.0]> : tensor<2xf8E4M3FN>, atol 0.2, rtol 0.2) : tensor<2xf8E4M3FN>
  %c = util.unfoldable_constant dense<[0.0, 64.0]> : tensor<2xf8E5M2FNUZ>
  check.expect_almost_eq_const(%c, dense<[0.125, 56.0]> : tensor<2xf8E5M2FNUZ>, atol 0.2, rtol 0.2) : tensor<2xf8E5M2FNUZ>
  %d = util.unfoldable_constant dense<[0.0, 64.0]> : tensor<2xf8E4M3FNUZ>
  check.expect_almost_eq_const(%d, dense<[0.125, 56.0]> : tensor<2xf8E4M3FNUZ>, atol 0.2, rtol 0.2) : tensor<2xf8E4M3FNUZ>
  return
}

func.func @computed_sum_is_near_one() {
  %tenth = util.unfoldable_constant dense<0.1> : tensor<f32>
  %one = util.unfoldable_constant dense<1.0> : tensor<f32>
  %s2 = arith.addf %tenth, %tenth : tensor<f32>
  %s4 = arith.addf %s2, %s2 : tensor<f32>
  %s8 = arith.addf %s4, %s4 : tensor<f32>
  %s10 = arith.addf %s8, %s2 : tensor<f32>
  check.expect_almost_eq(%s10, %one) : tensor<f32>
  return
}

func.func @__internal_is_not_a_test() {
  %v = util.unfoldable_constant 0 : i32
  check.expect_true(%v) : i32
  return
}

// Each test runs in a context of its own (as iree-check-module's SetUp
// makes one per test): both see the global at its initial value.
util.global private mutable @runs = 0 : i32

func.func @fresh_context_first() {
  %n = util.global.load @runs : i32
  %c1 = arith.constant 1 : i32
  %m = arith.addi %n, %c1 : i32
  util.global.store %m, @runs : i32
  check.expect_true(%c1) : i32
  %once = arith.cmpi eq, %m, %c1 : i32
  %once_i32 = arith.extui %once : i1 to i32
  check.expect_true(%once_i32) : i32
  return
}

func.func @fresh_context_second() {
  %n = util.global.load @runs : i32
  %c1 = arith.constant 1 : i32
  %m = arith.addi %n, %c1 : i32
  util.global.store %m, @runs : i32
  %once = arith.cmpi eq, %m, %c1 : i32
  %once_i32 = arith.extui %once : i1 to i32
  check.expect_true(%once_i32) : i32
  return
}
