// A function that passes its tensor through: the module names
// !hal.buffer_view but imports nothing from the hal (no dispatch, no
// dependency), which irvm once refused ("no type registered").
func.func @id(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
