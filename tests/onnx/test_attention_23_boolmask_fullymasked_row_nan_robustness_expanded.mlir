module {
  func.func @test_attention_23_boolmask_fullymasked_row_nan_robustness_expanded(%arg0: !torch.vtensor<[1,2,2,8],f32>, %arg1: !torch.vtensor<[1,2,2,8],f32>, %arg2: !torch.vtensor<[1,2,2,8],f32>, %arg3: !torch.vtensor<[2,2],i1>) -> !torch.vtensor<[1,2,2,8],f32> attributes {torch.onnx_meta.ir_version = 11 : si64, torch.onnx_meta.opset_version = 23 : si64, torch.onnx_meta.producer_name = "backend-test", torch.onnx_meta.producer_version = ""} {
    %none = torch.constant.none
    %0 = torch.operator "onnx.Shape"(%arg0) {torch.onnx.end = 1 : si64, torch.onnx.start = 0 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %1 = torch.operator "onnx.Shape"(%arg0) {torch.onnx.end = -1 : si64, torch.onnx.start = -2 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %2 = torch.operator "onnx.Shape"(%arg1) {torch.onnx.end = -1 : si64, torch.onnx.start = -2 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %3 = torch.operator "onnx.Identity"(%arg0) : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    %4 = torch.operator "onnx.Identity"(%arg1) : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    %5 = torch.operator "onnx.Identity"(%arg2) : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    %6 = torch.operator "onnx.Shape"(%3) {torch.onnx.end = 2 : si64, torch.onnx.start = 1 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %7 = torch.operator "onnx.Shape"(%4) {torch.onnx.end = 2 : si64, torch.onnx.start = 1 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %8 = torch.operator "onnx.Shape"(%3) {torch.onnx.end = 4 : si64, torch.onnx.start = 3 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %9 = torch.operator "onnx.Cast"(%8) {torch.onnx.to = 1 : si64} : (!torch.vtensor<[1],si64>) -> !torch.vtensor<[1],f32> 
    %10 = torch.operator "onnx.Shape"(%5) {torch.onnx.end = 4 : si64, torch.onnx.start = 3 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %11 = torch.operator "onnx.Sqrt"(%9) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %12 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<1> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64> 
    %13 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<1.000000e+00> : tensor<1xf32>} : () -> !torch.vtensor<[1],f32> 
    %14 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<0> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64> 
    %15 = torch.operator "onnx.Div"(%13, %11) : (!torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %16 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<1.000000e+00> : tensor<f32>} : () -> !torch.vtensor<[],f32> 
    %17 = torch.operator "onnx.Identity"(%15) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %18 = torch.operator "onnx.Sqrt"(%17) : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %19 = torch.operator "onnx.Cast"(%18) {torch.onnx.to = 1 : si64} : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32> 
    %20 = torch.operator "onnx.Identity"(%4) : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    %21 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<0> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64> 
    %22 = torch.operator "onnx.Identity"(%5) : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    %23 = torch.operator "onnx.Shape"(%20) {torch.onnx.end = -1 : si64, torch.onnx.start = -2 : si64} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1],si64> 
    %24 = torch.operator "onnx.Concat"(%1, %23) {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[2],si64> 
    %25 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<0xFF800000> : tensor<1xf32>} : () -> !torch.vtensor<[1],f32> 
    %26 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<0.000000e+00> : tensor<1xf32>} : () -> !torch.vtensor<[1],f32> 
    %27 = torch.operator "onnx.Where"(%arg3, %26, %25) : (!torch.vtensor<[2,2],i1>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[2,2],f32> 
    %28 = torch.operator "onnx.Identity"(%27) : (!torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    %29 = torch.operator "onnx.Identity"(%28) : (!torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    %30 = torch.operator "onnx.Cast"(%29) {torch.onnx.to = 1 : si64} : (!torch.vtensor<[2,2],f32>) -> !torch.vtensor<[2,2],f32> 
    %31 = torch.operator "onnx.Equal"(%6, %7) : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1],i1> 
    %32 = torch.operator "onnx.Not"(%31) : (!torch.vtensor<[1],i1>) -> !torch.vtensor<[1],i1> 
    %33 = torch.operator "onnx.Div"(%6, %7) : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1],si64> 
    %34 = torch.operator "onnx.Cast"(%33) {torch.onnx.to = 7 : si64} : (!torch.vtensor<[1],si64>) -> !torch.vtensor<[1],si64> 
    %35 = torch.operator "onnx.Mod"(%6, %7) : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1],si64> 
    %36 = torch.operator "onnx.Equal"(%35, %14) : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1],i1> 
    %37 = torch.operator "onnx.And"(%32, %36) : (!torch.vtensor<[1],i1>, !torch.vtensor<[1],i1>) -> !torch.vtensor<[1],i1> 
    %38 = torch.operator "onnx.Where"(%37, %34, %12) : (!torch.vtensor<[1],i1>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1],si64> 
    %39 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<2> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64> 
    %40 = torch.operator "onnx.Unsqueeze"(%20, %39) : (!torch.vtensor<[1,2,2,8],f32>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,2,1,2,8],f32> 
    %41 = torch.operator "onnx.Unsqueeze"(%22, %39) : (!torch.vtensor<[1,2,2,8],f32>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,2,1,2,8],f32> 
    %42 = torch.operator "onnx.Concat"(%0, %7, %38, %23, %8) {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[5],si64> 
    %43 = torch.operator "onnx.Expand"(%40, %42) : (!torch.vtensor<[1,2,1,2,8],f32>, !torch.vtensor<[5],si64>) -> !torch.vtensor<[1,2,?,2,8],f32> 
    %44 = torch.operator "onnx.Concat"(%0, %7, %38, %23, %10) {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[5],si64> 
    %45 = torch.operator "onnx.Expand"(%41, %44) : (!torch.vtensor<[1,2,1,2,8],f32>, !torch.vtensor<[5],si64>) -> !torch.vtensor<[1,2,?,2,8],f32> 
    %46 = torch.operator "onnx.Concat"(%0, %6, %23, %8) {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[4],si64> 
    %47 = torch.operator "onnx.Concat"(%0, %6, %23, %10) {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[4],si64> 
    %48 = torch.operator "onnx.Reshape"(%43, %46) : (!torch.vtensor<[1,2,?,2,8],f32>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,2,2,8],f32> 
    %49 = torch.operator "onnx.Reshape"(%45, %47) : (!torch.vtensor<[1,2,?,2,8],f32>, !torch.vtensor<[4],si64>) -> !torch.vtensor<[1,2,2,8],f32> 
    %50 = torch.operator "onnx.Transpose"(%48) {torch.onnx.perm = [0 : si64, 1 : si64, 3 : si64, 2 : si64]} : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,8,2],f32> 
    %51 = torch.operator "onnx.Mul"(%3, %19) : (!torch.vtensor<[1,2,2,8],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    %52 = torch.operator "onnx.Mul"(%50, %19) : (!torch.vtensor<[1,2,8,2],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[1,2,8,2],f32> 
    %53 = torch.operator "onnx.MatMul"(%51, %52) : (!torch.vtensor<[1,2,2,8],f32>, !torch.vtensor<[1,2,8,2],f32>) -> !torch.vtensor<[1,2,2,2],f32> 
    %54 = torch.operator "onnx.Cast"(%53) {torch.onnx.to = 1 : si64} : (!torch.vtensor<[1,2,2,2],f32>) -> !torch.vtensor<[1,2,2,2],f32> 
    %55 = torch.operator "onnx.Add"(%54, %30) : (!torch.vtensor<[1,2,2,2],f32>, !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[1,2,2,2],f32> 
    %56 = torch.operator "onnx.Cast"(%55) {torch.onnx.to = 1 : si64} : (!torch.vtensor<[1,2,2,2],f32>) -> !torch.vtensor<[1,2,2,2],f32> 
    %57 = torch.operator "onnx.Softmax"(%56) : (!torch.vtensor<[1,2,2,2],f32>) -> !torch.vtensor<[1,2,2,2],f32> 
    %58 = torch.operator "onnx.Cast"(%57) {torch.onnx.to = 1 : si64} : (!torch.vtensor<[1,2,2,2],f32>) -> !torch.vtensor<[1,2,2,2],f32> 
    %59 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<-1> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64> 
    %60 = torch.operator "onnx.ReduceMax"(%30, %59) : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[2,1],f32> 
    %61 = torch.operator "onnx.CastLike"(%25, %30) : (!torch.vtensor<[1],f32>, !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[1],f32> 
    %62 = torch.operator "onnx.Equal"(%60, %61) : (!torch.vtensor<[2,1],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[2,1],i1> 
    %63 = torch.operator "onnx.CastLike"(%26, %58) : (!torch.vtensor<[1],f32>, !torch.vtensor<[1,2,2,2],f32>) -> !torch.vtensor<[1],f32> 
    %64 = torch.operator "onnx.Where"(%62, %63, %58) : (!torch.vtensor<[2,1],i1>, !torch.vtensor<[1],f32>, !torch.vtensor<[1,2,2,2],f32>) -> !torch.vtensor<[1,2,2,2],f32> 
    %65 = torch.operator "onnx.MatMul"(%64, %49) : (!torch.vtensor<[1,2,2,2],f32>, !torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    %66 = torch.operator "onnx.Identity"(%65) : (!torch.vtensor<[1,2,2,8],f32>) -> !torch.vtensor<[1,2,2,8],f32> 
    return %66 : !torch.vtensor<[1,2,2,8],f32>
  }
}

