// A program handing bfloat16 and float8 tensors to a host module written in
// Python (`pyml`, python/tests/test_ml_dtypes.py) and taking its results.
// Compiled by iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/ml_dtypes_host.mlir -o python/tests/data/ml_dtypes_host.vmfb
func.func private @pyml.bf(tensor<4xbf16>) -> tensor<4xbf16>
func.func private @pyml.f8(tensor<4xf8E5M2>) -> tensor<4xf8E5M2>

// x rounded to bf16, through pyml.bf, widened back to f32.
func.func @via_bf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = arith.truncf %x : tensor<4xf32> to tensor<4xbf16>
  %y = call @pyml.bf(%t) : (tensor<4xbf16>) -> tensor<4xbf16>
  %r = arith.extf %y : tensor<4xbf16> to tensor<4xf32>
  return %r : tensor<4xf32>
}

// x rounded to f8E5M2, through pyml.f8, widened back to f32.
func.func @via_f8(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = arith.truncf %x : tensor<4xf32> to tensor<4xf8E5M2>
  %y = call @pyml.f8(%t) : (tensor<4xf8E5M2>) -> tensor<4xf8E5M2>
  %r = arith.extf %y : tensor<4xf8E5M2> to tensor<4xf32>
  return %r : tensor<4xf32>
}
