module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,4],si64>) -> !torch.vtensor<[1,4,3],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x3xf32>} : () -> !torch.vtensor<[4,3],f32> 
    %none = torch.constant.none
    %1 = torch.operator "onnx.Gather"(%0, %arg0) : (!torch.vtensor<[4,3],f32>, !torch.vtensor<[1,4],si64>) -> !torch.vtensor<[1,4,3],f32> 
    return %1 : !torch.vtensor<[1,4,3],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000224B99BF8ADCE5BF8CAEA93F45378F3F882B3BBFE7AE0BBFAFD4663FC87E0540A745F33EA81B85BEC16708BEC9E35D3C"
    }
  }
#-}

