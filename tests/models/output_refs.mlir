// Results that are not buffer views, written with --output=@FILE: a
// !hal.buffer is written as an i8 array of its bytes, a null ref as an
// empty i8 array; a list is refused after the file was created
// (iree-run-module opens the file first).
func.func @hal_buffer(%x: tensor<4xf32>) -> !hal.buffer {
  %y = arith.addf %x, %x : tensor<4xf32>
  %b = hal.tensor.export %y : tensor<4xf32> -> !hal.buffer
  return %b : !hal.buffer
}
func.func @null_list() -> !util.list<?> {
  %n = util.null : !util.list<?>
  return %n : !util.list<?>
}
func.func @list(%i: i32) -> !util.list<?> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = util.list.create %c1 : !util.list<?>
  util.list.resize %l, %c1 : !util.list<?>
  util.list.set %l[%c0], %i : i32 -> !util.list<?>
  return %l : !util.list<?>
}
