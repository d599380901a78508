// UI render/stream benchmark: the built UI (served by `mia-code serve --ui ui/dist`, any token) with
// the API faked by Playwright routes: a 2,000-message session (N=...) and a 20,000-token answer streamed
// over SSE from a local server (PER events every GAP ms). Prints timings and long tasks (> 50 ms).
// Usage: UI_URL=http://127.0.0.1:PORT/ [N=2000] [PER=25 GAP=50] [CPU=4] [PROFILE=1] node ui/src/app/__bench__/render-bench.mjs
import { createRequire } from "module";
import { printProfile } from "./profile.mjs";
const require = createRequire(new URL("../../../package.json", import.meta.url));
const { chromium } = require("playwright-core");
const N = Number(process.env.N ?? 2000);
const S = "01900000-0000-7000-8000-000000000001";
const session = {
  id: S,
  title: "Big session",
  slug: "big",
  directory: "/tmp/uit/proj",
  project_id: "p",
  status: "idle",
  created_at: Date.now() - 1e6,
  updated_at: Date.now(),
  version: "0.1",
};
const words = "the quick brown fox jumps over the lazy dog while mia reads the code and plans".split(" ");
const para = (i, n) => Array.from({ length: n }, (_, k) => words[(i + k) % words.length]).join(" ");
const messages = [];
for (let i = 0; i < N; i++) {
  const id = `m${String(i).padStart(6, "0")}`;
  const part = (j, content) => ({ id: `${id}-${j}`, message_id: id, index: j, created_at: 1, content });
  if (i % 2 === 0)
    messages.push({
      id,
      session_id: S,
      role: "user",
      type: "normal",
      created_at: 1,
      metadata: {},
      parts: [part(0, { type: "text", text: `Question ${i}: ${para(i, 12)}` })],
    });
  else {
    const parts = [
      part(0, {
        type: "text",
        text: `## Answer ${i}\n\n${para(i, 40)} **bold** and \`code\`.\n\n- one\n- two\n\n\`\`\`ts\nconst x${i} = ${i};\nfunction f() { return x${i} * 2; }\n\`\`\`\n`,
      }),
    ];
    if (i % 3 === 0) {
      parts.push(part(1, { type: "tool_call", call_id: `c${i}`, tool: "read", input: { path: `src/file${i}.ts` } }));
      parts.push(
        part(2, {
          type: "tool_result",
          call_id: `c${i}`,
          tool: "read",
          output: Array.from({ length: 30 }, (_, k) => `${k + 1}\tline ${k}`).join("\n"),
          duration_ms: 3,
        }),
      );
    }
    messages.push({
      id,
      session_id: S,
      role: "assistant",
      type: "normal",
      created_at: 1,
      metadata: { agent: "build", model: "mock/m", tokens: { input: 1000, output: 200 }, cost_usd: 0.001 },
      parts,
    });
  }
}
const detail = { session, agent: "build", messages, running: false, pending_permissions: [] };
// A 20,000-token answer in ~5,000 deltas, as one SSE burst.
const MID = "01900000-0000-7000-8000-00000000ffff";
let sse = `event: step_started\ndata: ${JSON.stringify({ type: "step_started", session_id: S, message_id: MID, agent: "build", model: "mock/m" })}\n\n`;
let text = "";
for (let i = 0; i < 5000; i++) {
  let t = `${words[i % words.length]} ${words[(i + 3) % words.length]} `;
  if (i % 60 === 59) t += "\n\n";
  if (i % 400 === 100) t += "\n\n```ts\n";
  if (i % 400 === 160) t += "\n```\n\n";
  if (i % 100 === 50) t += "**";
  if (i % 100 === 52) t += "**";
  text += t;
  sse += `event: text_delta\ndata: ${JSON.stringify({ type: "text_delta", session_id: S, message_id: MID, text: t })}\n\n`;
}
import http from "http";
const streams = new Set();
const sseServer = http.createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Access-Control-Allow-Origin": "*" });
  res.write(": open\n\n");
  streams.add(res);
  req.on("close", () => streams.delete(res));
});
await new Promise((r) => sseServer.listen(4555, "127.0.0.1", r));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
await page.route("**/api/**", async (route) => {
  const url = new URL(route.request().url());
  const p = url.pathname;
  const json = (b) => route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(b) });
  if (p === "/api/info") return json({ version: "0.1", demo: true, home: "/h", project: "/tmp/uit/proj" });
  if (p === "/api/sessions") return json([{ ...session, message_count: N }]);
  if (p === `/api/sessions/${S}`) return json(detail);
  if (p === "/api/agents")
    return json([
      { name: "build", mode: "primary", builtin: true, description: "", read_only: false },
      { name: "plan", mode: "primary", builtin: true, description: "", read_only: true },
    ]);
  if (p.endsWith("/timeline")) return json([]);
  if (p === "/api/events") return route.continue({ url: "http://127.0.0.1:4555" + p + url.search });
  return json([]);
});
await page.addInitScript(() => {
  window.__long = [];
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) window.__long.push(e.duration);
  }).observe({ type: "longtask", buffered: true });
});
const t0 = Date.now();
await page.goto((process.env.UI_URL ?? "http://127.0.0.1:4096/") + "#token=x");
await page.getByTestId("session-item").waitFor();
const tList = Date.now() - t0;
await page.locator(`[data-message-id="m${String(N - 1).padStart(6, "0")}"]`).waitFor({ timeout: 30000 });
const tRender = Date.now() - t0;
const inDom = await page.locator(".conversation .row").count();
console.log(
  JSON.stringify({
    N,
    sessionListMs: tList,
    lastMessageVisibleMs: tRender,
    rowsInDom: inDom,
    demoBanner: await page.getByTestId("demo-banner").count(),
  }),
);
const long1 = await page.evaluate(() => window.__long.slice());
console.log("long tasks during load (ms):", long1.map(Math.round));
// Streaming: reconnect the SSE with the burst.
await page.evaluate(() => (window.__long = []));
// PROFILE=1: a CPU profile of the page while the answer streams; the functions with the most
// self time are printed at the end.
const cdp = process.env.PROFILE || process.env.CPU ? await page.context().newCDPSession(page) : null;
// CPU=4: the CPU throttled 4× (closer to WebKitGTK's speed than headless Chromium's).
if (process.env.CPU) await cdp.send("Emulation.setCPUThrottlingRate", { rate: Number(process.env.CPU) });
if (process.env.PROFILE) {
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
}
// TRACE=path: a Chromium trace (devtools.timeline) of the stream, then the time per event name.
if (process.env.TRACE) await browser.startTracing(page, { path: process.env.TRACE, categories: ["devtools.timeline"] });
const ts = Date.now();
console.log("open streams", streams.size);
const chunks = sse
  .split("\n\n")
  .filter(Boolean)
  .map((c) => c + "\n\n");
