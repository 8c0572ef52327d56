// `irvm dap` driven by Microsoft's Debug Adapter Protocol test harness
// (@vscode/debugadapter-testsupport's DebugClient, what VS Code's own
// adapters are tested with), with every message in both directions checked
// against the protocol's JSON schema (debugAdapterProtocol.json).
//
// Run by tests/all/dap.rs (`node --test`) with:
//   IRVM_BIN         the irvm binary under test
//   IRVM_DAP_SCHEMA  the schema file (.ci/run fetches it; see README.md)

'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test, beforeEach, afterEach } = require('node:test');
const { DebugClient } = require('@vscode/debugadapter-testsupport');
const Ajv = require('ajv-draft-04');

const IRVM = process.env.IRVM_BIN;
const SCHEMA = process.env.IRVM_DAP_SCHEMA;
if (!IRVM || !SCHEMA) {
  throw new Error('set IRVM_BIN (the irvm binary) and IRVM_DAP_SCHEMA (debugAdapterProtocol.json)');
}
const DATA = path.resolve(__dirname, '..', 'data');
const data = (name) => path.join(DATA, name);

// ---------------------------------------------------------------------------
// Schema checks

const schema = JSON.parse(fs.readFileSync(SCHEMA, 'utf8'));
// The schema's `_enum`s are open lists (suggested values): not keywords.
const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(schema, 'dap');
const validators = new Map();

/** The schema definition a message must satisfy. */
function definitionOf(message) {
  const upper = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  switch (message.type) {
    case 'request': {
      // A request the protocol does not have (sent to see it refused).
      const name = `${upper(message.command)}Request`;
      return schema.definitions[name] ? name : 'Request';
    }
    case 'response':
      return message.success ? `${upper(message.command)}Response` : 'ErrorResponse';
    case 'event':
      return `${upper(message.event)}Event`;
    default:
      return 'ProtocolMessage';
  }
}

/** Why a message breaks the schema, or null. */
function schemaErrors(message) {
  const name = definitionOf(message);
  if (!schema.definitions[name]) {
    return `no definition ${name} in the schema`;
  }
  let validate = validators.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `dap#/definitions/${name}` });
    validators.set(name, validate);
  }
  if (validate(message)) {
    return null;
  }
  return `${name}: ${ajv.errorsText(validate.errors)}`;
}

/** Every message seen, in order, and the schema violations among them. */
class Traffic {
  constructor() {
    this.messages = [];
    this.violations = [];
  }

  record(direction, message) {
    this.messages.push({ direction, message });
    const errors = schemaErrors(message);
    if (errors) {
      this.violations.push(`${direction} ${JSON.stringify(message)}: ${errors}`);
    }
  }
}

/** A DebugClient on `irvm dap` whose traffic is recorded and checked. */
function client(traffic) {
  const dc = new DebugClient(IRVM, 'dap', 'irvm');
  dc.defaultTimeout = 20000;
  const dispatch = dc.dispatch.bind(dc);
  dc.dispatch = (body) => {
    traffic.record('adapter->client', JSON.parse(body));
    dispatch(body);
  };
  const doSend = dc.doSend.bind(dc);
  dc.doSend = (command, args, callback) => {
    const request = { type: 'request', seq: dc.sequence, command };
    if (args && Object.keys(args).length > 0) {
      request.arguments = args;
    }
    traffic.record('client->adapter', request);
    doSend(command, args, callback);
  };
  return dc;
}

let dc;
let traffic;

beforeEach(async () => {
  traffic = new Traffic();
  dc = client(traffic);
  await dc.start();
});

afterEach(async () => {
  await dc.stop();
  assert.deepEqual(traffic.violations, [], 'every message follows the schema');
  assert.ok(traffic.messages.length > 0);
});

