// findIrvm against real files: a temporary PATH with and without an
// executable `irvm`, and the setting naming a file, a folder, something
// not executable or nothing, spelled with ${workspaceFolder}, ~ or
// relative to the workspace folder.

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
  assert.deepEqual(findIrvm('', envPath, 'linux'), { error: 'no irvm on PATH' });
  fs.chmodSync(irvm, 0o755);
  assert.deepEqual(findIrvm('', envPath, 'linux'), { path: irvm });
  assert.deepEqual(findIrvm('', empty, 'linux'), { error: 'no irvm on PATH' });
  // The setting wins when it names an executable file.
  const other = path.join(root, 'my-irvm');
  fs.writeFileSync(other, '');
  fs.chmodSync(other, 0o755);
  assert.deepEqual(findIrvm(other, envPath, 'linux'), { path: other });
  // ${workspaceFolder}, ~ and relative paths.
  const where = { workspaceFolder: root, home: bin };
  assert.deepEqual(findIrvm('${workspaceFolder}/my-irvm', '', 'linux', where), { path: other });
  assert.deepEqual(findIrvm('my-irvm', '', 'linux', where), { path: other });
  assert.deepEqual(findIrvm('~/irvm', '', 'linux', where), { path: irvm });
  assert.match(findIrvm('my-irvm', '', 'linux', {}).error, /relative and no workspace folder/);
  // What is not an executable file is said so.
  assert.match(findIrvm(path.join(root, 'nothing'), envPath, 'linux').error, /does not exist/);
  assert.match(findIrvm(bin, envPath, 'linux').error, /is a directory/);
  fs.chmodSync(other, 0o644);
  assert.match(findIrvm(other, envPath, 'linux').error, /is not executable/);
  fs.rmSync(root, { recursive: true });
});
