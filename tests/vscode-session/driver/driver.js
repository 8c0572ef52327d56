// Test driver, installed next to the irvm extension in a real VS Code (the
// test in tests/all/vscode.rs, through ../run.js): when IRVM_SESSION_REPORT names a file, it
// opens the workspace's fib.mlir and sets a breakpoint with the editor's
// command, starts the workspace's
// `irvm` launch configuration, records what the adapter sends through a
// DebugAdapterTracker, the active stack item and the top frame at each
// stop, goes on from each, and writes the record as JSON once the session
// has ended (or failed).

'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');

const STOP_WAIT_MS = 60000;

function activate() {
  const report = process.env.IRVM_SESSION_REPORT;
  if (!report) {
    return;
  }
  const record = {
    events: [],
    stops: [],
    frames: [],
    stackItems: [],
    errors: [],
    adapterErrors: [],
  };
  // Written aside and renamed: the runner, waiting for the file to
  // appear, never reads it half written.
  const write = () => {
    fs.writeFileSync(`${report}.part`, JSON.stringify(record, null, 1));
    fs.renameSync(`${report}.part`, report);
  };
  run(record)
    .catch((e) => record.errors.push(String((e && e.stack) || e)))
    .finally(write);
}

/** Resolves with the first value `register` hands its listener that `keep` admits. */
function next(register, keep, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      listener.dispose();
      reject(new Error(`no ${what} within ${STOP_WAIT_MS} ms`));
    }, STOP_WAIT_MS);
    const listener = register((value) => {
      if (keep(value)) {
        clearTimeout(timer);
        listener.dispose();
        resolve(value);
      }
    });
  });
}

async function run(record) {
  const folder = (vscode.workspace.workspaceFolders || [])[0];
  if (!folder) {
    throw new Error('no workspace folder is open');
  }
  const extension = vscode.extensions.getExtension('irvm.irvm-debug');
  record.extensionFound = Boolean(extension);
  const line = Number(process.env.IRVM_SESSION_LINE || '12');
  const source = vscode.Uri.file(path.join(folder.uri.fsPath, 'fib.mlir'));
  // What the adapter sends, as VS Code's debug service receives it.
  // Stops not yet handled, and the handler waiting for one.
  const pending = [];
  let waiting = null;
  const stopped = (body) => {
    if (waiting) {
      const w = waiting;
      waiting = null;
      w(body);
    } else {
      pending.push(body);
    }
  };
  const nextStop = () =>
    pending.length > 0
      ? Promise.resolve(pending.shift())
      : new Promise((resolve) => {
          waiting = resolve;
        });
  vscode.debug.registerDebugAdapterTrackerFactory('irvm', {
    createDebugAdapterTracker() {
      return {
        onDidSendMessage(m) {
          if (m.type === 'event') {
            record.events.push(m.event);
            if (m.event === 'stopped') {
              record.stops.push(m.body);
              stopped(m.body);
            }
          }
        },
        // VS Code reports the adapter's stdout closing ("read error")
        // here too, which is its exit after `disconnect`: kept apart, with
        // the last event before it.
        onError(e) {
          record.adapterErrors.push({
            error: String(e && e.message),
            after: record.events[record.events.length - 1] || null,
          });
        },
      };
    },
  });
  vscode.debug.onDidChangeActiveStackItem((item) => {
    if (item && item.frameId !== undefined) {
      record.stackItems.push({ frameId: item.frameId, threadId: item.threadId });
    }
  });
  // As a user sets it: fib.mlir open in an editor (its language the
  // extension's), the cursor on the line, the editor's toggle command
  // (which sets nothing in a language no debugger declares breakpoints for).
  const document = await vscode.workspace.openTextDocument(source);
  record.languageId = document.languageId;
  const editor = await vscode.window.showTextDocument(document);
  const at = new vscode.Position(line - 1, 0);
  editor.selection = new vscode.Selection(at, at);
  await vscode.commands.executeCommand('editor.debug.action.toggleBreakpoint');
  record.breakpointLines = vscode.debug.breakpoints
    .filter((b) => b instanceof vscode.SourceBreakpoint)
    .map((b) => b.location.range.start.line + 1);
  const started = next(vscode.debug.onDidStartDebugSession, (s) => s.type === 'irvm', 'session start');
  const ended = next(vscode.debug.onDidTerminateDebugSession, (s) => s.type === 'irvm', 'session end');
  const launched = await vscode.debug.startDebugging(folder, 'fib in irvm');
  record.launched = launched;
  if (!launched) {
    throw new Error('startDebugging refused the configuration');
  }
  const session = await started;
  // Each stop: the top frame, then on (the breakpoint stops every pass).
  for (;;) {
    const body = await Promise.race([
      nextStop(),
      ended.then(() => null),
    ]);
    if (body === null) {
      break;
    }
    const trace = await session.customRequest('stackTrace', { threadId: body.threadId, levels: 1 });
    const top = trace.stackFrames[0];
    record.frames.push({ name: top.name, line: top.line, source: top.source && top.source.path });
    await session.customRequest('continue', { threadId: body.threadId });
  }
  await ended;
  record.ended = true;
}

function deactivate() {}

module.exports = { activate, deactivate };
