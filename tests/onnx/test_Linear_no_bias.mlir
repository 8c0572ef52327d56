module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[4,10],f32>) -> !torch.vtensor<[4,8],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<8x10xf32>} : () -> !torch.vtensor<[8,10],f32> 
    %none = torch.constant.none
    %1 = torch.operator "onnx.Transpose"(%0) {torch.onnx.perm = [1 : si64, 0 : si64]} : (!torch.vtensor<[8,10],f32>) -> !torch.vtensor<[10,8],f32> 
    %2 = torch.operator "onnx.MatMul"(%arg0, %1) : (!torch.vtensor<[4,10],f32>, !torch.vtensor<[10,8],f32>) -> !torch.vtensor<[4,8],f32> 
    return %2 : !torch.vtensor<[4,8],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000807B4B3D1DFD50BE48492FBD94F6D43D0229663E26DAD9BD320E483E028627BE3DA716BEDEE0713E69A103BE53F633BE3E3A1D3EBE6502BE60AADCBD0CBDA1BDBB6D823EEB33873EF6DD5EBEEEDD8BBE207C9CBEC3D69BBECA49453E7DDC8ABEC6B1713E2A1B573E60B964BC788372BD76EB36BECC63183EB49E303E4491163E74934BBED8D0F53DB41E053E6213583E76C8463EF4CEAF3D0004CFBA6DA49E3EB69922BE50E34E3D738E94BE33B3A1BEE22B57BE63D6963EA0748C3C4EF3C5BDCEB4DBBD80DE88BC50E942BD9B9F87BE3C87D63D366A1ABEC05E4DBCA0AC51BDBA74503E98BD2F3D0D4895BE155D9D3ED6BB9FBEEE6B523EAE51793E706631BE70A268BD34ADE03DB460393E97F78A3EF88920BE02AD7D3E80FE2D3DF8A723BE48F83A3EB159A13E005C5CBE54D025BEDE79C8BD4F622EBE6A7054BE98ED183E"
    }
  }
#-}

