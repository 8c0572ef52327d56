// One identity per element type iree.runtime maps to a numpy dtype, with
// dynamic shapes (rank 0 and rank 2), and a buffer view passed through
// (python/tests/test_compat.py: every dtype round trip through a call, as
// iree.runtime 3.13 gives it back). Compiled by iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx --iree-input-demote-f64-to-f32=false
//   python/tests/data/identities.mlir -o python/tests/data/identities.vmfb
func.func @id_i1(%a: tensor<?x?xi1>) -> tensor<?x?xi1> { return %a : tensor<?x?xi1> }
func.func @id_i8(%a: tensor<?x?xi8>) -> tensor<?x?xi8> { return %a : tensor<?x?xi8> }
func.func @id_i16(%a: tensor<?x?xi16>) -> tensor<?x?xi16> { return %a : tensor<?x?xi16> }
func.func @id_i32(%a: tensor<?x?xi32>) -> tensor<?x?xi32> { return %a : tensor<?x?xi32> }
func.func @id_i64(%a: tensor<?x?xi64>) -> tensor<?x?xi64> { return %a : tensor<?x?xi64> }
func.func @id_ui8(%a: tensor<?x?xui8>) -> tensor<?x?xui8> { return %a : tensor<?x?xui8> }
func.func @id_ui16(%a: tensor<?x?xui16>) -> tensor<?x?xui16> { return %a : tensor<?x?xui16> }
func.func @id_ui32(%a: tensor<?x?xui32>) -> tensor<?x?xui32> { return %a : tensor<?x?xui32> }
func.func @id_ui64(%a: tensor<?x?xui64>) -> tensor<?x?xui64> { return %a : tensor<?x?xui64> }
func.func @id_f16(%a: tensor<?x?xf16>) -> tensor<?x?xf16> { return %a : tensor<?x?xf16> }
func.func @id_f32(%a: tensor<?x?xf32>) -> tensor<?x?xf32> { return %a : tensor<?x?xf32> }
func.func @id_f64(%a: tensor<?x?xf64>) -> tensor<?x?xf64> { return %a : tensor<?x?xf64> }
func.func @id_bf16(%a: tensor<?x?xbf16>) -> tensor<?x?xbf16> { return %a : tensor<?x?xbf16> }
func.func @id_c64(%a: tensor<?x?xcomplex<f32>>) -> tensor<?x?xcomplex<f32>> { return %a : tensor<?x?xcomplex<f32>> }
func.func @id_c128(%a: tensor<?x?xcomplex<f64>>) -> tensor<?x?xcomplex<f64>> { return %a : tensor<?x?xcomplex<f64>> }
func.func @id_0d_f32(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }
func.func @id_0d_i64(%a: tensor<i64>) -> tensor<i64> { return %a : tensor<i64> }
func.func @id_view(%a: !hal.buffer_view) -> !hal.buffer_view { return %a : !hal.buffer_view }
