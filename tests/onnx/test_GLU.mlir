module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[5,6],f32>) -> !torch.vtensor<[5,3],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0:2 = torch.operator "onnx.Split"(%arg0) {torch.onnx.axis = -1 : si64} : (!torch.vtensor<[5,6],f32>) -> (!torch.vtensor<[5,3],f32>, !torch.vtensor<[5,3],f32>) 
    %1 = torch.operator "onnx.Sigmoid"(%0#1) : (!torch.vtensor<[5,3],f32>) -> !torch.vtensor<[5,3],f32> 
    %2 = torch.operator "onnx.Mul"(%0#0, %1) : (!torch.vtensor<[5,3],f32>, !torch.vtensor<[5,3],f32>) -> !torch.vtensor<[5,3],f32> 
    return %2 : !torch.vtensor<[5,3],f32>
  }
}

