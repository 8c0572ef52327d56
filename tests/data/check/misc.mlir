// A disabled test (gtest's DISABLED_ prefix) beside one that runs.
func.func @DISABLED_not_run() {
  %zero = util.unfoldable_constant 0 : i32
  check.expect_true(%zero) : i32
  return
}

func.func @runs() {
  %one = util.unfoldable_constant 1 : i32
  check.expect_true(%one) : i32
  return
}
