// A failing case of every `check` function and element type family, a
// trap, and passing tests between them (the run goes on). Compiled by
// tests/data/check/regenerate; run by tests/all/check.rs with `irvm check`.

func.func @true_and_false_fail() {
  %zero = util.unfoldable_constant 0 : i32
  check.expect_true(%zero) : i32
  %three = util.unfoldable_constant 3 : i32
  check.expect_false(%three) : i32
  // A check that holds after those that did not: the function went on.
  check.expect_true(%three) : i32
  return
}

func.func @passes_between_failures() {
  %one = util.unfoldable_constant 1 : i32
  check.expect_true(%one) : i32
  return
}

func.func @eq_contents_differ() {
  %a = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi32>
  check.expect_eq_const(%a, dense<[1, 5, 3]> : tensor<3xi32>) : tensor<3xi32>
  return
}

func.func @eq_element_types_differ() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %i = util.unfoldable_constant dense<0> : tensor<2xi32>
  %f = util.unfoldable_constant dense<0.0> : tensor<2xf32>
  %iv = hal.tensor.export %i : tensor<2xi32> -> !hal.buffer_view
  %fv = hal.tensor.export %f : tensor<2xf32> -> !hal.buffer_view
  check.expect_eq<%device>(%iv, %fv) : !hal.buffer_view
  return
}

func.func @eq_shapes_differ() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[1, 2, 3, 4]> : tensor<4xi16>
  %b = util.unfoldable_constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi16>
  %av = hal.tensor.export %a : tensor<4xi16> -> !hal.buffer_view
  %bv = hal.tensor.export %b : tensor<2x2xi16> -> !hal.buffer_view
  check.expect_eq<%device>(%av, %bv) : !hal.buffer_view
  return
}

func.func @eq_f16_differ() {
  %a = util.unfoldable_constant dense<[1.5, 2.0]> : tensor<2xf16>
  check.expect_eq_const(%a, dense<[1.5, 2.5]> : tensor<2xf16>) : tensor<2xf16>
  return
}

func.func @almost_eq_f32_beyond_tolerance() {
  %a = util.unfoldable_constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  check.expect_almost_eq_const(%a, dense<[1.0, 2.0, 2.99]> : tensor<3xf32>) : tensor<3xf32>
  return
}

func.func @almost_eq_f64_beyond_tolerance() {
  %a = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf64>
  check.expect_almost_eq_const(%a, dense<[0.97, 2.0]> : tensor<2xf64>, atol 1.0e-2) : tensor<2xf64>
  return
}

func.func @almost_eq_f16_beyond_tolerance() {
  %a = util.unfoldable_constant dense<[0.0, 100.0]> : tensor<2xf16>
  check.expect_almost_eq_const(%a, dense<[0.011, 99.0]> : tensor<2xf16>, atol 1.0e-2, rtol 1.0e-2) : tensor<2xf16>
  return
}

func.func @almost_eq_bf16_beyond_tolerance() {
  %a = util.unfoldable_constant dense<[0.0, 100.0]> : tensor<2xbf16>
  check.expect_almost_eq_const(%a, dense<[0.009, 98.0]> : tensor<2xbf16>, atol 1.0e-2, rtol 1.0e-2) : tensor<2xbf16>
  return
}

func.func @almost_eq_f8_beyond_tolerance() {
  %a = util.unfoldable_constant dense<[0.0, 100.0]> : tensor<2xf8E5M2>
  check.expect_almost_eq_const(%a, dense<[0.25, 75.0]> : tensor<2xf8E5M2>, atol 0.1, rtol 0.1) : tensor<2xf8E5M2>
  return
}

func.func @almost_eq_shapes_differ() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = util.unfoldable_constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %av = hal.tensor.export %a : tensor<2xf32> -> !hal.buffer_view
  %bv = hal.tensor.export %b : tensor<1x2xf32> -> !hal.buffer_view
  check.expect_almost_eq<%device>(%av, %bv) : !hal.buffer_view
  return
}

func.func @all_true_i8_has_zero() {
  %a = util.unfoldable_constant dense<[1, 65, 0, -1]> : tensor<4xi8>
  check.expect_all_true(%a) : tensor<4xi8>
  return
}

func.func @all_true_f32_has_zero() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[0.5, 0.1, -0.0]> : tensor<3xf32>
  %av = hal.tensor.export %a : tensor<3xf32> -> !hal.buffer_view
  check.expect_all_true<%device>(%av) : !hal.buffer_view
  return
}

func.func @all_true_ui8_has_zero() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[-56, 0]> : tensor<2xi8>
  %abuf = hal.tensor.export %a : tensor<2xi8> -> !hal.buffer
  %c2 = arith.constant 2 : index
  %ui8 = arith.constant 301989896 : i32
  %dense = arith.constant 1 : i32
  %av = hal.buffer_view.create buffer(%abuf : !hal.buffer)[%c0, %c2] shape([%c2]) type(%ui8) encoding(%dense) : !hal.buffer_view
  check.expect_all_true<%device>(%av) : !hal.buffer_view
  return
}

func.func @all_true_of_f16_is_unsupported() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[1.0]> : tensor<1xf16>
  %av = hal.tensor.export %a : tensor<1xf16> -> !hal.buffer_view
  check.expect_all_true<%device>(%av) : !hal.buffer_view
  return
}

func.func @almost_eq_of_ints_is_unsupported() {
  %c0 = arith.constant 0 : index
  %device = hal.devices.get %c0 : !hal.device
  %a = util.unfoldable_constant dense<[1]> : tensor<1xi32>
  %av = hal.tensor.export %a : tensor<1xi32> -> !hal.buffer_view
  check.expect_almost_eq<%device>(%av, %av) : !hal.buffer_view
  return
}

func.func @trap_fails_the_test() {
  %code = util.unfoldable_constant 5 : i32
  util.status.check_ok %code, "the program gave up"
  %zero = util.unfoldable_constant 0 : i32
  // Not reached: the trap ended the function.
  check.expect_true(%zero) : i32
  return
}

func.func @last_test_passes() {
  %a = util.unfoldable_constant dense<[4, 5]> : tensor<2xi32>
  check.expect_eq_const(%a, dense<[4, 5]> : tensor<2xi32>) : tensor<2xi32>
  return
}
