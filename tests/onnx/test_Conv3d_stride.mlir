module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,5,5,5],f32>) -> !torch.vtensor<[2,4,2,2,2],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<4x3x2x2x2xf32>} : () -> !torch.vtensor<[4,3,2,2,2],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64, 1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [2 : si64, 2 : si64, 2 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [2 : si64, 2 : si64, 2 : si64]} : (!torch.vtensor<[2,3,5,5,5],f32>, !torch.vtensor<[4,3,2,2,2],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4,2,2,2],f32> 
    return %2 : !torch.vtensor<[2,4,2,2,2],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000017EA1CBEDCFF1D3DCCCEDC3DF20C073EB2AB203E60F2323CF9FF2FBE57582EBE3059593C896033BE882838BE28FD41BD1ED54F3E000377BC80F205BCE4F8CC3DD879C73D72F896BDFC6065BDFF36F2BD881406BE0B8C1FBE200A963D5030163E610350BEBC6E323E7CFE253D931CB8BD945B08BD4034A13CFC96B3BD9C760F3E4440AE3DC476F23D2ECF1B3E98CFB8BCFC29423E0051B73CD260403E60266F3D2AD74CBE8237083E76C5503EE0D6493D68680BBE00572D3A4440043E68DADC3CD0161C3DA07BC4BB6E610E3EB82291BD503F4F3DC61F1A3E92A7433EFEA23BBE608E973DA42E80BD08141C3D8A291F3E5058D4BC7C4F413E079246BEF033463EE0B7873D248C61BDE432FD3DF49B9FBD9416D23D942A333E4C0E063DDAFB4A3EAC3D23BDB8C5AC3D8312E4BD3C94B93D78978ABC1C64343E0CFE0CBD7AAD81BD50C636BE54E10F3EB84464BD78EC313E5009D0BC56544E3E004B5A3AE83DE83CC852453D403E273BE8D26F3D4056243D2050DFBC148E1F3DBF4AAABDC41F473E",
      _2: "0x08000000124084BDACDF173E1844FA3D2C7A0DBE"
    }
  }
#-}

