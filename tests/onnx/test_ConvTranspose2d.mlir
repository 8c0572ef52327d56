module {
  func.func @"torch-jit-export"(%arg0: !torch.vtensor<[1,3,7,6],f32>) -> !torch.vtensor<[1,4,20,12],f32> attributes {torch.onnx_meta.ir_version = 3 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "0.3"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_1> : tensor<3x4x3x3xf32>} : () -> !torch.vtensor<[3,4,3,3],f32> 
    %1 = torch.operator "onnx.Constant"() {torch.onnx.value = dense_resource<_2> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32> 
    %none = torch.constant.none
    %2 = torch.operator "onnx.ConvTranspose"(%arg0, %0, %1) {torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.group = 1 : si64, torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.output_padding = [1 : si64, 1 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.strides = [3 : si64, 2 : si64]} : (!torch.vtensor<[1,3,7,6],f32>, !torch.vtensor<[3,4,3,3],f32>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[1,4,20,12],f32> 
    return %2 : !torch.vtensor<[1,4,20,12],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      _1: "0x0800000080D96ABD3B74263EF8D719BE5E340FBE1D1EB7BD5FE32C3EA1A2383E32649B3D16B131BE1E5D02BE58A4E33CDCC4743D98FD44BD00C62F3A76A1CD3DE879E23CF00182BC5286AB3D3513293E300A75BDD3BBACBDA1FC11BE1C3709BE208CD23B60B5CD3C67C2283EDE36B2BD834E23BE1A1AE03D1E362BBE3E4901BEB0EC563D281DD8BCD0C700BE4B35443EA0A4F03C8892063D0838263D5347183E1AF4993D94F1693D99CA34BE1801B73C8028DD3B1535303E96D0843D8EEFB43D1A63F93D794C92BD92A9B53DE8592C3D53121B3E55AED2BDF2EA05BEE0999D3B701DEC3CB1D32CBE1E30EF3DC04CDA3CE024A83B30C1AE3C08A6243D6830C5BDA0C6AD3C3A4EBA3D8F443C3EFE2C15BE9717353E8090793B2F0838BE4F0B1BBEE9ADF2BD6E38B43D8A653CBEDD950DBEF5C3213E9C931EBDECD97A3D2154B5BDC02AFC3C306B513CF80119BEEAEC9D3D4B2E1F3EA79F32BEDAA821BE8278C73D535111BE40560D3B1E012BBEC0CE3F3B4651BE3D8C0961BDC691B5BD57D2263E50481D3C8A5D84BD8C2B13BE581971BD7CAB46BD11AA31BED29EA63D0853443DDF8A38BE32E8863D085137BE0BD9B4BDD53E99BD",
      _2: "0x08000000ED50203EF7719FBD0037623B15E826BE"
    }
  }
#-}

