module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[2,3,4,5],f32>) -> !torch.vtensor<[2,3,12,15],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<3x3x3x3xf32>} : () -> !torch.vtensor<[3,3,3,3],f32> 
    %none = torch.constant.none
    %1 = torch.operator "onnx.ConvTranspose"(%arg0, %0) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.output_padding = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.strides = [3 : si64, 3 : si64]} : (!torch.vtensor<[2,3,4,5],f32>, !torch.vtensor<[3,3,3,3],f32>) -> !torch.vtensor<[2,3,12,15],f32> 
    return %1 : !torch.vtensor<[2,3,12,15],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x08000000C6C6B43D10E963BD10F2C13C29E1163ED6AB2CBE762CFD3D8CE86CBD0C5D20BDEA8DBB3D78B723BE482BEEBCCD523C3E6ADA8D3D6CBD91BDF0B32BBDD7691B3E86E8943D7796053E32CEFDBD2843633D24E90C3D8868093D19FD363EF22EDA3D13D7073EDE0FAD3D62A6A53D441D09BD0EEE2DBE517826BEA77AF5BD892EFFBDE68AB93DC405743DD8C460BD7A1E16BEE301423E8116143EDE71BB3DCF10433E91D7D1BD1D74E0BD99B4E6BDB0A718BCD9F52DBE07021C3EA039A23B5E47C43DF772D8BD506BA2BC005CCF3C58C157BD69033A3E4B12B4BDB4C1743D84B605BE109BBABC102151BDC60DAA3D37A9093EF0B63F3DA0248FBC50DA49BDFD811A3EB0423ABD71440E3E5A5DAFBDF16A223EA947443E8F16073E4A0EE23DD6B2923DEACBC1BDC086163BD2B6873DC8F94DBDEC4F0D3D52D6E63D3E9736BE605F33BE72D6EBBD"
    }
  }
#-}

