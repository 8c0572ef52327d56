module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,2,3,4],f32>) -> !torch.vtensor<[1,2,1,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<2> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64> 
    %1 = torch.operator "onnx.ReduceSum"(%arg0, %0) {torch.onnx.keepdims = 1 : si64} : (!torch.vtensor<[1,2,3,4],f32>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,2,1,4],f32> 
    return %1 : !torch.vtensor<[1,2,1,4],f32>
  }
}

