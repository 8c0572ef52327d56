module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,4],f32>) -> !torch.vtensor<[2,3,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<1xf32>} : () -> !torch.vtensor<[1],f32> 
    %none = torch.constant.none
    %1 = torch.operator "onnx.PRelu"(%arg0, %0) : (!torch.vtensor<[2,3,4],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[2,3,4],f32> 
    return %1 : !torch.vtensor<[2,3,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000000000803E"
    }
  }
#-}

