module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,4,4,4],f32>) -> !torch.vtensor<[2,3,4,4,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<3xf32>} : () -> !torch.vtensor<[3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<3xf32>} : () -> !torch.vtensor<[3],f32> 
    %2 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_3> : tensor<3xf32>} : () -> !torch.vtensor<[3],f32> 
    %3 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_4> : tensor<3xf32>} : () -> !torch.vtensor<[3],f32> 
    %none = torch.constant.none
    %4 = torch.operator "onnx.BatchNormalization"(%arg0, %0, %1, %2, %3) {torch.onnx.epsilon = 1.000000e-03 : f32, torch.onnx.momentum = 3.000000e-01 : f32} : (!torch.vtensor<[2,3,4,4,4],f32>, !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>) -> !torch.vtensor<[2,3,4,4,4],f32> 
    return %4 : !torch.vtensor<[2,3,4,4,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000002A81E73E30CC233ED776303F",
      _2: "0x08000000000000000000000000000000",
      _3: "0x08000000000000000000000000000000",
      _4: "0x080000000000803F0000803F0000803F"
    }
  }
#-}

