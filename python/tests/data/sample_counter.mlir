// IREE's variables_and_state sample: a mutable global, i32 in and out
// (python/tests/test_samples.py). Compiled by
// iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/sample_counter.mlir -o python/tests/data/sample_counter.vmfb
util.global private mutable @counter = 0 : i32
func.func @get_value() -> i32 {
  %0 = util.global.load @counter : i32
  return %0 : i32
}
func.func @set_value(%new_value: i32) {
  util.global.store %new_value, @counter : i32
  return
}
func.func @add_to_value(%x: i32) {
  %0 = util.global.load @counter : i32
  %1 = arith.addi %0, %x : i32
  util.global.store %1, @counter : i32
  return
}
func.func @reset() {
  %c0 = arith.constant 0 : i32
  util.global.store %c0, @counter : i32
  return
}
