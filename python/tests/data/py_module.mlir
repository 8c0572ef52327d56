// A program importing functions of a host module written in Python
// (`pyext`, python/tests/test_py_modules.py), compiled by iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   --iree-input-demote-f64-to-f32=false --iree-vm-target-extension-f64
//   --iree-vm-target-truncate-unsupported-floats=false
//   python/tests/data/py_module.mlir -o python/tests/data/py_module.vmfb
// Each import becomes a `vm.import @pyext.NAME` (cconv 0i_i, 0IF_FI, 0rf_r).
func.func private @pyext.add_one(i32) -> i32
func.func private @pyext.mix(i64, f64) -> (f64, i64)
func.func private @pyext.scale(tensor<4xf32>, f32) -> tensor<4xf32>

// add_one(a) squared.
func.func @main(%a: i32) -> i32 {
  %r = call @pyext.add_one(%a) : (i32) -> i32
  %s = arith.muli %r, %r : i32
  return %s : i32
}

// mix(a, b), its results swapped back and each doubled.
func.func @wide(%a: i64, %b: f64) -> (i64, f64) {
  %f, %i = call @pyext.mix(%a, %b) : (i64, f64) -> (f64, i64)
  %i2 = arith.addi %i, %i : i64
  %f2 = arith.addf %f, %f : f64
  return %i2, %f2 : i64, f64
}

// scale(x, 2.0) + x.
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 2.0 : f32
  %y = call @pyext.scale(%x, %c) : (tensor<4xf32>, f32) -> tensor<4xf32>
  %z = arith.addf %y, %x : tensor<4xf32>
  return %z : tensor<4xf32>
}

// add_one applied n times, starting at 0.
func.func @count(%n: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %end = arith.index_cast %n : i32 to index
  %r = scf.for %k = %c0 to %end step %c1 iter_args(%acc = %zero) -> (i32) {
    %next = func.call @pyext.add_one(%acc) : (i32) -> i32
    scf.yield %next : i32
  }
  return %r : i32
}
