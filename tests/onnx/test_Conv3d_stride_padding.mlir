module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,5,5,5],f32>) -> !torch.vtensor<[2,4,3,3,3],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x3x2x2x2xf32>} : () -> !torch.vtensor<[4,3,2,2,2],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64, 1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [2 : si64, 2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.strides = [2 : si64, 2 : si64, 2 : si64]} : (!torch.vtensor<[2,3,5,5,5],f32>, !torch.vtensor<[4,3,2,2,2],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,3,3,3],f32> 
    return %2 : !torch.vtensor<[2,4,3,3,3],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000204806BC601857BD088F3B3D0E8B023E583FE8BDE49E63BDC225463EF4F92F3DFE8806BE1C47BC3D8646493E083669BDA9CAB6BD22CF9CBD64F7133E165588BDDC61FC3D84C5D7BD82211F3E4AC7023E7CFFBA3D066B04BEB89E453D30810FBD76614EBE87A1F1BDEFE3F1BDFC74B03D0BB0E4BD7A15293EB43D32BE18B0133EA6BDE2BDBADFD4BD7092AE3C24F9363E98F7783DF8D3073D08FC1E3E80246BBBDA8592BDBEEA493E00A42DBACE820D3EBC607BBDA432FA3D1CE7283D2A77EFBD60BC413E4870CBBC683FAE3DF81D7D3D5047DB3D40E689BB8C31FE3D3E01143E285D483EFE9D2FBE4C8A3A3E6CD9FC3DF342AEBD4862C33CCA4102BE147B08BE409450BE40AF2C3B781DA33CF060483E7EBB0F3ECCAF493E5BE847BE0ECA8EBDD89C1CBE301E2EBD404F843C14DD58BDAA3E1CBE246BB2BDDAE683BD050BAFBD08C7C5BDF151B2BD284C3A3D809EDC3A75D0F4BD6C52B73D708EFEBC2405AE3D74D6033D10DBCABC443F1DBEE21CA1BDDCAE3F3EA4C026BD6833FF3C701ED43D",
      _2: "0x080000005EA50FBE8C0E4FBE6E15213E6E4784BD"
    }
  }
#-}

