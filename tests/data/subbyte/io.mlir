// Functions taking and returning sub-byte tensors (tests/all/subbyte.rs):
// their inputs and results cross the ABI as buffer views over packed bytes
// (4 x i4 in 2 bytes, element 0 in the low bits of byte 0).
func.func @same_i4(%a: tensor<4xi4>) -> tensor<4xi4> {
  %b = util.optimization_barrier %a : tensor<4xi4>
  return %b : tensor<4xi4>
}

func.func @add_i4(%a: tensor<2x2xi4>, %b: tensor<2x2xi4>) -> tensor<2x2xi4> {
  %c = arith.addi %a, %b : tensor<2x2xi4>
  return %c : tensor<2x2xi4>
}

func.func @widen_i4(%a: tensor<4xi4>) -> tensor<4xi8> {
  %b = arith.extsi %a : tensor<4xi4> to tensor<4xi8>
  return %b : tensor<4xi8>
}

func.func @narrow_i4(%a: tensor<4xi8>) -> tensor<4xi4> {
  %b = arith.trunci %a : tensor<4xi8> to tensor<4xi4>
  return %b : tensor<4xi4>
}

func.func @same_ui4(%a: tensor<4xui4>) -> tensor<4xui4> {
  %b = util.optimization_barrier %a : tensor<4xui4>
  return %b : tensor<4xui4>
}

func.func @widen_i2(%a: tensor<4xi2>) -> tensor<4xi8> {
  %b = arith.extsi %a : tensor<4xi2> to tensor<4xi8>
  return %b : tensor<4xi8>
}

func.func @narrow_i2(%a: tensor<4xi8>) -> tensor<4xi2> {
  %b = arith.trunci %a : tensor<4xi8> to tensor<4xi2>
  return %b : tensor<4xi2>
}

func.func @widen_i1(%a: tensor<4xi1>) -> tensor<4xi8> {
  %b = arith.extui %a : tensor<4xi1> to tensor<4xi8>
  return %b : tensor<4xi8>
}
