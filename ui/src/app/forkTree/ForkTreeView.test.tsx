import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ForkTreeNode } from "../../protocol/generated";
import { ForkTree } from "../ForkTree";
import { flatten, forkLine, layoutTree, NODE_H, NODE_W, visibleNodes } from "../forkTreeModel";
import { fakeTransport, Providers } from "../testing";
import { cullNodes, fitView, fitZoom, revealNode, zoomAt } from "./viewport";

// jsdom lays nothing out: the viewport gets a size of 800×600 here.
const VW = 800;
const VH = 600;
beforeAll(() => {
  for (const [prop, value] of [
    ["clientWidth", VW],
    ["clientHeight", VH],
  ] as const) {
    Object.defineProperty(HTMLElement.prototype, prop, {
      configurable: true,
      get(this: HTMLElement) {
        return this.classList.contains("ft-viewport") ? value : 0;
      },
    });
  }
});
afterAll(() => {
  // Back to Element.prototype's.
  Reflect.deleteProperty(HTMLElement.prototype, "clientWidth");
  Reflect.deleteProperty(HTMLElement.prototype, "clientHeight");
});

let serial = 0;
function node(title: string, parent: ForkTreeNode | null, over: Partial<ForkTreeNode> = {}): ForkTreeNode {
  const id = `s${serial++}`;
  const n: ForkTreeNode = {
    id,
    title,
    slug: id,
    status: "idle",
    directory: "/proj",
    project_id: "p",
    created_at: 1,
    updated_at: Date.now(),
    version: "0.1",
    message_count: 3,
    files_changed: 0,
    cost_usd: 0,
    own_worktree: false,
    children: [],
    parent_id: parent?.id ?? null,
    fork: parent ? { source_session_id: parent.id, source_message_id: `m-${id}`, forked_at: 1, fork_depth: 1 } : null,
    fork_excerpt: parent ? `fork point of ${id}` : null,
    ...over,
  };
  parent?.children.push(n);
  return n;
}

/** A root with `forks` forks, each with two forks of its own. */
function wide(forks: number): ForkTreeNode[] {
  const root = node("Wide", null);
  for (let i = 0; i < forks; i++) {
    const f = node("Wide (fork)", root);
    node("Wide (fork.1)", f);
    node("Wide (fork.2)", f);
  }
  return [root];
}

/** A chain of forks `depth` levels deep. */
function chain(depth: number): ForkTreeNode[] {
  const root = node("Deep", null);
  let at = root;
  for (let i = 1; i < depth; i++) at = node(`Deep (fork ${i})`, at);
  return [root];
}

function setup(roots: ForkTreeNode[], focus?: string) {
  const fake = fakeTransport((method, path) => {
    if (method === "GET" && path.startsWith("/api/sessions/tree?")) return roots;
    if (method === "POST" && path.endsWith("/fork")) return { ...roots[0]!, id: "new-fork", title: "Wide (fork 2)", children: undefined };
    return undefined;
  });
  const onOpenSession = vi.fn();
  render(
    <Providers transport={fake.transport}>
      <ForkTree directory="/proj" currentId={null} focus={focus} onBack={vi.fn()} onOpenSession={onOpenSession} onCompare={vi.fn()} />
    </Providers>,
  );
  return { ...fake, onOpenSession, user: userEvent.setup() };
}

const viewport = () => screen.getByTestId("fork-tree-viewport");
const zoom = () => Number(viewport().getAttribute("data-zoom"));
const canvasTransform = () => screen.getByTestId("fork-tree-canvas").style.transform;
const drawn = () => screen.queryAllByTestId("fork-node").map((n) => n.getAttribute("data-session-id"));
const nodeEl = (id: string) => document.querySelector<HTMLElement>(`[data-testid="fork-node"][data-session-id="${id}"]`)!;

