module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,2,3,4],f32>) -> !torch.vtensor<[1,4,9,16],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_> : tensor<4xsi64>} : () -> !torch.vtensor<[4],si64> 
    %1 = torch.operator "onnx.Tile"(%arg0, %0) : (!torch.vtensor<[1,2,3,4],f32>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,4,9,16],f32> 
    return %1 : !torch.vtensor<[1,4,9,16],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _: "0x080000000100000000000000020000000000000003000000000000000400000000000000"
    }
  }
#-}

