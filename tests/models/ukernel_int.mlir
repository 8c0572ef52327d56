func.func @int_ops(%x: tensor<6xi32>, %y: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
  %a = arith.andi %x, %y : tensor<6xi32>
  %o = arith.ori %x, %y : tensor<6xi32>
  %x2 = arith.xori %a, %o : tensor<6xi32>
  %c31 = arith.constant dense<31> : tensor<6xi32>
  %sh = arith.andi %y, %c31 : tensor<6xi32>
  %l = arith.shli %x, %sh : tensor<6xi32>
  %rs = arith.shrsi %x, %sh : tensor<6xi32>
  %ru = arith.shrui %x, %sh : tensor<6xi32>
  %one = arith.constant dense<1> : tensor<6xi32>
  %nz = arith.ori %y, %one : tensor<6xi32>
  %ds = arith.divsi %x, %nz : tensor<6xi32>
  %du = arith.divui %x, %nz : tensor<6xi32>
  %m = arith.muli %ds, %du : tensor<6xi32>
  %s = arith.subi %m, %x2 : tensor<6xi32>
  %z = math.ctlz %x : tensor<6xi32>
  %t = arith.addi %s, %z : tensor<6xi32>
  return %x2, %l, %rs, %ru, %t, %z : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
}
