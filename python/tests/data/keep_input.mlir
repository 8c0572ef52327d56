// A module that keeps its argument's buffer view in a global and hands it
// back later (python/tests/test_zero_copy.py: an input used in place that
// outlives the call). iree-compile 3.13:
// iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=vmvx
//   python/tests/data/keep_input.mlir -o python/tests/data/keep_input.vmfb
util.global private mutable @held : !hal.buffer_view
func.func @keep(%view: !hal.buffer_view) {
  util.global.store %view, @held : !hal.buffer_view
  return
}
func.func @kept() -> !hal.buffer_view {
  %view = util.global.load @held : !hal.buffer_view
  return %view : !hal.buffer_view
}
