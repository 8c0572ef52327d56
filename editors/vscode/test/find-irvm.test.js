// findIrvm against real files: a temporary PATH with and without an
// executable `irvm`, and the setting naming a file or nothing.

'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const { findIrvm } = require('../find-irvm');

test('irvm is found on PATH, the setting first', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'irvm-find-'));
  const empty = path.join(root, 'empty');
  const bin = path.join(root, 'bin');
  fs.mkdirSync(empty);
  fs.mkdirSync(bin);
  const irvm = path.join(bin, 'irvm');
  fs.writeFileSync(irvm, '#!/bin/sh\n');
  // Not executable yet: not found.
  fs.chmodSync(irvm, 0o644);
  const envPath = [empty, bin].join(path.delimiter);
  assert.equal(findIrvm('', envPath, 'linux'), null);
  fs.chmodSync(irvm, 0o755);
  assert.equal(findIrvm('', envPath, 'linux'), irvm);
  assert.equal(findIrvm('', empty, 'linux'), null);
  // The setting wins when it names a file, and is an error otherwise.
  const other = path.join(root, 'my-irvm');
  fs.writeFileSync(other, '');
  assert.equal(findIrvm(other, envPath, 'linux'), other);
  assert.equal(findIrvm(path.join(root, 'nothing'), envPath, 'linux'), null);
  fs.rmSync(root, { recursive: true });
});
