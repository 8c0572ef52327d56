module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,8,8],f32>) -> !torch.vtensor<[2,2,3,3],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<2x3x3x3xf32>} : () -> !torch.vtensor<[2,3,3,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<2xf32>} : () -> !torch.vtensor<[2],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [2 : si64, 2 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.strides = [2 : si64, 2 : si64]} : (!torch.vtensor<[2,3,8,8],f32>, !torch.vtensor<[2,3,3,3],f32>, !torch.vtensor<[2],f32>) -> !torch.vtensor<[2,2,3,3],f32> 
    return %2 : !torch.vtensor<[2,2,3,3],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000507DE7BC6AA8BDBD0E63803DA83378BDBE4EA83DC45D283D3DA23D3EB860B6BCACA26FBD3DAA3D3E90A53E3D2E0A08BE10A7E9BD66B49A3DFAD2FE3D1D9E1C3E202A96BBDA67BA3D6046503C14CC17BDD402103D31BB0E3E9F9ABDBD88BEE6BCF3BCAFBDF6FC85BDB0AC71BD004CA7BA8338AABDB9068DBD476D1A3E574F243E5C4003BE421ED93D2C1FD9BD84F3D9BD0DA3213E98F9F3BC1A57B83DA511113E00F602BEF6C214BE296BF7BD005295BA2F063E3E7FE9113E5DB6253E1716183E640B39BEE508F0BD7A77ED3DC008563DD118CEBDB42018BD",
      _2: "0x08000000F45FE9BD3C1E12BD"
    }
  }
#-}

