module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,1,2,4],f32>) -> !torch.vtensor<[1,1,3,9],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 6 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Pad"(%arg0) {torch.onnx.mode = "reflect", torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 2 : si64, 0 : si64, 0 : si64, 1 : si64, 3 : si64]} : (!torch.vtensor<[1,1,2,4],f32>) -> !torch.vtensor<[1,1,3,9],f32> 
    return %0 : !torch.vtensor<[1,1,3,9],f32>
  }
}

