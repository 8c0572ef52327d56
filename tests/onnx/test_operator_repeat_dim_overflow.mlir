module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,2],f32>) -> !torch.vtensor<[1,2,3,8],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_> : tensor<4xsi64>} : () -> !torch.vtensor<[4],si64> 
    %1 = torch.operator "onnx.Reshape"(%arg0, %0) : (!torch.vtensor<[1,2],f32>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,1,1,2],f32> 
    %2 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<__1> : tensor<4xsi64>} : () -> !torch.vtensor<[4],si64> 
    %3 = torch.operator "onnx.Tile"(%1, %2) : (!torch.vtensor<[1,1,1,2],f32>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,2,3,8],f32> 
    return %3 : !torch.vtensor<[1,2,3,8],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _: "0x080000000100000000000000010000000000000001000000000000000200000000000000",
      __1: "0x080000000100000000000000020000000000000003000000000000000400000000000000"
    }
  }
#-}

