// f64 arithmetic and math (compile with --iree-input-demote-f64-to-f32=false).
func.func @arith(%a: f64, %b: f64) -> (f64, f64, f64) {
  %add = arith.addf %a, %b : f64
  %mul = arith.mulf %a, %b : f64
  %div = arith.divf %a, %b : f64
  return %add, %mul, %div : f64, f64, f64
}
func.func @math(%a: f64) -> (f64, f64, f64) {
  %sqrt = math.sqrt %a : f64
  %log = math.log %a : f64
  %sin = math.sin %a : f64
  return %sqrt, %log, %sin : f64, f64, f64
}
func.func @compare(%a: f64, %b: f64) -> (f64, i1) {
  %lt = arith.cmpf olt, %a, %b : f64
  %m = arith.minimumf %a, %b : f64
  return %m, %lt : f64, i1
}
