import { test, expect } from "@playwright/test";
import { startStack, until, type Stack } from "./harness";
import { shot } from "./screens";

// A session with a dozen forks (forks of forks too, made through the HTTP API): the fork tree
// opens fitted (zoomed out, not below 60%), with a minimap; zoom in and out, fit to view, a click
// on the minimap moves the view, a subtree collapses to a count, the layout turns top to bottom,
// and the Fork button on the selection bar makes a new fork.
const scenario = {
  name: "fork tree at scale",
  steps: [
    {
      match: { last_message_contains: "Plan the cache" },
      response: { events: [{ text: "Plan: an LRU cache in front of the parser, keyed by file hash." }] },
    },
  ],
};

let stack: Stack;
test.afterEach(async () => {
  await stack?.stop();
});

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${stack.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const fork = (id: string) => api<{ id: string; title: string }>("POST", `/api/sessions/${id}/fork`, { with_files: false });
const zoomOf = async (page: import("@playwright/test").Page) => Number(await page.getByTestId("fork-tree-viewport").getAttribute("data-zoom"));

test("a dozen forks: fit to view, zoom, minimap, collapsed counts, top to bottom, Fork", async ({ page }, testInfo) => {
  stack = await startStack(testInfo, scenario);
  await page.setViewportSize({ width: 1280, height: 800 });

  // The root session with one exchange, then 12 forks: 4 of the root, 3 of the first, 2 of its
  // first, and a chain of 3 below that.
  const root = await api<{ id: string }>("POST", "/api/sessions", { directory: stack.project });
  await api("POST", `/api/sessions/${root.id}/messages`, { text: "Plan the cache" });
  await until("the answer", async () => {
    const d = await api<{ session: { status: string }; messages: unknown[] }>("GET", `/api/sessions/${root.id}`);
    return d.messages.length >= 2 && d.session.status === "idle";
  });
  const a = await fork(root.id);
  for (let i = 0; i < 3; i++) await fork(root.id);
  const a1 = await fork(a.id);
  for (let i = 0; i < 2; i++) await fork(a.id);
  const a11 = await fork(a1.id);
  await fork(a1.id);
  let deep = a11;
  for (let i = 0; i < 3; i++) deep = await fork(deep.id);

  await page.goto(stack.openUrl);
  await page.getByTestId("open-fork-tree-project").click();
  const view = page.getByTestId("fork-tree-view");
  await expect(view.getByTestId("fork-tree-count")).toHaveText("13 sessions");
  const viewport = view.getByTestId("fork-tree-viewport");
  // Deeper than five levels (root, a, a1, a11 and a chain of 3): top to bottom by itself.
  await expect(viewport).toHaveAttribute("data-dir", "TB");
  await view.getByTestId("fork-tree-direction").click();
  await expect(viewport).toHaveAttribute("data-dir", "LR");

  // Fit to view: every session inside the viewport.
  await view.getByTestId("fork-tree-fit").click();
  const box = (await viewport.boundingBox())!;
  const nodes = view.getByTestId("fork-node");
  await expect(nodes).toHaveCount(13);
  for (const n of await nodes.all()) {
    const b = (await n.boundingBox())!;
    expect(b.x).toBeGreaterThanOrEqual(box.x - 1);
    expect(b.y).toBeGreaterThanOrEqual(box.y - 1);
    expect(b.x + b.width).toBeLessThanOrEqual(box.x + box.width + 1);
    expect(b.y + b.height).toBeLessThanOrEqual(box.y + box.height + 1);
  }
  const minimap = view.getByTestId("fork-tree-minimap");
  await expect(minimap).toBeVisible();
  await expect(minimap.locator(".ft-mm-nodes rect")).toHaveCount(13);
  await shot(page, testInfo, "33-fork-tree-fit");

  // Zoom in twice (button, then the + key): the minimap's frame shrinks to the part in view.
  const fitted = await zoomOf(page);
  await view.getByTestId("fork-tree-zoom-in").click();
  await view.getByTestId("fork-tree").focus();
  await page.keyboard.press("+");
  await expect.poll(() => zoomOf(page)).toBeCloseTo(fitted * 1.5625, 2);
  const frame = minimap.getByTestId("fork-tree-minimap-view");
  const small = Number(await frame.getAttribute("width"));
  // A click on the minimap's bottom right corner moves the view there.
  const mm = (await minimap.locator("svg").boundingBox())!;
  const before = await view.getByTestId("fork-tree-canvas").getAttribute("style");
  await page.mouse.click(mm.x + mm.width - 3, mm.y + mm.height - 3);
  await expect(view.getByTestId("fork-tree-canvas")).not.toHaveAttribute("style", before ?? "");
  expect(small).toBeLessThan(mm.width);
  await shot(page, testInfo, "34-fork-tree-zoomed");
  await view.getByTestId("fork-tree").focus();
  await page.keyboard.press("0");
  await expect.poll(() => zoomOf(page)).toBeCloseTo(fitted, 3);

  // Collapse the first fork's subtree: it shows how many sessions it hides.
  const aNode = view.locator(`[data-testid="fork-node"][data-session-id="${a.id}"]`);
  await aNode.getByTestId("fork-node-collapse").click();
  await expect(view.getByTestId("fork-node-hidden")).toHaveText("+8");
  await expect(nodes).toHaveCount(5);

  // Dark, top to bottom, the fork selected (its edge label unfolded).
  await page.emulateMedia({ colorScheme: "dark" });
  await view.getByTestId("fork-tree-direction").click();
  await expect(viewport).toHaveAttribute("data-dir", "TB");
  await aNode.getByTestId("fork-node-collapse").click();
  await expect(nodes).toHaveCount(13);
  await page.keyboard.press("0");
  await aNode.locator(".ft-title").click();
  await expect(page.getByTestId("session-title")).toContainText("(fork)");
  await page.getByTestId("open-fork-tree-project").click();
  await expect(viewport).toBeVisible();
  await shot(page, testInfo, "35-fork-tree-dark");
  await page.emulateMedia({ colorScheme: "light" });

  // Fork from the selection bar: a 14th session opens.
  await view.locator(`[data-testid="fork-node"][data-session-id="${deep.id}"]`).click();
  await page.getByTestId("open-fork-tree-project").click();
  await view.getByTestId("sel-fork-node-fork").click();
  await expect(page.getByTestId("session-title")).toContainText("(fork 1.1.1.1.1.1.1)");
  await page.getByTestId("open-fork-tree-project").click();
  await expect(view.getByTestId("fork-tree-count")).toHaveText("14 sessions");
});
