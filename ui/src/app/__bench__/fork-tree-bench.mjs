// Fork tree render benchmark: the built UI (ui/dist, served by anything: `mia-code serve --ui ui/dist`
// or `npx vite preview`) with the API faked by Playwright routes: a project of N sessions (default 200)
// as a forest of forks (forks of forks, forks with their own worktree, running and archived ones).
// Measures, in the page, from the tree answer's arrival to the first screen of nodes drawn and painted
// (dagre layout of all N + React render of those in view: the rest is culled), RUNS times; then pan,
// zoom and select steps (ms per step, to the next frame); the baseline is the same N sessions rendered as the sidebar's plain list
// (no layout), measured the same way. SCREENSHOT=path also saves a picture of the tree
// (COLOR=light|dark). Usage:
//   UI_URL=http://127.0.0.1:PORT/ [N=200] [RUNS=5] [SCREENSHOT=/tmp/fork-tree.png] node ui/src/app/__bench__/fork-tree-bench.mjs
import { createRequire } from "module";
const require = createRequire(new URL("../../../package.json", import.meta.url));
const { chromium } = require("playwright-core");

const N = Number(process.env.N ?? 200);
const RUNS = Number(process.env.RUNS ?? 5);
const PROJECT = "/tmp/ftb/project";
const now = Date.now();
const id = (i) => `01900000-0000-7000-8000-${String(i).padStart(12, "0")}`;
const topics = ["Fix the auth bug", "Refactor the parser", "Add dark mode", "Speed up the tests", "Write the docs", "Try a cache", "Port to Rust", "Tidy the CLI"];
const excerpts = ["Let me read the README first and then", "Plan: split the module into two parts", "The failing test is in parser.rs line 40", "Try the other approach with a cache", "Summarise what changed so far"];

/** N sessions: roots with forks (up to depth 3), every 5th fork with files, a few running and archived. */
function forest(n) {
  const all = [];
  let k = 0;
  const make = (parent, depth) => {
    const i = k++;
    const title = parent ? `${parent.title.replace(/ \(fork.*\)$/, "")} (fork ${parent.children.length + 1})` : `${topics[i % topics.length]} #${i}`;
    const node = {
      id: id(i),
      title,
      slug: `s-${i}`,
      agent: i % 3 === 0 ? "plan" : "build",
      model: "anthropic/claude-sonnet-4-5",
      status: i % 17 === 5 ? "busy" : "idle",
      directory: PROJECT,
      project_id: "p",
      parent_id: parent?.id ?? null,
      fork: parent ? { source_session_id: parent.id, source_message_id: id(100000 + i), forked_at: now - i * 60000, fork_depth: depth } : null,
      created_at: now - (n - i) * 3600000,
      updated_at: now - i * 97000,
      archived_at: null,
      version: "0.1",
      message_count: 4 + (i % 30),
      files_changed: i % 7,
      cost_usd: (i % 11) * 0.00731,
      fork_excerpt: parent ? excerpts[i % excerpts.length] : null,
      own_worktree: !!parent && i % 5 === 0,
      worktree: parent && i % 5 === 0 ? `fork-${i}` : null,
      children: [],
    };
    all.push(node);
    return node;
  };
  const roots = [];
  while (k < n) {
    const root = make(null, 0);
    roots.push(root);
    const forks = root.id.endsWith("0") ? 0 : 1 + (k % 3);
    for (let f = 0; f < forks && k < n; f++) {
      const c = make(root, 1);
      root.children.push(c);
      for (let g = 0; g < (f === 0 ? 2 : 0) && k < n; g++) {
        const gc = make(c, 2);
        c.children.push(gc);
        if (g === 0 && k < n) gc.children.push(make(gc, 3));
      }
    }
  }
  return { roots, all };
}

