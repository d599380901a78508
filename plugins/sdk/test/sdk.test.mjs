// The SDK over in-memory streams: initialize, a tool call, a veto, errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { definePlugin, serve, PROTOCOL } = require("../dist/index.js");

function harness(plugin) {
  const input = new PassThrough();
  const output = new PassThrough();
  const error = new PassThrough();
  const replies = new Map();
  let buf = "";
  output.on("data", (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const m = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      replies.get(m.id)?.(m);
    }
  });
  let next = 1;
  const call = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      replies.set(id, resolve);
      input.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  const done = serve(plugin, { input, output, error });
  return { call, end: () => input.end(), done };
}

const plugin = definePlugin({
  name: "t",
  version: "1.2.3",
  tools: [{ name: "shout", description: "upper case", inputSchema: { type: "object", properties: { s: { type: "string" } } }, run: (a) => a.s.toUpperCase() }],
  hooks: {
    "tool.execute.before": (c) => (String(c.arguments.command ?? "").includes("rm -rf") ? { veto: "no rm -rf" } : undefined),
  },
});

test("initialize lists tools and hooks, then calls and hooks answer", async () => {
  const h = harness(plugin);
  const init = await h.call("initialize", { protocol: PROTOCOL, project: "/p", config: null });
  assert.equal(init.result.protocol, 1);
  assert.equal(init.result.name, "t");
  assert.deepEqual(init.result.tools.map((t) => t.name), ["shout"]);
  assert.deepEqual(init.result.hooks, ["tool.execute.before"]);
  const r = await h.call("tool.call", { name: "shout", arguments: { s: "hi" } });
  assert.deepEqual(r.result, { output: "HI", is_error: false });
  const veto = await h.call("tool.execute.before", { tool: "bash", arguments: { command: "rm -rf /" } });
  assert.equal(veto.result.veto, "no rm -rf");
  const ok = await h.call("tool.execute.before", { tool: "bash", arguments: { command: "ls" } });
  assert.deepEqual(ok.result, {});
  const unknown = await h.call("nope", {});
  assert.equal(unknown.error.code, -32601);
  const missing = await h.call("tool.call", { name: "nope", arguments: {} });
  assert.match(missing.error.message, /no tool nope/);
  h.end();
  await h.done;
});

test("another protocol version is refused", async () => {
  const h = harness(plugin);
  const r = await h.call("initialize", { protocol: 2, project: "/p" });
  assert.match(r.error.message, /protocol 1, not 2/);
  h.end();
});

test("bad tool names are refused when defined", () => {
  assert.throws(() => definePlugin({ name: "x", tools: [{ name: "has space", description: "", run: () => "" }] }), /tool name/);
});
