// f32 arithmetic, math functions and conversions.
func.func @arith(%a: f32, %b: f32) -> (f32, f32, f32, f32) {
  %add = arith.addf %a, %b : f32
  %sub = arith.subf %a, %b : f32
  %mul = arith.mulf %a, %b : f32
  %div = arith.divf %a, %b : f32
  return %add, %sub, %mul, %div : f32, f32, f32, f32
}
func.func @math(%a: f32) -> (f32, f32, f32, f32, f32) {
  %sqrt = math.sqrt %a : f32
  %exp = math.exp %a : f32
  %floor = math.floor %a : f32
  %ceil = math.ceil %a : f32
  %abs = math.absf %a : f32
  return %sqrt, %exp, %floor, %ceil, %abs : f32, f32, f32, f32, f32
}
func.func @convert(%a: f32, %i: i32) -> (i32, f32) {
  %fi = arith.fptosi %a : f32 to i32
  %if = arith.sitofp %i : i32 to f32
  return %fi, %if : i32, f32
}
func.func @compare(%a: f32, %b: f32) -> (f32, i1) {
  %lt = arith.cmpf olt, %a, %b : f32
  %m = arith.maximumf %a, %b : f32
  return %m, %lt : f32, i1
}
