module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<2x2xf32>} : () -> !torch.vtensor<[2,2],f32> 
    %none = torch.constant.none
    %1 = torch.operator "onnx.Add"(%arg0, %0) : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    %2 = torch.operator "onnx.Mul"(%arg0, %1) : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    %3 = torch.operator "onnx.Tanh"(%2) : (!torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    %4 = torch.operator "onnx.Sigmoid"(%3) : (!torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    %5 = torch.operator "onnx.Neg"(%4) : (!torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    return %5 : !torch.vtensor<[2,2],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000000000803F000000400000404000008040"
    }
  }
#-}

