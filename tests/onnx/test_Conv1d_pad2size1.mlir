module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,4,1],f32>) -> !torch.vtensor<[1,4,1],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x4x5xf32>} : () -> !torch.vtensor<[4,4,5],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [5 : si64], torch.onnx.pads = [2 : si64, 2 : si64], torch.onnx.strides = [1 : si64]} : (!torch.vtensor<[1,4,1],f32>, !torch.vtensor<[4,4,5],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[1,4,1],f32> 
    return %2 : !torch.vtensor<[1,4,1],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000000C6F0CBD22345FBE9E53513E20ED7EBCD3BEDFBDCCADEA3D66DB98BDE0755C3EA45A503E20C803BC84B7F7BD66C2543E00B3A7BCA07FB43CC096FC3D143B223E5CBAF63DB81274BDE8D568BD2C305CBE74C8113EB83EACBD460F15BE888F1D3D4093603D70D6C1BC9C7269BDA85889BCF095533E52630D3EBAA386BDC490D3BD702C98BD8044283CD04B29BCD09CC23D140C623E4811B93D01A604BEBEC93F3E88847DBD14EA453E6C95973D747177BDBE80B8BD105FD33DD80DE63D8706F4BD52D560BEB93713BE83D93EBE68682BBD60993C3D7C9407BE52521A3E8C2B51BE30D760BD8FA7D9BDD4D8F43D3CE820BEA498E63D302E8A3D41CB54BE408619BC30E8123C0087B0BCACEC443EF0E1633D434136BE60D85E3D4EED32BE12014ABE20F3A93B0C4511BEECCE1C3EB80319BD647B333EFA0421BEE42B873DECE7103E",
      _2: "0x080000000877213E1EE8373EA188F0BD683EC63D"
    }
  }
#-}

