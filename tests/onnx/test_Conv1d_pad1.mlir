module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,4,10],f32>) -> !torch.vtensor<[2,5,10],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<5x4x3xf32>} : () -> !torch.vtensor<[5,4,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<5xf32>} : () -> !torch.vtensor<[5],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.Conv"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64], torch.onnx.pads = [1 : si64, 1 : si64], torch.onnx.strides = [1 : si64]} : (!torch.vtensor<[2,4,10],f32>, !torch.vtensor<[5,4,3],f32>, !torch.vtensor<[5],f32>) -> !torch.vtensor<[2,5,10],f32> 
    return %2 : !torch.vtensor<[2,5,10],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000018873B3D68FA8B3E211E6EBEB480F3BD3B641EBE40358F3D80D4A83CE8D55D3D4C6CC13D1C36AE3D26F31D3EA4E328BE2CE3523E1EF309BEB96F08BE3C3950BEB01C893D862FC8BD5827433D80EF143BEA83F3BDBEA21E3E7453B53D907487BE1CC271BDC84B2BBE01CF8DBE9A4584BE8CF88FBE683F2A3DC8BB233ECB382CBEC14A15BED819D3BDD0453FBE70A9D5BC2222313E307AF4BCDCE0E23D983553BEFE96143E00D3673DE077C53C2DF592BE94D0EA3DBCCBA93D951E88BE3817073E2CDA6D3E00DD9C3BAA6D28BEFEF7B7BDD4D279BE915F87BEC0AC533DA0BE5FBD2C01A63D30F709BEBC44863EB0E790BE",
      _2: "0x08000000D461813EFCFAD33DB073213D50E702BD00AD01BB"
    }
  }
#-}

