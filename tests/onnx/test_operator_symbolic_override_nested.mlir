module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1],f32>, %arg1: !torch.vtensor<[1],f32>, %arg2: !torch.vtensor<[1],f32>) -> (!torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Sum"(%arg0, %arg1, %arg2) : (!torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %1 = torch.operator "onnx.Neg"(%arg0) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %2 = torch.operator "onnx.Neg"(%arg1) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    return %0, %1, %2 : !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>
  }
}

