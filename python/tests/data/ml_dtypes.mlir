// bfloat16 and the float8 types in and out (python/tests/test_ml_dtypes.py:
// ml_dtypes' arrays, as iree.runtime 3.13 takes and gives them). Compiled by
// iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/ml_dtypes.mlir -o python/tests/data/ml_dtypes.vmfb
// One identity per element type ml_dtypes gives numpy.
func.func @idbf(%a: tensor<2xbf16>) -> tensor<2xbf16> { return %a : tensor<2xbf16> }
func.func @idf8(%a: tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN> { return %a : tensor<2xf8E4M3FN> }
func.func @id_e4m3fnuz(%a: tensor<2xf8E4M3FNUZ>) -> tensor<2xf8E4M3FNUZ> { return %a : tensor<2xf8E4M3FNUZ> }
func.func @id_e5m2(%a: tensor<2xf8E5M2>) -> tensor<2xf8E5M2> { return %a : tensor<2xf8E5M2> }
func.func @id_e5m2fnuz(%a: tensor<2xf8E5M2FNUZ>) -> tensor<2xf8E5M2FNUZ> { return %a : tensor<2xf8E5M2FNUZ> }
func.func @id_e8m0fnu(%a: tensor<2xf8E8M0FNU>) -> tensor<2xf8E8M0FNU> { return %a : tensor<2xf8E8M0FNU> }
// f32 rounded to bf16 (a dispatch).
func.func @tobf(%a: tensor<4xf32>) -> tensor<4xbf16> {
  %r = arith.truncf %a : tensor<4xf32> to tensor<4xbf16>
  return %r : tensor<4xbf16>
}
// f8E4M3FN widened to f32 (a dispatch).
func.func @fromf8(%a: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  %r = arith.extf %a : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %r : tensor<4xf32>
}
