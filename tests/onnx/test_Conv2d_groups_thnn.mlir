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
      _1: "0x0800000068451B3D9809563D2936A3BD98BB47BD186779BDCC0C4BBD56D94FBEA73EE5BD18D51C3EDECA87BD8098F4BC1521BBBDA8FE7C3D08233C3D2484F83DB3BEB3BD72152FBEBC9AE6BD68C2553DE43B4D3E0CEB923DC02A20BB1890E6BD52D187BD1B222ABE9CC569BDA8AACF3DE054E9BB3EB4353E08F3D03D4CF3923DDCF1023DC8232BBEC891793D0706DDBDFCDCB83DCB7E27BE88F54D3E70AE5D3D6868C5BD70F0813CFEF191BD1A23233E7CB0B4BDD07270BD187BDD3C98278B3C5086EABC18CED93DE880563D779239BED4D74EBDCC8A17BD8B8815BE6899C2BDE811FB3CC82E3A3E34792F3ED010F33DA810AB3C1EDD89BDB0D99D3D901A5E3C072E1ABE04CD0CBE7C509B3D6AE8D0BD20F2C8BB6483373EA0B4A53C75970ABE10B41ABD",
      _2: "0x080000001817953DEAB40ABEE007A73B02FA3A3E88AC7E3D8DA041BE"
    }
  }
#-}

