// Runs one irvm debug session in a real VS Code: code-server (VS Code's
// server build, from npm) with the irvm extension and the test driver
// (driver/) installed, opened by a headless Chromium so that VS Code
// starts its extension host. The driver sets a breakpoint in fib.mlir,
// starts the workspace's `irvm` launch configuration and writes what it
// saw; this prints that record (JSON) on stdout.
//
// Environment: CODE_SERVER (the code-server script), IRVM (the irvm
// binary), CHROMIUM, IRVM_TEST_DATA (tests/data), WORK (an empty
// directory for the workspace, profiles and logs).

'use strict';

const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');

const WAIT_MS = 150000;

function need(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set`);
  }
  return v;
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Whether the server answers HTTP at `url`. */
function answers(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.setTimeout(2000, () => {
      req.destroy();
      resolve(false);
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Copies an extension's files (not its tests or node_modules). */
function copyExtension(from, to) {
  fs.cpSync(from, to, {
    recursive: true,
    filter: (src) => !/[\\/](node_modules|test)$/.test(src) && !src.endsWith('.vsix'),
  });
}

async function main() {
  const codeServer = need('CODE_SERVER');
  const irvm = need('IRVM');
  const chromium = need('CHROMIUM');
  const data = need('IRVM_TEST_DATA');
  const work = need('WORK');

  const workspace = path.join(work, 'workspace');
  const extensions = path.join(work, 'extensions');
  const userData = path.join(work, 'user-data');
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  fs.mkdirSync(extensions, { recursive: true });
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  for (const f of ['fib.mlir', 'fib.vmfb']) {
    fs.copyFileSync(path.join(data, f), path.join(workspace, f));
  }
  // The configuration as the README writes it.
  fs.writeFileSync(
    path.join(workspace, '.vscode', 'launch.json'),
    JSON.stringify(
      {
        version: '0.2.0',
        configurations: [
          {
            type: 'irvm',
            request: 'launch',
            name: 'fib in irvm',
            modules: ['${workspaceFolder}/fib.vmfb'],
            function: 'fib',
            inputs: ['6'],
            sourceDirs: ['${workspaceFolder}'],
          },
        ],
      },
      null,
      1,
    ),
  );
  const settings = JSON.stringify({ 'irvm.path': irvm, 'security.workspace.trust.enabled': false });
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), settings);
  fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'), settings);
  const here = __dirname;
  copyExtension(
    path.join(here, '..', '..', 'editors', 'vscode'),
    path.join(extensions, 'irvm.irvm-debug-0.1.0'),
  );
  copyExtension(path.join(here, 'driver'), path.join(extensions, 'irvm-test.irvm-session-driver-0.0.1'));

  const report = path.join(work, 'report.json');
  const port = await freePort();
  const log = fs.openSync(path.join(work, 'code-server.log'), 'w');
  const server = spawn(
    codeServer,
    [
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--extensions-dir', extensions,
      '--user-data-dir', userData,
      workspace,
    ],
    { env: { ...process.env, IRVM_SESSION_REPORT: report }, stdio: ['ignore', log, log] },
  );
  let browser = null;
  const stop = () => {
    for (const p of [browser, server]) {
      if (p && p.exitCode === null) {
        p.kill('SIGKILL');
      }
    }
  };
  process.on('exit', stop);
  try {
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`;
    const deadline = Date.now() + WAIT_MS;
    while (!(await answers(url))) {
      if (server.exitCode !== null || Date.now() > deadline) {
        throw new Error(`code-server did not start: see ${work}/code-server.log`);
      }
      await sleep(300);
    }
    const browserLog = fs.openSync(path.join(work, 'chromium.log'), 'w');
    browser = spawn(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${path.join(work, 'chromium')}`,
        '--remote-debugging-port=0',
        url,
      ],
      { stdio: ['ignore', browserLog, browserLog] },
    );
    while (!fs.existsSync(report)) {
      if (Date.now() > deadline) {
        throw new Error(`no report from the driver within ${WAIT_MS} ms: see ${work}`);
      }
      await sleep(300);
    }
    // The driver renames it into place once written: it is whole.
    process.stdout.write(fs.readFileSync(report, 'utf8'));
  } finally {
    stop();
  }
}

main().catch((e) => {
  console.error(String((e && e.stack) || e));
  process.exit(1);
});