/** A failed request's error (the harness rejects with its message). */
async function failure(promise) {
  try {
    await promise;
  } catch (e) {
    return e.message;
  }
  assert.fail('the request succeeded');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------
// Sessions

test('a breakpoint in fib.mlir stops with registers, hover and the result', async () => {
  const launch = {
    modules: [data('fib.vmfb')],
    function: 'fib',
    inputs: ['6'],
    sourceDirs: [DATA],
  };
  // The harness sets the breakpoint, launches, and checks where it stopped.
  await dc.hitBreakpoint(launch, { path: data('fib.mlir'), line: 12 });
  const st = await dc.stackTraceRequest({ threadId: 1 });
  const frame = st.body.stackFrames[0];
  assert.equal(frame.name, 'module.fib');
  assert.equal(frame.source.path, data('fib.mlir'));
  const scopes = await dc.scopesRequest({ frameId: frame.id });
  const i32s = scopes.body.scopes.find((s) => s.name === 'i32 registers');
  const vars = await dc.variablesRequest({ variablesReference: i32s.variablesReference });
  assert.equal(vars.body.variables.find((v) => v.name === '%i0').value, '6');
  const hover = await dc.evaluateRequest({ expression: '%i0', frameId: frame.id, context: 'hover' });
  assert.equal(hover.body.result, '6');
  // A source name under the mouse in fib.mlir.
  const one = await dc.evaluateRequest({ expression: '%one', frameId: frame.id, context: 'hover' });
  assert.equal(one.body.result, '1');
  assert.equal(scopes.body.scopes[0].name, 'Source names');
  await dc.setBreakpointsRequest({ source: { path: data('fib.mlir') }, breakpoints: [] });
  await Promise.all([
    dc.continueRequest({ threadId: 1 }),
    dc.assertOutput('stdout', 'result[0]: i32=8'),
    dc.waitForEvent('exited'),
    dc.waitForEvent('terminated'),
  ]);
});

test('requests while the program runs: breakpoints at once, pause answered first', async () => {
  await Promise.all([
    dc.waitForEvent('initialized'),
    dc.initializeRequest({ adapterID: 'irvm', linesStartAt1: true, columnsStartAt1: true }),
    dc.launchRequest({
      modules: [data('spin.vmfb')],
      function: 'spin',
      inputs: ['1000000000000'],
      sourceDirs: [DATA],
    }),
  ]);
  await dc.configurationDoneRequest();
  await sleep(200);
  const threads = await dc.threadsRequest();
  assert.equal(threads.body.threads.length, 1);
  assert.equal(await failure(dc.stackTraceRequest({ threadId: 1 })), 'notStopped');
  const stopped = dc.waitForEvent('stopped');
  const set = await dc.setBreakpointsRequest({
    source: { path: data('spin.mlir') },
    breakpoints: [{ line: 13 }],
  });
  assert.equal(set.body.breakpoints[0].verified, true);
  assert.equal((await stopped).body.reason, 'breakpoint');
  const top = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
  assert.equal(top.source.path, data('spin.mlir'));
  assert.equal(top.line, 13);
  await dc.setBreakpointsRequest({ source: { path: data('spin.mlir') }, breakpoints: [] });
  await dc.continueRequest({ threadId: 1 });
  await sleep(100);
  const paused = dc.waitForEvent('stopped');
  await dc.pauseRequest({ threadId: 1 });
  assert.equal((await paused).body.reason, 'pause');
  // The pause response came before its stopped event.
  const order = traffic.messages
    .map((m) => m.message)
    .filter((m) => (m.type === 'response' && m.command === 'pause') || m.event === 'stopped')
    .map((m) => m.command || m.body.reason);
  assert.deepEqual(order.slice(-2), ['pause', 'pause']);
  const last = traffic.messages.filter((m) => m.message.command === 'pause' || m.message.event === 'stopped');
  assert.equal(last[last.length - 2].message.type, 'response');
  assert.equal(last[last.length - 1].message.type, 'event');
});

test('stepping, function and instruction breakpoints, disassembly, traps', async () => {
  await Promise.all([
    dc.waitForEvent('initialized'),
    dc.initializeRequest({ adapterID: 'irvm', linesStartAt1: true, columnsStartAt1: true }),
    dc.launchRequest({
      modules: [data('dbg/frames.vmasm')],
      function: 'main',
      inputs: ['3'],
      sourceDirs: [path.join(DATA, 'dbg')],
      stopOnEntry: true,
    }),
  ]);
  const fbs = await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'twice', hitCondition: '2' }] });
  assert.equal(fbs.body.breakpoints[0].verified, true);
  await dc.setExceptionBreakpointsRequest({ filters: ['trap'] });
  const entry = dc.waitForEvent('stopped');
  await dc.configurationDoneRequest();
  assert.equal((await entry).body.reason, 'entry');
  let stop = dc.waitForEvent('stopped');
  await dc.stepInRequest({ threadId: 1 });
  assert.equal((await stop).body.reason, 'step');
  stop = dc.waitForEvent('stopped');
  await dc.stepOutRequest({ threadId: 1 });
  assert.equal((await stop).body.reason, 'step');
  stop = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  assert.equal((await stop).body.reason, 'function breakpoint');
  await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  // The disassembly view's request around the caller's instruction.
  const st = await dc.stackTraceRequest({ threadId: 1 });
  const ip = st.body.stackFrames[1].instructionPointerReference;
  const dis = await dc.disassembleRequest({
    memoryReference: ip,
    instructionOffset: -200,
    instructionCount: 400,
    resolveSymbols: true,
  });
  const insts = dis.body.instructions;
  assert.equal(insts.length, 400);
  assert.equal(insts[200].address, ip);
  const addresses = insts.map((i) => BigInt(i.address));
  for (let k = 1; k < addresses.length; k++) {
    assert.ok(addresses[k - 1] < addresses[k], `addresses increase at ${k}`);
  }
  const store = insts.find((i) => i.instruction.startsWith('vm.buffer.store.i8'));
  const ibs = await dc.customRequest('setInstructionBreakpoints', {
    breakpoints: [{ instructionReference: store.address }],
  });
  assert.equal(ibs.body.breakpoints[0].verified, true);
  stop = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  assert.equal((await stop).body.reason, 'instruction breakpoint');
  await dc.customRequest('setInstructionBreakpoints', { breakpoints: [] });
  // 3 - 3 divides by zero: the trap stops as an exception.
  stop = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  const trap = await stop;
  assert.equal(trap.body.reason, 'exception');
  assert.equal(trap.body.text, 'INVALID_ARGUMENT: integer division by zero');
  await Promise.all([dc.continueRequest({ threadId: 1 }), dc.waitForEvent('terminated')]);
});

