module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,9,4,4],f32>) -> !torch.vtensor<[1,1,12,12],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_> : tensor<6xsi64>} : () -> !torch.vtensor<[6],si64> 
    %1 = torch.operator "onnx.Reshape"(%arg0, %0) : (!torch.vtensor<[1,9,4,4],f32>, !torch.vtensor<[6],si64>) -> !torch.vtensor<[1,1,3,3,4,4],f32> 
    %2 = torch.operator "onnx.Transpose"(%1) {torch.onnx.perm = [0 : si64, 1 : si64, 4 : si64, 2 : si64, 5 : si64, 3 : si64]} : (!torch.vtensor<[1,1,3,3,4,4],f32>) -> !torch.vtensor<[1,1,4,3,4,3],f32> 
    %3 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<__1> : tensor<4xsi64>} : () -> !torch.vtensor<[4],si64> 
    %4 = torch.operator "onnx.Reshape"(%2, %3) : (!torch.vtensor<[1,1,4,3,4,3],f32>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,1,12,12],f32> 
    return %4 : !torch.vtensor<[1,1,12,12],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _: "0x08000000010000000000000001000000000000000300000000000000030000000000000004000000000000000400000000000000",
      __1: "0x08000000010000000000000001000000000000000C000000000000000C00000000000000"
    }
  }
#-}

