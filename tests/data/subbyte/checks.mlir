// Sub-byte tensors built, computed on and compared inside a module, as
// IREE's e2e sub-byte tests make them (tests/all/subbyte.rs runs them with
// `irvm check`): each view of i4/i2 elements is created over the packed
// bytes iree-compile allocates (4 x i4 in 2 bytes).
func.func @i4_add() {
  %lhs = util.unfoldable_constant dense<[1, 2, 3, 4]> : tensor<4xi4>
  %rhs = util.unfoldable_constant dense<[1, 1, -1, 3]> : tensor<4xi4>
  %sum = arith.addi %lhs, %rhs : tensor<4xi4>
  check.expect_eq_const(%sum, dense<[2, 3, 2, 7]> : tensor<4xi4>) : tensor<4xi4>
  return
}

func.func @i4_rows() {
  %input = util.unfoldable_constant dense<[[1, 2], [3, -4]]> : tensor<2x2xi4>
  %kept = util.optimization_barrier %input : tensor<2x2xi4>
  check.expect_eq_const(%kept, dense<[[1, 2], [3, -4]]> : tensor<2x2xi4>) : tensor<2x2xi4>
  return
}

func.func @i2_widened() {
  %input = util.unfoldable_constant dense<[0, 1, -2, -1]> : tensor<4xi2>
  %kept = util.optimization_barrier %input : tensor<4xi2>
  %wide = arith.extsi %kept : tensor<4xi2> to tensor<4xi8>
  check.expect_eq_const(%wide, dense<[0, 1, -2, -1]> : tensor<4xi8>) : tensor<4xi8>
  return
}

func.func @i4_mismatch() {
  %input = util.unfoldable_constant dense<[1, 2, 3, 4]> : tensor<4xi4>
  %kept = util.optimization_barrier %input : tensor<4xi4>
  check.expect_eq_const(%kept, dense<[1, 2, 3, 5]> : tensor<4xi4>) : tensor<4xi4>
  return
}