test('failures are error responses with a message body', async () => {
  await dc.initializeRequest({ adapterID: 'irvm' });
  assert.equal(await failure(dc.customRequest('frobnicate')), 'unknown request `frobnicate`');
  assert.equal(await failure(dc.stackTraceRequest({ threadId: 1 })), 'no program: send `launch` first');
  assert.match(
    await failure(dc.launchRequest({ modules: [data('fib.vmfb')] })),
    /`function` is required/,
  );
  const errors = traffic.messages.filter((m) => m.message.type === 'response' && !m.message.success);
  assert.equal(errors.length, 3);
  for (const e of errors) {
    assert.equal(e.message.body.error.format, e.message.message);
  }
});

test('a function without debug information shows its disassembly as a source', async () => {
  await Promise.all([
    dc.waitForEvent('initialized'),
    dc.initializeRequest({ adapterID: 'irvm' }),
    dc.launchRequest({
      modules: [data('lib_b.vmfb'), data('app_a.vmfb')],
      function: 'main',
      inputs: ['4'],
      stopOnEntry: true,
    }),
  ]);
  const entry = dc.waitForEvent('stopped');
  await dc.configurationDoneRequest();
  await entry;
  const st = await dc.stackTraceRequest({ threadId: 1 });
  const source = st.body.stackFrames[0].source;
  assert.ok(source.sourceReference > 0);
  const text = await dc.sourceRequest({ source, sourceReference: source.sourceReference });
  assert.match(text.body.content, /vm\.call @lib_b\.add\(%i0, %i0\)/);
});
