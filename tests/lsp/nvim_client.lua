-- A real-client test (issue 6): Neovim 0.7's built-in LSP client starts
-- shardc-lsp, opens tests/lsp/error.shd, waits for its diagnostic, asks for
-- hover and definition, and checks the answers. Exits non-zero on any
-- failure; every wait has a timeout, so it never hangs.
-- Run: SHARDC_LSP=... SHD_FILE=... nvim --headless -u NONE -c 'luafile nvim_client.lua'
local server, file = os.getenv("SHARDC_LSP"), os.getenv("SHD_FILE")
local timeout_ms = 10000

local function fail(msg)
  io.stderr:write("nvim_client: FAIL: " .. msg .. "\n")
  vim.cmd("cquit 1")
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    name = "shardc-lsp",
    cmd = { server },
    root_dir = vim.fn.fnamemodify(file, ":p:h"),
  })
  if not client_id then
    fail("start_client returned nil")
  end
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, client_id)

  -- 1. the diagnostic, published on open
  local got = vim.wait(timeout_ms, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  if not got then
    fail("no diagnostic within " .. timeout_ms .. " ms")
  end
  local d = vim.diagnostic.get(buf)[1]
  if d.message ~= 'arg 0 - unknown axis name: "z"' or d.lnum ~= 3 or d.col ~= 57 then
    fail(string.format("unexpected diagnostic %q at %d:%d", d.message, d.lnum, d.col))
  end
  print(string.format("diagnostic %d:%d %s", d.lnum, d.col, d.message))

  local client = vim.lsp.get_client_by_id(client_id)
  local function request(method, line, character)
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = line, character = character },
    }
    local response = client.request_sync(method, params, timeout_ms, buf)
    if not response then
      fail(method .. ": no answer within " .. timeout_ms .. " ms")
    end
    if response.err then
      fail(method .. ": error " .. vim.inspect(response.err))
    end
    return response.result
  end

  -- 2. hover on %a (line 4 "  %a = relu %x"): type and sharding as written
  --    on %x (propagation does not run on a file with errors)
  local hover = request("textDocument/hover", 4, 3)
  local text = hover and hover.contents and hover.contents.value or ""
  if not text:find("%%a", 1) or not text:find("tensor<8x16xf32>", 1, true) then
    fail("unexpected hover: " .. vim.inspect(hover))
  end
  print("hover " .. text:gsub("\n", " | "))

  -- 3. definition of the %x in "relu %x": the parameter on line 3
  local def = request("textDocument/definition", 4, 13)
  local loc = def and def[1]
  if not loc or loc.range.start.line ~= 3 or loc.range.start.character ~= 11 then
    fail("unexpected definition: " .. vim.inspect(def))
  end
  print(string.format("definition %d:%d", loc.range.start.line, loc.range.start.character))

  client.stop()
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
