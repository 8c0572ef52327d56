module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,6,5],f32>) -> !torch.vtensor<[2,4,4,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x3x3x2xf32>} : () -> !torch.vtensor<[4,3,3,2],f32> 
    %none = torch.constant.none
    %1 = torch.operator "onnx.Conv"(%arg0, %0) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64, 2 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64]} : (!torch.vtensor<[2,3,6,5],f32>, !torch.vtensor<[4,3,3,2],f32>) -> !torch.vtensor<[2,4,4,4],f32> 
    return %1 : !torch.vtensor<[2,4,4,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000088D38B3C0072733A6FF864BE0A17FE3D4DB3183EB792513EF8B7FCBD9135233EA8F7EBBC9D0F093EF4F336BED418333DEE31D33D8CA25E3DD810F03C382164BD3A17CB3DC6B9CEBDDE78C13D74DD2EBD54C651BE6CCE183D96DEE9BD002A3BBA7CC716BE84856BBE6849973CE0FDD73BC03B1B3C2C5873BD782F43BD3CFA2FBE53CD3D3EEB19173EFCEB453D2763343EFAC3E73DCC7061BE023C3CBECD7D463EA1D635BE300F14BC9A20803D6DFD113E4047973BF83E37BEFBC4273E4261BBBD3C0953BED2209C3DC0775FBCC3B820BE24E504BE7566143E98D6E13CE990413EF3895D3E90F41EBCB8FADBBD9024E6BDDA9F873D4607EE3D5AEBFBBD005C3FBC64A9103D50CC21BC4BD820BE19936CBE888CED3C5C6D10BED08FB6BC4C3071BD"
    }
  }
#-}

