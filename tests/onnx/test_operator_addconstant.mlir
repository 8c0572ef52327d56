module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3],f64>) -> !torch.vtensor<[2,3],f64> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_> : tensor<f64>} : () -> !torch.vtensor<[],f64> 
    %1 = torch.operator "onnx.Add"(%arg0, %0) : (!torch.vtensor<[2,3],f64>, !torch.vtensor<[],f64>) -> !torch.vtensor<[2,3],f64> 
    return %1 : !torch.vtensor<[2,3],f64>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _: "0x08000000000000000000F03F"
    }
  }
#-}

