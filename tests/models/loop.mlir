func.func @loop(%x: tensor<4xf32>, %n: i32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nn = arith.index_cast %n : i32 to index
  %r = scf.for %i = %c0 to %nn step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %m = arith.mulf %acc, %acc : tensor<4xf32>
    %s = arith.addf %m, %x : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
