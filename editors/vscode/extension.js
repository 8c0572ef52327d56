// The irvm debugger in VS Code: the `irvm` debug type runs `irvm dap`
// (the Debug Adapter Protocol on stdin/stdout) from the `irvm.path`
// setting, else from PATH.

'use strict';

const vscode = require('vscode');
const { findIrvm } = require('./find-irvm');

/** Starts `irvm dap` for each debug session. */
class IrvmAdapterFactory {
  createDebugAdapterDescriptor() {
    const setting = vscode.workspace.getConfiguration('irvm').get('path');
    const irvm = findIrvm(setting, process.env.PATH, process.platform);
    if (!irvm) {
      const where = setting ? `irvm.path (${setting}) names no file` : 'no `irvm` on PATH';
      vscode.window.showErrorMessage(
        `irvm debugger: ${where}. Install irvm (cargo install --path . in its repository) or set irvm.path.`,
      );
      return undefined;
    }
    return new vscode.DebugAdapterExecutable(irvm, ['dap']);
  }
}

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('irvm', new IrvmAdapterFactory()),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
