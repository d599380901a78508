// Drives `mia-code acp` as an editor would, with the official ACP
// TypeScript SDK: initialize → session/new → a prompt with a plan, a
// permission request and an edit through the editor's buffer (diff
// content) → a prompt cancelled mid-stream → malformed input → a fresh
// process loads the session. crates/mia-cli/tests/acp.rs runs it with the
// mock model and checks the files and the store afterwards.
//
//   MIA_BIN=.../mia-code PROJECT=/abs/dir node drive.mjs
//
// Prints one JSON line {"session": ID, "failures": [...]} last; exits 1 when
// a check failed.

import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const BIN = process.env.MIA_BIN;
const PROJECT = process.env.PROJECT;
if (!BIN || !PROJECT) {
  console.error("set MIA_BIN and PROJECT");
  process.exit(2);
}
const failures = [];
const check = (ok, what) => {
  console.error(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const withTimeout = (p, ms, what) =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`timed out: ${what}`)))]);

/** Start `mia-code acp`; streams for the SDK, a tap of raw stdout lines. */
function start() {
  const child = spawn(BIN, ["acp"], { cwd: PROJECT, stdio: ["pipe", "pipe", "inherit"] });
  const raw = [];
  let done = false;
  const input = new ReadableStream({
    start(c) {
      let buf = "";
      child.stdout.on("data", (chunk) => {
        buf += chunk.toString("utf8");
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          raw.push(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
        if (!done) c.enqueue(new Uint8Array(chunk));
      });
      child.stdout.on("end", () => {
        if (!done) (done = true), c.close();
      });
    },
    cancel() {
      done = true;
    },
  });
  const output = new WritableStream({
    write(chunk) {
      return new Promise((res, rej) => child.stdin.write(chunk, (e) => (e ? rej(e) : res())));
    },
  });
  const exited = new Promise((r) => child.on("exit", (code) => r(code)));
  return { child, raw, input, output, exited };
}

// The editor's buffers: a.txt is open with unsaved changes.
const buffers = new Map();
const aPath = path.join(PROJECT, "a.txt");
buffers.set(aPath, "hello from the buffer\n");
const fsCalls = [];
const updates = [];
const asks = [];

function client() {
  return acp
    .client({ name: "mia-code-acp-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      asks.push(params);
      const once = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: once.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      fsCalls.push(["read", params.path]);
      return { content: buffers.get(params.path) ?? (await fs.readFile(params.path, "utf8")) };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      fsCalls.push(["write", params.path]);
      buffers.set(params.path, params.content);
      // The editor saves the buffer.
      await fs.writeFile(params.path, params.content);
      return {};
    });
}

const M = acp.methods.agent;
let sessionId = null;

// ---- first process: a full turn, a cancelled one, malformed input ----
{
  const a = start();
  await client().connectWith(acp.ndJsonStream(a.output, a.input), async (ctx) => {
    const init = await ctx.request(M.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "mia-code-acp-test", version: "1" },
    });
    check(init.agentCapabilities?.loadSession === true, "initialize: loadSession");
    check(Array.isArray(init.authMethods), "initialize: auth methods listed");

    // The editor's own MCP server (the fixture), when the test gives one.
    const mcpServers = process.env.MCP_PY
      ? [{ name: "editor", command: process.env.MCP_PY, args: [process.env.MCP_SERVER], env: [{ name: "FIXTURE_NAME", value: "the editor" }] }]
      : [];
    const ns = await ctx.request(M.session.new, { cwd: PROJECT, mcpServers });
    sessionId = ns.sessionId;
    check(/^[0-9a-f-]{36}$/.test(sessionId), `session/new: a mia-code session id (${sessionId})`);
    const modeIds = (ns.modes?.availableModes ?? []).map((m) => m.id);
    check(modeIds.includes("plan") && modeIds.includes("build"), `modes: ${modeIds}`);

    const r1 = await withTimeout(
      ctx.request(M.session.prompt, { sessionId, prompt: [{ type: "text", text: "please edit a.txt" }] }),
      60000,
      "prompt 1",
    );
    check(r1.stopReason === "end_turn", `prompt 1 ends: ${r1.stopReason}`);
    const kinds = updates.map((u) => u.update.sessionUpdate);
    check(kinds.includes("agent_message_chunk"), "agent_message_chunk");
    check(kinds.includes("agent_thought_chunk"), "agent_thought_chunk");
    check(kinds.includes("plan"), "plan from the todo list");
    const plan = updates.find((u) => u.update.sessionUpdate === "plan");
    check(plan?.update.entries?.[0]?.content === "edit a.txt", "plan entry");
    const call = updates.find((u) => u.update.sessionUpdate === "tool_call" && u.update.kind === "edit");
    check(Boolean(call), "tool_call of kind edit");
    const done = updates.find(
      (u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === call?.update.toolCallId && u.update.status === "completed",
    );
    const diff = done?.update.content?.find((c) => c.type === "diff");
    check(diff?.path === aPath, "diff content for a.txt");
    check(diff?.newText === "hello world from the buffer\n", `diff new text: ${JSON.stringify(diff?.newText)}`);
    check(asks.length === 1 && asks[0].toolCall.toolCallId === call?.update.toolCallId, "one permission request, for the edit");
    const optionKinds = (asks[0]?.options ?? []).map((o) => o.kind).sort();
    check(
      JSON.stringify(optionKinds) === JSON.stringify(["allow_always", "allow_once", "reject_always", "reject_once"]),
      `permission options: ${optionKinds}`,
    );
    check(fsCalls.some(([k, p]) => k === "read" && p === aPath), "the edit read the editor's buffer");
    check(fsCalls.some(([k, p]) => k === "write" && p === aPath), "the edit wrote through the editor");

    // A prompt cancelled while it streams.
    const before = updates.length;
    const p2 = ctx.request(M.session.prompt, { sessionId, prompt: [{ type: "text", text: "talk slowly" }] });
    const t0 = Date.now();
    while (!updates.slice(before).some((u) => u.update.sessionUpdate === "agent_message_chunk")) {
      if (Date.now() - t0 > 30000) break;
      await sleep(20);
    }
    await ctx.notify(M.session.cancel, { sessionId });
    const r2 = await withTimeout(p2, 30000, "cancelled prompt");
    check(r2.stopReason === "cancelled", `cancel mid-stream: ${r2.stopReason}`);

    // A tool of the editor's MCP server.
    if (process.env.MCP_PY) {
      const r3 = await withTimeout(
        ctx.request(M.session.prompt, { sessionId, prompt: [{ type: "text", text: "use the editor's tool" }] }),
        60000,
        "mcp prompt",
      );
      check(r3.stopReason === "end_turn", `mcp prompt ends: ${r3.stopReason}`);
      const mcpCall = updates.find((u) => u.update.sessionUpdate === "tool_call" && u.update.title?.startsWith("mcp__editor__echo"));
      check(Boolean(mcpCall), "tool_call of the editor's MCP tool");
      const mcpDone = updates.find(
        (u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === mcpCall?.update.toolCallId && u.update.status === "completed",
      );
      const text = JSON.stringify(mcpDone?.update.content ?? []);
      check(text.includes("echo from the editor: hi from the editor"), `the MCP tool answered: ${text}`);
    }

    // Malformed input: a JSON-RPC error, and the process lives.
    const mark = a.raw.length;
    a.child.stdin.write("{this is not json\n");
    a.child.stdin.write('{"jsonrpc":"2.0","id":"bad-1","method":"session/prompt","params":{"sessionId":42}}\n');
    const t1 = Date.now();
    while (a.raw.length < mark + 2 && Date.now() - t1 < 10000) await sleep(20);
    const answers = a.raw.slice(mark).map((l) => JSON.parse(l));
    check(answers.some((m) => m.id === null && m.error?.code === -32700), "invalid JSON: -32700");
    check(answers.some((m) => m.id === "bad-1" && m.error?.code === -32602), "bad params: -32602");
    const again = await ctx.request(M.session.setMode, { sessionId, modeId: "plan" });
    check(again !== undefined, "the process lives after malformed input");
    check(
      updates.some((u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "plan"),
      "set_mode: current_mode_update",
    );
  });
  a.child.stdin.end();
  check((await a.exited) === 0, "exit 0 when the editor closes stdin");
}

// ---- a second process loads the stored session ----
{
  const b = start();
  const before = updates.length;
  await client().connectWith(acp.ndJsonStream(b.output, b.input), async (ctx) => {
    await ctx.request(M.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const lr = await ctx.request(M.session.load, { sessionId, cwd: PROJECT, mcpServers: [] });
    check(lr.modes?.currentModeId === "plan", `loaded mode: ${lr.modes?.currentModeId}`);
    const replay = updates.slice(before).map((u) => u.update);
    check(
      replay.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "please edit a.txt"),
      "replay: the user's message",
    );
    check(replay.some((u) => u.sessionUpdate === "tool_call" && u.kind === "edit"), "replay: the edit call");
    check(replay.some((u) => u.sessionUpdate === "agent_message_chunk"), "replay: the agent's text");
    try {
      await ctx.request(M.session.load, { sessionId: "nope", cwd: PROJECT, mcpServers: [] });
      check(false, "unknown session refused");
    } catch (e) {
      check(e instanceof acp.RequestError, `unknown session: error ${e.code}`);
    }
  });
  b.child.stdin.end();
  await b.exited;
}

console.log(JSON.stringify({ session: sessionId, failures }));
process.exit(failures.length ? 1 : 0);
