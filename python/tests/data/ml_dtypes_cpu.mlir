// Arithmetic on bfloat16 and float8 (python/tests/test_ml_dtypes.py);
// vmvx cannot lower arith.addf on bf16, so llvm-cpu. Compiled by
// iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu
//   --iree-llvmcpu-target-cpu=generic
//   python/tests/data/ml_dtypes_cpu.mlir -o python/tests/data/ml_dtypes_cpu.vmfb
func.func @addbf(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = arith.addf %a, %b : tensor<4xbf16>
  return %r : tensor<4xbf16>
}
func.func @mulf8(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %r = arith.mulf %a, %b : tensor<4xf8E4M3FN>
  return %r : tensor<4xf8E4M3FN>
}
