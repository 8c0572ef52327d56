module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,10,4],f32>) -> !torch.vtensor<[2,10,1],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.MaxPool"(%arg0) {torch.onnx.kernel_shape = [4 : si64], torch.onnx.pads = [0 : si64, 0 : si64], torch.onnx.strides = [4 : si64]} : (!torch.vtensor<[2,10,4],f32>) -> !torch.vtensor<[2,10,1],f32> 
    return %0 : !torch.vtensor<[2,10,1],f32>
  }
}

