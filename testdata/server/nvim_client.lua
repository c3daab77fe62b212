-- Neovim's built-in LSP client against `hip-unroll server` (tests/server_nvim.rs): opens
-- FILE, attaches the server (vim.lsp.start_client + vim.lsp.buf_attach_client, which Neovim
-- 0.7 has; vim.lsp.start is 0.8+), waits for its diagnostics, deletes the line holding the
-- shuffle (an incremental didChange), waits for the new ones, asks for a hover on the first
-- loop, and writes what Neovim received to OUT as JSON.
local bin, file, out = os.getenv("HIP_UNROLL_BIN"), os.getenv("FILE"), os.getenv("OUT")
vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local published = 0
local id = vim.lsp.start_client({
  name = "hip-unroll",
  cmd = { bin, "server" },
  root_dir = vim.fn.fnamemodify(file, ":p:h"),
  init_options = { debounceMs = 50 },
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
      published = published + 1
    end,
  },
})
vim.lsp.buf_attach_client(buf, id)

local function snapshot()
  local rows = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then
      code = d.user_data.lsp.code
    end
    table.insert(rows, {
      lnum = d.lnum, col = d.col, severity = d.severity,
      code = code, source = d.source, message = d.message,
    })
  end
  table.sort(rows, function(a, b)
    if a.lnum ~= b.lnum then return a.lnum < b.lnum end
    return a.col < b.col
  end)
  return rows
end

local result = { version = vim.version() }
result.first_ok = vim.wait(60000, function() return published >= 1 end, 20)
result.first = snapshot()

-- Delete the shuffle's line: Neovim sends an incremental change.
for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
  if line:find("__shfl_down", 1, true) then
    vim.api.nvim_buf_set_lines(buf, i - 1, i, false, {})
    break
  end
end
result.second_ok = vim.wait(60000, function() return published >= 2 end, 20)
result.second = snapshot()

local client = vim.lsp.get_client_by_id(id)
local hover = client.request_sync("textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = 7, character = 3 },
}, 60000, buf)
result.hover = hover and hover.result and hover.result.contents and hover.result.contents.value or vim.NIL

local f = assert(io.open(out, "w"))
f:write(vim.fn.json_encode(result))
f:close()
client.stop()
vim.wait(5000, function() return client.is_stopped() end, 20)
vim.cmd("qa!")
