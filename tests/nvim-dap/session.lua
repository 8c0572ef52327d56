-- One irvm debug session through nvim-dap, headless (tests/all/nvim_dap.rs):
-- the README's configuration, a breakpoint on a line of fib.mlir, then
-- `continue` from each stop until the program ends. What the session did
-- goes to the JSON file REPORT; Neovim then quits.
--
-- Environment: IRVM (the irvm binary), IRVM_TEST_DATA (tests/data),
-- REPORT; nvim-dap on the runtimepath.

local irvm = assert(os.getenv('IRVM'), 'IRVM is not set')
local data = assert(os.getenv('IRVM_TEST_DATA'), 'IRVM_TEST_DATA is not set')
local report = assert(os.getenv('REPORT'), 'REPORT is not set')
local line = 12

local record = { stops = {}, frames = {}, errors = {}, output = {} }
local done = false

local function finish()
  done = true
end

local ok, err = pcall(function()
  local dap = require('dap')
  -- As the README has it, with irvm's full path as `command`.
  dap.adapters.irvm = { type = 'executable', command = irvm, args = { 'dap' } }
  dap.configurations.mlir = {
    {
      type = 'irvm',
      request = 'launch',
      name = 'fib(6)',
      modules = { data .. '/fib.vmfb' },
      ['function'] = 'fib',
      inputs = { '6' },
      sourceDirs = { data },
    },
  }
  dap.listeners.after.event_stopped['irvm-test'] = function(session, body)
    table.insert(record.stops, body.reason)
    session:request('stackTrace', { threadId = body.threadId, levels = 1 }, function(e, trace)
      if e then
        table.insert(record.errors, 'stackTrace: ' .. vim.inspect(e))
      else
        local top = trace.stackFrames[1]
        table.insert(record.frames, {
          name = top.name,
          line = top.line,
          source = top.source and top.source.path or vim.NIL,
        })
      end
      session:request('continue', { threadId = body.threadId }, function() end)
    end)
  end
  dap.listeners.after.event_output['irvm-test'] = function(_, body)
    if body.category == 'stdout' then
      table.insert(record.output, body.output)
    end
  end
  dap.listeners.after.event_exited['irvm-test'] = function(_, body)
    record.exitCode = body.exitCode
  end
  dap.listeners.after.event_terminated['irvm-test'] = function()
    record.terminated = true
    finish()
  end
  vim.cmd.edit(vim.fn.fnameescape(data .. '/fib.mlir'))
  record.filetype = vim.bo.filetype
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  dap.set_breakpoint()
  dap.continue()
end)
if not ok then
  table.insert(record.errors, tostring(err))
  finish()
end

if not vim.wait(60000, function()
  return done
end, 50) then
  table.insert(record.errors, 'the session did not end within 60 s')
end
local file = assert(io.open(report, 'w'))
file:write(vim.json.encode(record))
file:close()
vim.cmd('qa!')
