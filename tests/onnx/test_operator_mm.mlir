module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3],f32>, %arg1: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[2,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_> : tensor<1xf32>} : () -> !torch.vtensor<[1],f32> 
    %1 = torch.operator "onnx.Gemm"(%arg0, %arg1, %0) {torch.onnx.alpha = 1.000000e+00 : f32, torch.onnx.beta = 0.000000e+00 : f32} : (!torch.vtensor<[2,3],f32>, !torch.vtensor<[3,4],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[2,4],f32> 
    return %1 : !torch.vtensor<[2,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _: "0x0800000000000000"
    }
  }
#-}

