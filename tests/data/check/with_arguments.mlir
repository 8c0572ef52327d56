// A module whose export takes an argument: not a test module.
func.func @ok() {
  return
}

func.func @takes_one(%a: i32) {
  %one = arith.constant 1 : i32
  check.expect_true(%one) : i32
  return
}
