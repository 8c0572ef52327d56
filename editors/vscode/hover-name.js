// The `%name` under the mouse in a .mlir or .vmasm line. VS Code's own
// word under the mouse leaves out the `%`, so the extension gives the
// debugger the whole name (`%next`, `%i10:11`) to evaluate. Kept apart
// from extension.js (which needs VS Code) so that plain node tests it
// (test/hover-name.test.js).

'use strict';

/** Whether `c` continues a name (`%name`, `%i3`, `%arg0`). */
function isNameChar(c) {
  return /[A-Za-z0-9_$.-]/.test(c);
}

/**
 * The `[start, end)` columns of the `%name` that covers column `at` of
 * `line` (the `%` itself, or any character of the name), or null. A `:`
 * followed by a digit continues it (the register pair `%i10:11`).
 */
function nameAt(line, at) {
  if (at < 0 || at > line.length) {
    return null;
  }
  // Back to the `%` that starts the name covering `at`.
  let start = Math.min(at, line.length - 1);
  while (start >= 0 && line[start] !== '%') {
    const c = line[start];
    const pairColon = c === ':' && /[0-9]/.test(line[start + 1] || '');
    if (!isNameChar(c) && !pairColon) {
      return null;
    }
    start -= 1;
  }
  if (start < 0) {
    return null;
  }
  let end = start + 1;
  while (end < line.length) {
    const c = line[end];
    if (isNameChar(c) || (c === ':' && /[0-9]/.test(line[end + 1] || ''))) {
      end += 1;
    } else {
      break;
    }
  }
  if (end === start + 1 || at >= end) {
    return null;
  }
  return { start, end };
}

module.exports = { nameAt };
