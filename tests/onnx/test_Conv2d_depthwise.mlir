module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,6,6],f32>) -> !torch.vtensor<[2,4,4,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x1x3x3xf32>} : () -> !torch.vtensor<[4,1,3,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 4 : si64, torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64]} : (!torch.vtensor<[2,4,6,6],f32>, !torch.vtensor<[4,1,3,3],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,4,4],f32> 
    return %2 : !torch.vtensor<[2,4,4,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000CE5E02BE938513BE50EE9FBD0E0FBF3D5A0C28BE50F59E3D1B83C0BDE801B9BD2419123D8071E73C2EA1CF3DF8EF0EBE408F473D7E14C33D40796BBB483FB93C1AEBA43DA03BDFBDC0E10BBE732B05BE83D2D5BDE3411BBEBC3203BDDBDA95BDC4BB0ABDE942293E2050A8BC2839F0BC0457583D575826BE530C033ED6BAC13D0E9082BD714F233E90E133BD28E6FE3C",
      _2: "0x0800000081B3043E003F58BB481728BE0D66263E"
    }
  }
#-}

