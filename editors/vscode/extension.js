// The irvm debugger in VS Code: the `irvm` debug type runs `irvm dap`
// (the Debug Adapter Protocol on stdin/stdout) from the `irvm.path`
// setting, else from PATH.

'use strict';

const os = require('node:os');
const vscode = require('vscode');
const { findIrvm } = require('./find-irvm');
const { nameAt } = require('./hover-name');

/** Starts `irvm dap` for each debug session. */
class IrvmAdapterFactory {
  createDebugAdapterDescriptor(session) {
    const setting = vscode.workspace.getConfiguration('irvm').get('path');
    const folder = session.workspaceFolder || (vscode.workspace.workspaceFolders || [])[0];
    const found = findIrvm(setting, process.env.PATH, process.platform, {
      workspaceFolder: folder ? folder.uri.fsPath : undefined,
      home: os.homedir(),
    });
    if (found.error) {
      // VS Code shows a thrown error's message as the one reason the
      // session did not start.
      throw new Error(
        `irvm debugger: ${found.error}. Install irvm (cargo install --path . in its repository) or set irvm.path.`,
      );
    }
    return new vscode.DebugAdapterExecutable(found.path, ['dap']);
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
