module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1],f32>, %arg1: !torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Add"(%arg0, %arg1) : (!torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %1 = torch.operator "onnx.Mul"(%arg0, %0) : (!torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %2 = torch.operator "onnx.Tanh"(%1) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %3 = torch.operator "onnx.Sigmoid"(%2) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %4 = torch.operator "onnx.Neg"(%3) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    return %4 : !torch.vtensor<[1],f32>
  }
}

