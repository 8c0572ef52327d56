module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,6,5],f32>) -> !torch.vtensor<[2,6,4,4],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<6x2x3x2xf32>} : () -> !torch.vtensor<[6,2,3,2],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<6xf32>} : () -> !torch.vtensor<[6],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 2 : si64, torch.onnx.kernel_shape = [3 : si64, 2 : si64], torch.onnx.pads = [0 : si64, 0 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64]} : (!torch.vtensor<[2,4,6,5],f32>, !torch.vtensor<[6,2,3,2],f32>, !torch.vtensor<[6],f32>) -> !torch.vtensor<[2,6,4,4],f32> 
    return %2 : !torch.vtensor<[2,6,4,4],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x080000008485BE3D2C2CF43D38A0FDBCAF88AEBDF82CA23CC05984BB986F32BE5FF50DBE14FFDD3D38466F3D203F723D18CB893CE05B9B3DFC26AEBD6825C3BC7A9A123E080F3CBDA4B3083E88830C3D24C209BEB0271C3E58022EBE986BEE3DC05569BD331FD4BD60001D3CA0A190BBCDA7A5BDD0D812BEFFACBABDB94E42BEAC6B94BD8098A1BCFA128BBD54BEF63D06DA24BE8A02053ED850313E729B8FBDB236253E306E243E44FD88BDC0B1493D70C838BE0B96E0BD7C1EAE3D2C19043ED8B95C3DF03C3A3E02D218BE809E863CF6E62B3E3004F5BCC8BBFE3D8414A03DF39C47BE5EFE8BBDD81F453EFE80E4BD8469973DE8504D3E25E133BE08DABF3DFEAFD2BDB847B63D403F363E5E56473EF80BB73CD4AF3FBDF46552BDA48AE53DDC25A2BD",
      _2: "0x08000000B400013D28B9E8BC34137BBD704E2BBC34E2D83DE0470C3C"
    }
  }
#-}