const PER = Number(process.env.PER ?? 5000);
const GAP = Number(process.env.GAP ?? 0);
for (let i = 0; i < chunks.length; i += PER) {
  for (const r of streams) r.write(chunks.slice(i, i + PER).join(""));
  if (GAP) await new Promise((res) => setTimeout(res, GAP));
}
// Force a reconnect: the keepalive stream ended, EventSource reconnects by itself after its retry delay.
await page.locator(`[data-message-id="${MID}"]`).waitFor({ timeout: 60000 });
await page
  .waitForFunction(
    (n) => {
      const el = document.querySelector(`[data-message-id="${n}"]`);
      window.__len = el ? el.textContent.length : -1;
      return el && el.textContent.length > 45000;
    },
    MID,
    { timeout: 20000 },
  )
  .catch(async () => console.log("len", await page.evaluate(() => window.__len)));
const tStream = Date.now() - ts;
await page.waitForTimeout(500);
if (process.env.PROFILE) {
  const { profile } = await cdp.send("Profiler.stop");
  printProfile(profile, { selfTop: 30, inclusiveTop: Number(process.env.TOP ?? 45) });
}
if (process.env.TRACE) {
  const trace = JSON.parse((await browser.stopTracing()).toString());
  const by = new Map();
  for (const e of trace.traceEvents ?? []) {
    if (e.ph !== "X" || !e.dur) continue;
    const k = e.name;
    const v = by.get(k) ?? { ms: 0, n: 0, max: 0 };
    v.ms += e.dur / 1000;
    v.n += 1;
    v.max = Math.max(v.max, e.dur / 1000);
    by.set(k, v);
  }
  for (const [k, v] of [...by].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25))
    console.log(`${v.ms.toFixed(1).padStart(9)} ms  ${String(v.n).padStart(6)}×  max ${v.max.toFixed(1).padStart(6)}  ${k}`);
  const layouts = (trace.traceEvents ?? []).filter((e) => e.name === "Layout" && e.ph === "B" || (e.name === "Layout" && e.args?.beginData));
  const dirty = layouts.map((e) => e.args?.beginData?.dirtyObjects ?? 0);
  console.log("layouts", layouts.length, "dirty objects median", [...dirty].sort((a, b) => a - b)[Math.floor(dirty.length / 2)], "total objects", layouts.at(-1)?.args?.beginData?.totalObjects);
}
const long2 = await page.evaluate(() => window.__long.slice());
console.log("long tasks:", long2.map(Math.round).join(" "));
console.log(
  JSON.stringify({
    streamedChars: text.length,
    streamMs: tStream,
    longTasks: long2.length,
    maxLongTaskMs: Math.round(Math.max(0, ...long2)),
  }),
);
await page.screenshot({ path: process.env.SCREENSHOT ?? "/tmp/ui-bench.png" });
await browser.close();
for (const r of streams) r.end();
sseServer.close();
process.exit(0);
