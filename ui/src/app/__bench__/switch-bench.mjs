// Session switch benchmark: the built UI (ui/dist, served by `mia-code serve --ui ui/dist` or
// `npx vite preview`) with the API faked by Playwright routes: ten sessions, one of 2,000 messages
// and one of 20. Each is opened once (so all are live in the window), then the page switches between
// the short and the long one RUNS times, timed in the page from the click to the tail painted
// (two animation frames after it is in the DOM), as the desktop benchmark does. CPU=4 throttles the
// CPU (closer to WebKitGTK); PROFILE=1 prints the functions with the most self time during the
// switches. Usage:
//   UI_URL=http://127.0.0.1:PORT/ [RUNS=7] [CPU=4] [PROFILE=1] node ui/src/app/__bench__/switch-bench.mjs
import { createRequire } from "module";
import { printProfile } from "./profile.mjs";
const require = createRequire(new URL("../../../package.json", import.meta.url));
const { chromium } = require("playwright-core");

const RUNS = Number(process.env.RUNS ?? 7);
const id = (i) => `01900000-0000-7000-8000-${String(i).padStart(12, "0")}`;
const now = Date.now();
const sizes = [20, 2000, 500, 50, 50, 50, 50, 50, 50, 50];
const sessions = sizes.map((n, i) => ({
  id: id(i),
  title: i === 0 ? "Short session" : i === 1 ? "Long session" : `Session ${i}`,
  slug: `s-${i}`,
  directory: "/tmp/swb/proj",
  project_id: "p",
  status: "idle",
  agent: "build",
  created_at: now - 1e6,
  updated_at: now - i * 1000,
  version: "0.1",
  message_count: n,
}));
function messages(sid, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const mid = `${sid.slice(-4)}m${String(i).padStart(6, "0")}`;
    const part = (j, content) => ({ id: `${mid}-${j}`, message_id: mid, index: j, created_at: 1, content });
    if (i % 2 === 0)
      out.push({ id: mid, session_id: sid, role: "user", type: "normal", created_at: 1, metadata: {}, parts: [part(0, { type: "text", text: `Question ${i}: how does module_${i} handle errors?` })] });
    else
      out.push({
        id: mid,
        session_id: sid,
        role: "assistant",
        type: "normal",
        created_at: 1,
        metadata: { agent: "build", model: "mock/m", tokens: { input: 1200, output: 180 }, cost_usd: 0.001 },
        parts: [
          part(0, { type: "text", text: `Answer ${i}: \`module_${i}\` returns a **typed error**.\n\n- it wraps I/O errors\n- it names the file\n\n\`\`\`rust\nfn load_${i}() -> Result<Config, Error> {\n    parse(&text)\n}\n\`\`\`\n` }),
          part(1, { type: "tool_call", call_id: `c${i}`, tool: "read", input: { path: `src/module_${i}.rs` } }),
          part(2, { type: "tool_result", call_id: `c${i}`, tool: "read", output: `fn load_${i}() {}\n`, duration_ms: 3 }),
        ],
      });
  }
  return out;
}
const details = new Map(sessions.map((s, i) => [s.id, { session: s, agent: "build", messages: messages(s.id, sizes[i]), running: false, pending_permissions: [], seq: 0, epoch: "e" }]));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
await page.route("**/api/**", async (route) => {
  const url = new URL(route.request().url());
  const p = url.pathname;
  const json = (b) => route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(b) });
  if (p === "/api/info") return json({ version: "0.1", home: "/h", project: "/tmp/swb/proj" });
  if (p === "/api/sessions") return json(sessions);
  const m = /^\/api\/sessions\/([^/]+)$/.exec(p);
  if (m && details.has(m[1])) return json(details.get(m[1]));
  if (p === "/api/agents")
    return json([
      { name: "build", mode: "primary", builtin: true, description: "", read_only: false },
      { name: "plan", mode: "primary", builtin: true, description: "", read_only: true },
    ]);
  if (p === "/api/events")
    return route.fulfill({ status: 200, contentType: "text/event-stream", body: `retry: 600000\nevent: hello\ndata: ${JSON.stringify({ epoch: "e", reset: "none" })}\n\n` });
  return json([]);
});
await page.goto((process.env.UI_URL ?? "http://127.0.0.1:4173/") + "#token=x");
await page.getByTestId("session-item").first().waitFor();
const cdp = await page.context().newCDPSession(page);
if (process.env.CPU) await cdp.send("Emulation.setCPUThrottlingRate", { rate: Number(process.env.CPU) });

const open = (title, last) =>
  page.evaluate(
    ([title, last]) =>
      new Promise((done) => {
        const item = [...document.querySelectorAll("[data-testid=session-item]")].find((e) => e.textContent.includes(title));
        if (!item) return done(-1);
        const t0 = performance.now();
        item.querySelector("button").click();
        // When the tail is in the DOM (a MutationObserver sees it in the commit that adds it),
        // then painted (two animation frames later).
        let inDom = 0;
        const seen = () => {
          const conv = document.querySelector("[data-testid=conversation]");
          return !!conv && conv.textContent.includes(last);
        };
        const finish = () => {
          mo.disconnect();
          requestAnimationFrame(() => requestAnimationFrame(() => done({ dom: inDom - t0, painted: performance.now() - t0 })));
        };
        const mo = new MutationObserver(() => {
          if (!inDom && seen()) {
            inDom = performance.now();
            finish();
          }
        });
        mo.observe(document.body, { childList: true, subtree: true, characterData: true });
        if (seen()) {
          inDom = performance.now();
          finish();
        }
      }),
    [title, last],
  );
for (let i = 0; i < sessions.length; i++) {
  const t = await open(sessions[i].title, `Answer ${sizes[i] - 1}:`);
  if (t === -1) throw new Error(`${sessions[i].title} is not listed`);
}
// The page's live JS heap once every session has been shown (after a full collection).
const heap = async () => {
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  return Math.round(usedSize / 1e5) / 10;
};
const heapVisitedMb = await heap();
if (process.env.PROFILE) {
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
}
const short = [];
const long = [];
for (let r = 0; r < RUNS; r++) {
  short.push(await open("Short session", "Answer 19:"));
  long.push(await open("Long session", "Answer 1999:"));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
if (process.env.PROFILE) {
  const { profile } = await cdp.send("Profiler.stop");
  printProfile(profile, { selfTop: 25, inclusiveTop: Number(process.env.TOP ?? 60) });
}
const pick = (xs, k) => median(xs.map((x) => x[k])).toFixed(1);
console.log(
  JSON.stringify({
    runs: RUNS,
    heapVisitedMb,
    cpuThrottle: Number(process.env.CPU ?? 1),
    shortMs: { dom: pick(short, "dom"), painted: pick(short, "painted") },
    longMs: { dom: pick(long, "dom"), painted: pick(long, "painted") },
    long: long.map((x) => [Math.round(x.dom), Math.round(x.painted)]),
  }),
);
await browser.close();