describe("fork tree viewport math", () => {
  it("fits a big tree (never magnifies a small one), zooms about a point, reveals a node", () => {
    expect(fitZoom({ w: 400, h: 300 }, { w: VW, h: VH })).toBe(1);
    const k = fitZoom({ w: 3000, h: 1000 }, { w: VW, h: VH });
    expect(k).toBeCloseTo((VW - 48) / 3000);
    const v = fitView({ w: 3000, h: 1000 }, { w: VW, h: VH });
    expect(v.x).toBeCloseTo((VW - 3000 * k) / 2);
    // The world point under (100, 50) stays there.
    const z = zoomAt({ x: 10, y: 20, k: 1 }, 2, 100, 50);
    expect((100 - z.x) / z.k).toBeCloseTo(90);
    expect((50 - z.y) / z.k).toBeCloseTo(30);
    const r = revealNode({ x: 0, y: 0, k: 1 }, { w: VW, h: VH }, { id: "a", x: 1000, y: 10 });
    expect(r.x + 1000 + NODE_W).toBeLessThanOrEqual(VW);
  });

  it("culls the sessions far from the view, keeping the selected one", () => {
    const flat = flatten(wide(60));
    const { ids } = visibleNodes(flat, new Set(), "");
    const layout = layoutTree(flat, ids);
    const last = ids[ids.length - 1]!;
    const kept = cullNodes(ids, layout, { x: 0, y: 0, k: 1 }, { w: VW, h: VH }, last);
    expect(kept.length).toBeLessThan(ids.length / 3);
    expect(kept).toContain(last);
    // The first fork, at the top left, is in view.
    expect(kept).toContain(ids[1]);
    // No size known yet: everything.
    expect(cullNodes(ids, layout, { x: 0, y: 0, k: 1 }, { w: 0, h: 0 }, null)).toHaveLength(ids.length);
  });

  it("a fork's second line: its first new prompt when the tree has one, else its fork point", () => {
    const [root] = wide(1);
    const fork = root!.children[0]!;
    expect(forkLine(root!)).toBeNull();
    expect(forkLine(fork)).toEqual({ kind: "point", text: `fork point of ${fork.id}` });
    expect(forkLine({ ...fork, first_prompt: "  Try   it with a cache " })).toEqual({ kind: "prompt", text: "Try it with a cache" });
  });
});

