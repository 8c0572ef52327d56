func.func @dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = arith.mulf %x, %x : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