/** The screenshot's project: 8 sessions, forks of forks, one fork with files, one running. */
function small() {
  const base = (i, title, extra = {}) => ({
    id: id(i),
    title,
    slug: title.toLowerCase().replace(/\W+/g, "-"),
    agent: "build",
    model: "anthropic/claude-sonnet-4-5",
    status: "idle",
    directory: PROJECT,
    project_id: "p",
    parent_id: null,
    fork: null,
    created_at: now - 86400000,
    updated_at: now - i * 1500000,
    archived_at: null,
    version: "0.1",
    message_count: 12,
    files_changed: 3,
    cost_usd: 0.0421,
    fork_excerpt: null,
    own_worktree: false,
    worktree: null,
    children: [],
    ...extra,
  });
  const forkOf = (p, i, title, excerpt, extra = {}) => {
    const n = base(i, title, {
      parent_id: p.id,
      fork: { source_session_id: p.id, source_message_id: id(900 + i), forked_at: now - i * 1000000, fork_depth: (p.fork?.fork_depth ?? 0) + 1 },
      fork_excerpt: excerpt,
      ...extra,
    });
    p.children.push(n);
    return n;
  };
  const a = base(1, "Fix the login redirect loop", { message_count: 24, files_changed: 4, cost_usd: 0.1834 });
  const a1 = forkOf(a, 2, "Fix the login redirect loop (fork)", "Option B: keep the session cookie and drop the redirect", { message_count: 31, files_changed: 2, cost_usd: 0.0217 });
  forkOf(a1, 3, "Fix the login redirect loop (fork 1.1)", "Now add a regression test for the cookie path", { message_count: 36, files_changed: 1, cost_usd: 0.0093, status: "busy" });
  forkOf(a, 4, "Fix the login redirect loop (fork 2)", "Try it with the middleware instead of the handler", { message_count: 27, files_changed: 5, cost_usd: 0.0568, own_worktree: true, worktree: "fork-brave-otter" });
  const b = base(5, "Speed up the test suite", { agent: "plan", message_count: 9, files_changed: 0, cost_usd: 0.0123 });
  forkOf(b, 6, "Speed up the test suite (fork)", "Plan: run the slow integration tests in parallel", { message_count: 14, files_changed: 6, cost_usd: 0.0311 });
  const roots = [a, b, base(7, "Write the release notes", { message_count: 4, files_changed: 1, cost_usd: 0.0042 }), base(8, "Explain the cache layer", { message_count: 6, files_changed: 0, cost_usd: 0.0051, agent: "plan" })];
  const all = [];
  const walk = (x) => {
    all.push(x);
    x.children.forEach(walk);
  };
  roots.forEach(walk);
  return { roots, all };
}

const shot = process.env.SCREENSHOT;
const { roots, all } = shot ? small() : forest(N);
const count = all.length;
const summaries = all.map(({ children, cost_usd, files_changed, fork_excerpt, own_worktree, ...s }) => s);
const msg = (sid, i, role, text) => ({
  id: id(500000 + i),
  session_id: sid,
  role,
  type: "normal",
  created_at: now,
  metadata: {},
  parts: [{ id: id(600000 + i), message_id: id(500000 + i), index: 0, created_at: now, content: { type: "text", text } }],
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
});
const page = await browser.newPage({
  viewport: { width: 1400, height: 900 },
  colorScheme: process.env.COLOR === "dark" ? "dark" : "light",
});
await page.route("**/api/**", async (route) => {
  const url = new URL(route.request().url());
  const p = url.pathname;
  const json = (b) => route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(b) });
  if (p === "/api/info") return json({ version: "0.1", demo: false, home: "/h", project: PROJECT });
  if (p === "/api/sessions") return json(summaries);
  if (p === "/api/sessions/tree") return json(roots);
  if (p === "/api/events") return route.fulfill({ status: 204, body: "" });
  if (p === "/api/agents")
    return json([
      { name: "build", mode: "primary", builtin: true, description: "", read_only: false },
      { name: "plan", mode: "primary", builtin: true, description: "", read_only: true },
    ]);
  if (p.endsWith("/timeline")) return json([]);
  const m = /^\/api\/sessions\/([^/]+)$/.exec(p);
  if (m) {
    const s = summaries.find((x) => x.id === m[1]) ?? summaries[0];
    return json({ session: s, agent: "build", messages: [msg(s.id, 1, "user", "Hello"), msg(s.id, 2, "assistant", "Hi")] });
  }
  return json([]);
});
await page.addInitScript((n) => localStorage.setItem("ftb.n", String(n)), count);
// When the n-th element of a kind is in the DOM (and painted), in page time.
await page.addInitScript(() => {
  window.__seen = {};
  window.__watch = (sel, n, key) =>
    new Promise((res) => {
      const check = () => {
        if (document.querySelectorAll(sel).length >= n) {
          requestAnimationFrame(() => setTimeout(() => res((window.__seen[key] = performance.now())), 0));
          return true;
        }
        return false;
      };
      if (check()) return;
      const mo = new MutationObserver(() => {
        if (check()) mo.disconnect();
      });
      mo.observe(document, { childList: true, subtree: true });
    });
  // The sidebar's list is virtualised: its first screen.
  window.__watch('[data-testid="session-item"]', Math.min(12, Number(localStorage.getItem("ftb.n") ?? 1)), "list");
});
await page.goto((process.env.UI_URL ?? "http://127.0.0.1:4173/") + "#token=x");
await page.waitForFunction(() => window.__seen.list !== undefined, null, { timeout: 30000 });
const responseEnd = (part) =>
  page.evaluate(
    (part) =>
      performance
        .getEntriesByType("resource")
        .filter((e) => e.name.includes(part))
        .at(part === "/api/sessions?" ? 0 : -1)?.responseEnd ?? 0,
    part,
  );