describe("fork tree zoom, fit, minimap, collapse, direction", () => {
  it("zooms with the buttons, + / − and Ctrl+wheel; 0 and Fit fit the tree; the wheel pans", async () => {
    const { user } = setup(wide(12));
    await waitFor(() => expect(screen.getAllByTestId("fork-node").length).toBeGreaterThan(5));
    // 37 sessions do not fit at 100%: opened zoomed out (not below 60%).
    await waitFor(() => expect(zoom()).toBeLessThan(1));
    expect(zoom()).toBeGreaterThanOrEqual(0.6);
    const opened = zoom();
    await user.click(screen.getByTestId("fork-tree-zoom-in"));
    expect(zoom()).toBeCloseTo(opened * 1.25, 2);
    expect(screen.getByTestId("fork-tree-zoom")).toHaveTextContent(`${Math.round(opened * 125)}%`);
    await user.click(screen.getByTestId("fork-tree-zoom-out"));
    await user.click(screen.getByTestId("fork-tree-zoom-out"));
    expect(zoom()).toBeCloseTo(opened / 1.25, 2);
    screen.getByTestId("fork-tree").focus();
    await user.keyboard("+");
    expect(zoom()).toBeCloseTo(opened, 2);
    await user.keyboard("-");
    expect(zoom()).toBeCloseTo(opened / 1.25, 2);
    // Fit: the whole tree in the 800×600 view.
    await user.click(screen.getByTestId("fork-tree-fit"));
    const fitted = zoom();
    expect(fitted).toBeLessThan(opened);
    await user.keyboard("+0");
    expect(zoom()).toBeCloseTo(fitted, 3);
    // Ctrl+wheel zooms in at the pointer; a plain wheel pans.
    fireEvent.wheel(viewport(), { deltaY: -100, ctrlKey: true, clientX: 100, clientY: 100 });
    expect(zoom()).toBeGreaterThan(fitted);
    const before = canvasTransform();
    fireEvent.wheel(viewport(), { deltaY: 120 });
    expect(canvasTransform()).not.toBe(before);
    expect(canvasTransform()).toMatch(/^translate\(-?[\d.]+px, -?[\d.]+px\) scale\([\d.]+\)$/);
  });

  it("dragging the background pans; the minimap shows the tree and a click there moves the view", async () => {
    setup(wide(12));
    await waitFor(() => expect(screen.getByTestId("fork-tree-minimap")).toBeInTheDocument());
    const mm = screen.getByTestId("fork-tree-minimap");
    expect(mm.querySelectorAll(".ft-mm-nodes rect")).toHaveLength(37);
    const frame = screen.getByTestId("fork-tree-minimap-view");
    const y0 = Number(frame.getAttribute("y"));
    // A click low on the minimap centres the view down there.
    const svg = mm.querySelector("svg")!;
    fireEvent.pointerDown(svg, { button: 0, pointerId: 1, clientX: 10, clientY: Number(svg.getAttribute("height")) - 2 });
    fireEvent.pointerUp(svg, { pointerId: 1 });
    await waitFor(() => expect(Number(screen.getByTestId("fork-tree-minimap-view").getAttribute("y"))).toBeGreaterThan(y0));
    // Dragging the background moves the canvas by as much.
    const before = canvasTransform();
    fireEvent.pointerDown(viewport(), { button: 0, pointerId: 2, clientX: 300, clientY: 300 });
    fireEvent.pointerMove(viewport(), { pointerId: 2, clientX: 340, clientY: 250 });
    fireEvent.pointerUp(viewport(), { pointerId: 2 });
    const [bx, by] = before.match(/-?[\d.]+/g)!.map(Number);
    const [ax, ay] = canvasTransform().match(/-?[\d.]+/g)!.map(Number);
    expect(ax! - bx!).toBeCloseTo(40);
    expect(ay! - by!).toBeCloseTo(-50);
    // The minimap can be hidden.
    fireEvent.click(screen.getByTestId("fork-tree-minimap-toggle"));
    expect(screen.queryByTestId("fork-tree-minimap")).not.toBeInTheDocument();
  });

  it("a collapsed session shows how many sessions it hides; a click on the count brings them back", async () => {
    const roots = wide(2);
    const fork = roots[0]!.children[0]!;
    const { user } = setup(roots);
    await waitFor(() => expect(drawn()).toHaveLength(7));
    await user.click(within(nodeEl(roots[0]!.id)).getByTestId("fork-node-collapse"));
    expect(drawn()).toEqual([roots[0]!.id]);
    const count = screen.getByTestId("fork-node-hidden");
    expect(count).toHaveTextContent("+6");
    expect(count).toHaveAccessibleName(/6 hidden sessions below/);
    expect(nodeEl(roots[0]!.id)).toHaveClass("collapsed");
    await user.click(count);
    expect(drawn()).toHaveLength(7);
    expect(screen.queryByTestId("fork-node-hidden")).not.toBeInTheDocument();
    expect(nodeEl(fork.id)).toBeInTheDocument();
  });

  it("a deep tree is laid out top to bottom (↓ goes to the fork); the toggle switches to left to right", async () => {
    const roots = chain(7);
    const first = roots[0]!.id;
    const second = roots[0]!.children[0]!.id;
    const { user } = setup(roots, first);
    await waitFor(() => expect(drawn()).toHaveLength(7));
    expect(viewport()).toHaveAttribute("data-dir", "TB");
    const y = (id: string) => Number(nodeEl(id).getAttribute("data-y"));
    const x = (id: string) => Number(nodeEl(id).getAttribute("data-x"));
    expect(y(second)).toBeGreaterThanOrEqual(y(first) + NODE_H);
    expect(x(second)).toBe(x(first));
    await waitFor(() => expect(screen.getByTestId("fork-tree")).toHaveFocus());
    await user.keyboard("{ArrowDown}");
    expect(nodeEl(second)).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{ArrowUp}");
    expect(nodeEl(first)).toHaveAttribute("aria-selected", "true");
    await user.click(screen.getByTestId("fork-tree-direction"));
    expect(viewport()).toHaveAttribute("data-dir", "LR");
    expect(x(second)).toBeGreaterThan(x(first));
    expect(y(second)).toBe(y(first));
    await user.click(screen.getByTestId("fork-tree-direction"));
    expect(viewport()).toHaveAttribute("data-dir", "TB");
  });

  it("a shallow tree stays left to right", async () => {
    setup(chain(3));
    await waitFor(() => expect(drawn()).toHaveLength(3));
    expect(viewport()).toHaveAttribute("data-dir", "LR");
  });

  it("500 sessions: only those near the view are in the DOM, and the selected one always is", async () => {
    const roots = wide(166);
    const last = roots[0]!.children[165]!.children[1]!.id;
    const { user } = setup(roots, last);
    await waitFor(() => expect(screen.getByTestId("fork-tree-count")).toHaveTextContent("499 sessions"));
    await waitFor(() => expect(drawn().length).toBeGreaterThan(0));
    expect(drawn().length).toBeLessThan(120);
    expect(drawn()).toContain(last);
    expect(nodeEl(last)).toHaveAttribute("aria-selected", "true");
    // Home selects the root: the view goes there and it is drawn.
    screen.getByTestId("fork-tree").focus();
    await user.keyboard("{Home}");
    expect(drawn()).toContain(roots[0]!.id);
    expect(screen.getByTestId("fork-tree")).toHaveAttribute("aria-activedescendant", nodeEl(roots[0]!.id).id);
  });

  it("Fork on the selection bar forks the selected session and opens the fork", async () => {
    const roots = wide(1);
    const { user, requests, onOpenSession } = setup(roots, roots[0]!.id);
    await waitFor(() => expect(drawn()).toHaveLength(4));
    const bar = screen.getByTestId("fork-tree-selected");
    const fork = within(bar).getByTestId("sel-fork-node-fork");
    expect(fork).toHaveTextContent("Fork");
    await user.click(fork);
    await waitFor(() => expect(onOpenSession).toHaveBeenCalledWith("new-fork"));
    expect(requests).toContainEqual({ method: "POST", path: `/api/sessions/${roots[0]!.id}/fork`, body: { with_files: false } });
  });
});
