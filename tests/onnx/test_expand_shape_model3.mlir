module {
  func.func @Expand(%arg0: !torch.vtensor<[1,3,1],f32>, %arg1: !torch.vtensor<[3],si64>) -> !torch.vtensor<[3,3,3],f32> attributes {torch.onnx_meta.ir_version = 4 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "backend-test", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Expand"(%arg0, %arg1) : (!torch.vtensor<[1,3,1],f32>, !torch.vtensor<[3],si64>) -> !torch.vtensor<[3,3,3],f32> 
    return %0 : !torch.vtensor<[3,3,3],f32>
  }
}

