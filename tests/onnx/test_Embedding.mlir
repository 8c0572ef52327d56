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
      _1: "0x0800000090E8AE3E4FAAC7BE15CC11C0F81A973F3442F53F98B5C03EC0F44CBFC956583FBFDED93E60E8063F6A9696BEBD90073E"
    }
  }
#-}

