module {
  func.func @onnx_mlp(%arg0: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,3],f32> attributes {torch.onnx_meta.ir_version = 14 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<[[-3.750000e-01, -8.750000e-01, 7.500000e-01, 2.500000e-01, -2.500000e-01, -7.500000e-01], [8.750000e-01, 3.750000e-01, -1.250000e-01, -6.250000e-01, 1.000000e+00, 5.000000e-01], [0.000000e+00, -5.000000e-01, -1.000000e+00, 6.250000e-01, 1.250000e-01, -3.750000e-01], [-8.750000e-01, 7.500000e-01, 2.500000e-01, -2.500000e-01, -7.500000e-01, 8.750000e-01]]> : tensor<4x6xf32>} : () -> !torch.vtensor<[4,6],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<[-2.000000e-01, 1.000000e-01, -1.000000e-01, 2.000000e-01, 0.000000e+00, -2.000000e-01]> : tensor<6xf32>} : () -> !torch.vtensor<[6],f32> 
    %2 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<[[-0.666666686, 5.000000e-01, -0.166666672], [-0.833333313, 0.333333343, -0.333333343], [0.833333313, 0.166666672, -5.000000e-01], [0.666666686, 0.000000e+00, -0.666666686], [5.000000e-01, -0.166666672, -0.833333313], [0.333333343, -0.333333343, 0.833333313]]> : tensor<6x3xf32>} : () -> !torch.vtensor<[6,3],f32> 
    %3 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<[2.500000e-01, -5.000000e-01, 1.250000e-01]> : tensor<3xf32>} : () -> !torch.vtensor<[3],f32> 
    %none = torch.constant.none
    %4 = torch.operator "onnx.Gemm"(%arg0, %0, %1) : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[4,6],f32>, !torch.vtensor<[6],f32>) -> !torch.vtensor<[2,6],f32> 
    %5 = torch.operator "onnx.Relu"(%4) : (!torch.vtensor<[2,6],f32>) -> !torch.vtensor<[2,6],f32> 
    %6 = torch.operator "onnx.Gemm"(%5, %2, %3) : (!torch.vtensor<[2,6],f32>, !torch.vtensor<[6,3],f32>, !torch.vtensor<[3],f32>) -> !torch.vtensor<[2,3],f32> 
    %7 = torch.operator "onnx.Softmax"(%6) {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> 
    return %7 : !torch.vtensor<[2,3],f32>
  }
}

