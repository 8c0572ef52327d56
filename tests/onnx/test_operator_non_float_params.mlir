module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,2],si64>) -> !torch.vtensor<[2,2],si64> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<2x2xsi64>} : () -> !torch.vtensor<[2,2],si64> 
    %none = torch.constant.none
    %1 = torch.operator "onnx.Add"(%arg0, %0) : (!torch.vtensor<[2,2],si64>, !torch.vtensor<[2,2],si64>) -> !torch.vtensor<[2,2],si64> 
    %2 = torch.operator "onnx.Mul"(%arg0, %1) : (!torch.vtensor<[2,2],si64>, !torch.vtensor<[2,2],si64>) -> !torch.vtensor<[2,2],si64> 
    return %2 : !torch.vtensor<[2,2],si64>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000000100000000000000020000000000000003000000000000000400000000000000"
    }
  }
#-}

