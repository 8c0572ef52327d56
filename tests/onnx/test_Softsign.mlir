module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[3,2,5],f32>) -> !torch.vtensor<[3,2,5],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Abs"(%arg0) : (!torch.vtensor<[3,2,5],f32>) -> !torch.vtensor<[3,2,5],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_> : tensor<f32>} : () -> !torch.vtensor<[],f32> 
    %2 = torch.operator "onnx.Add"(%0, %1) : (!torch.vtensor<[3,2,5],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[3,2,5],f32> 
    %3 = torch.operator "onnx.Div"(%arg0, %2) : (!torch.vtensor<[3,2,5],f32>, !torch.vtensor<[3,2,5],f32>) -> !torch.vtensor<[3,2,5],f32> 
    return %3 : !torch.vtensor<[3,2,5],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _: "0x080000000000803F"
    }
  }
#-}

