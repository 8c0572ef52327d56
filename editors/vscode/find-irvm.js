// Where the `irvm` binary is: the `irvm.path` setting, else PATH. Kept
// apart from extension.js (which needs VS Code) so that it can be tested
// with plain node (test/find-irvm.test.js).

'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** Whether `file` is an executable file (an error message if not). */
function checkExecutable(file) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    return `${file} does not exist`;
  }
  if (stat.isDirectory()) {
    return `${file} is a directory, not the irvm binary`;
  }
  if (!stat.isFile()) {
    return `${file} is not a file`;
  }
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return `${file} is not executable`;
  }
  return null;
}

/**
 * The setting's path made absolute: `${workspaceFolder}` and a leading
 * `~` replaced, a relative path taken from the workspace folder.
 */
function expandSetting(setting, workspaceFolder, home) {
  let p = setting.replace(/\$\{workspaceFolder\}/g, workspaceFolder || '');
  if (p === '~' || p.startsWith('~/')) {
    p = path.join(home || '', p.slice(1));
  }
  if (!path.isAbsolute(p)) {
    if (!workspaceFolder) {
      return { error: `irvm.path (${setting}) is relative and no workspace folder is open` };
    }
    p = path.join(workspaceFolder, p);
  }
  return { path: p };
}

/**
 * The irvm binary: `{ path }`, or `{ error }` saying why there is none.
 * `setting` is `irvm.path` (empty: look on `envPath`, the PATH);
 * `where` gives `workspaceFolder` and `home` for the setting's `${...}`,
 * `~` and relative paths.
 */
function findIrvm(setting, envPath, platform, where = {}) {
  if (setting) {
    const expanded = expandSetting(setting, where.workspaceFolder, where.home);
    if (expanded.error) {
      return expanded;
    }
    const problem = checkExecutable(expanded.path);
    if (problem) {
      return { error: `irvm.path (${setting}): ${problem}` };
    }
    return { path: expanded.path };
  }
  const names = platform === 'win32' ? ['irvm.exe', 'irvm'] : ['irvm'];
  for (const dir of (envPath || '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (!checkExecutable(candidate)) {
        return { path: candidate };
      }
    }
  }
  return { error: 'no irvm on PATH' };
}

module.exports = { findIrvm };
