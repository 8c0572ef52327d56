// The irvm debugger in VS Code: the `irvm` debug type runs `irvm dap`
// (the Debug Adapter Protocol on stdin/stdout) from the `irvm.path`
// setting, else from PATH.

'use strict';

const vscode = require('vscode');
const { findIrvm } = require('./find-irvm');
const { nameAt } = require('./hover-name');

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

/**
 * The `%name` under the mouse for a hover while debugging: VS Code's word
 * would leave out the `%`.
 */
const hoverNames = {
  provideEvaluatableExpression(document, position) {
    const found = nameAt(document.lineAt(position.line).text, position.character);
    if (!found) {
      return undefined;
    }
    const range = new vscode.Range(position.line, found.start, position.line, found.end);
    return new vscode.EvaluatableExpression(range);
  },
};

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('irvm', new IrvmAdapterFactory()),
    vscode.languages.registerEvaluatableExpressionProvider(['mlir', 'vmasm'], hoverNames),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
