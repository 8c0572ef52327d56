// scf.while loops whose trip counts depend on the data: a scalar loop (Collatz
// steps) and a tensor loop whose condition reads a reduction's result.
func.func @collatz(%n0: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %r:2 = scf.while (%n = %n0, %steps = %c0) : (i32, i32) -> (i32, i32) {
    %cond = arith.cmpi sgt, %n, %c1 : i32
    scf.condition(%cond) %n, %steps : i32, i32
  } do {
  ^bb0(%n: i32, %steps: i32):
    %rem = arith.remsi %n, %c2 : i32
    %even = arith.cmpi eq, %rem, %c0 : i32
    %half = arith.divsi %n, %c2 : i32
    %t = arith.muli %n, %c3 : i32
    %odd = arith.addi %t, %c1 : i32
    %next = arith.select %even, %half, %odd : i32
    %s1 = arith.addi %steps, %c1 : i32
    scf.yield %next, %s1 : i32, i32
  }
  return %r#0, %r#1 : i32, i32
}
func.func @halve_until(%x: tensor<4xf32>, %limit: f32) -> (tensor<4xf32>, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %half = arith.constant dense<0.5> : tensor<4xf32>
  %r:2 = scf.while (%t = %x, %k = %c0) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%t : tensor<4xf32>) outs(%z : tensor<f32>) dimensions = [0]
      (%a: f32, %b: f32) { %s = arith.addf %a, %b : f32
        linalg.yield %s : f32 }
    %sv = tensor.extract %sum[] : tensor<f32>
    %cond = arith.cmpf ogt, %sv, %limit : f32
    scf.condition(%cond) %t, %k : tensor<4xf32>, i32
  } do {
  ^bb0(%t: tensor<4xf32>, %k: i32):
    %h = arith.mulf %t, %half : tensor<4xf32>
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %h, %k1 : tensor<4xf32>, i32
  }
  return %r#0, %r#1 : tensor<4xf32>, i32
}
