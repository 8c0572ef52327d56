// Where the `irvm` binary is: the `irvm.path` setting, else PATH. Kept
// apart from extension.js (which needs VS Code) so that it can be tested
// with plain node (test/find-irvm.test.js).

'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** The irvm binary named by `setting`, else the first `irvm` on PATH. */
function findIrvm(setting, envPath, platform) {
  if (setting) {
    return fs.existsSync(setting) ? setting : null;
  }
  const names = platform === 'win32' ? ['irvm.exe', 'irvm'] : ['irvm'];
  for (const dir of (envPath || '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const name of names) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not here
      }
    }
  }
  return null;
}

module.exports = { findIrvm };