const listMs = (await page.evaluate(() => window.__seen.list)) - (await responseEnd("/api/sessions?"));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let inDom = 0;
let interaction = null;
/** 40 pans (wheel), 20 zooms (Ctrl+wheel) and 20 selections (arrow keys), each to its next frame: ms per step. */
async function interact() {
  return page.evaluate(async () => {
    const vp = document.querySelector('[data-testid="fork-tree-viewport"]');
    const tree = document.querySelector('[data-testid="fork-tree"]');
    const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    const time = async (n, step) => {
      const t = performance.now();
      for (let i = 0; i < n; i++) {
        step(i);
        await frame();
      }
      return Math.round(((performance.now() - t) / n) * 10) / 10;
    };
    const pan = await time(40, (i) => vp.dispatchEvent(new WheelEvent("wheel", { deltaY: i < 20 ? 60 : -60, deltaX: 25, bubbles: true, cancelable: true })));
    const zoom = await time(20, (i) => vp.dispatchEvent(new WheelEvent("wheel", { deltaY: i < 10 ? 40 : -40, ctrlKey: true, clientX: 500, clientY: 400, bubbles: true, cancelable: true })));
    tree.focus();
    const select = await time(20, (i) => tree.dispatchEvent(new KeyboardEvent("keydown", { key: i % 4 === 3 ? "ArrowUp" : "ArrowDown", bubbles: true })));
    return { panMsPerStep: pan, zoomMsPerStep: zoom, selectMsPerStep: select };
  });
}
const treeRuns = [];
const totalRuns = [];
let edges = 0;
for (let r = 0; r < (shot ? 1 : RUNS); r++) {
  const t0 = await page.evaluate(() => {
    const t = performance.now();
    document.querySelector('[data-testid="open-fork-tree-project"]').click();
    return t;
  });
  // The tree draws only the sessions in and near the view (culled): the first screen of them.
  await page.evaluate((n) => window.__watch('[data-testid="fork-node"]', n, "tree"), Math.min(count, 12));
  const done = await page.evaluate(() => window.__seen.tree);
  treeRuns.push(done - (await responseEnd("/api/sessions/tree")));
  totalRuns.push(done - t0);
  edges = await page.locator('[data-testid="fork-edge-path"]').count();
  inDom = await page.locator('[data-testid="fork-node"]').count();
  if (shot) break;
  if (r === 0) interaction = await interact();
  await page.getByTestId("fork-tree-back").click();
  await page.getByTestId("conversation").waitFor();
}
console.log(
  JSON.stringify({
    sessions: count,
    edges,
    nodesInDom: inDom,
    interaction,
    baselineSidebarListMs: Math.round(listMs),
    treeRenderMs: treeRuns.map(Math.round),
    treeRenderMedianMs: Math.round(median(treeRuns)),
    clickToTreeMedianMs: Math.round(median(totalRuns)),
    budgetMs: 200,
  }),
);
if (shot) {
  await page.getByTestId("fork-tree").focus();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowUp");
  await page.screenshot({ path: shot });
  console.log("screenshot:", shot);
}
await browser.close();
