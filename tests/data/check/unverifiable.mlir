// iree-compile accepts `check.expect_all_true` of a buffer view without
// its device and calls the import (`0rr_v`) with one argument: IREE's
// bytecode verifier refuses the module when it is loaded ("register list
// underflow"), so iree-check-module runs no test. tests/all/check.rs,
// a_module_failing_verification_fails_the_run_before_any_test.
func.func @passes() {
  %one = util.unfoldable_constant 1 : i32
  check.expect_true(%one) : i32
  return
}

func.func @calls_with_too_few_arguments() {
  %a = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  %v = hal.tensor.export %a : tensor<2xi32> -> !hal.buffer_view
  check.expect_all_true(%v) : !hal.buffer_view
  return
}
