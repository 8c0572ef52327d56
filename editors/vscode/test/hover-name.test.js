// nameAt: the `%name` under the mouse, as the extension hands it to the
// debugger for a hover.

'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { nameAt } = require('../hover-name');

test('the whole %name under the mouse, with its %', () => {
  const line = '    %next = arith.addi %x, %y : i32';
  const next = { start: 4, end: 9 };
  // On the `%`, inside the name, on its last character.
  assert.deepEqual(nameAt(line, 4), next);
  assert.deepEqual(nameAt(line, 6), next);
  assert.deepEqual(nameAt(line, 8), next);
  assert.equal(line.slice(next.start, next.end), '%next');
  // `%x,`: the comma ends it; `%y : i32`: the ` :` too.
  assert.equal(line.slice(...Object.values(nameAt(line, 24))), '%x');
  assert.equal(line.slice(...Object.values(nameAt(line, 28))), '%y');
  // Not on a name: the blank, the op, the type.
  assert.equal(nameAt(line, 9), null);
  assert.equal(nameAt(line, 14), null);
  assert.equal(nameAt(line, 33), null);
});

test('register spellings of .vmasm, pairs included', () => {
  const line = '  %i10:11 = vm.add.i64 %i2:3, %i4:5 loc("m.mlir":3:5)';
  assert.equal(line.slice(...Object.values(nameAt(line, 5))), '%i10:11');
  assert.equal(line.slice(...Object.values(nameAt(line, 24))), '%i2:3');
  // A `:` before a blank ends a name (`%n: i32` in a signature).
  const sig = 'func.func @fib(%n: i32) -> i32 {';
  assert.equal(sig.slice(...Object.values(nameAt(sig, 16))), '%n');
  assert.equal(nameAt(sig, 17), null);
  assert.equal(nameAt('', 0), null);
  assert.equal(nameAt('%', 0), null);
});
