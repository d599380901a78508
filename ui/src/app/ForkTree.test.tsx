import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ForkTreeNode, SessionCompare as SessionCompareData, SessionSummary } from "../protocol/generated";
import { App } from "./App";
import { ForkTree, type ForkTreeProps } from "./ForkTree";
import { flatten, layoutTree, moveFrom, visibleNodes } from "./forkTreeModel";
import { fakePlatform, fakeTransport, Providers, type Handler } from "./testing";

const HOUR = 3_600_000;

function node(id: string, title: string, over: Partial<ForkTreeNode> = {}, children: ForkTreeNode[] = []): ForkTreeNode {
  return {
    id,
    title,
    slug: title.toLowerCase().replace(/\W+/g, "-"),
    agent: "build",
    status: "idle",
    directory: "/proj",
    project_id: "p",
    created_at: 1,
    updated_at: Date.now() - 2 * HOUR,
    version: "0.1",
    message_count: 10,
    files_changed: 2,
    cost_usd: 0.0123,
    own_worktree: false,
    children,
    ...over,
  };
}

function forkOf(parent: string, id: string, title: string, excerpt: string, over: Partial<ForkTreeNode> = {}, children: ForkTreeNode[] = []) {
  return node(
    id,
    title,
    {
      parent_id: parent,
      fork: { source_session_id: parent, source_message_id: `msg-of-${id}`, forked_at: 1, fork_depth: 1 },
      fork_excerpt: excerpt,
      ...over,
    },
    children,
  );
}

// root ─┬─ fork-a ── fork-a1 (busy)
//       └─ fork-b (own worktree)
// other
const tree = (): ForkTreeNode[] => [
  node("root", "Fix the parser", { agent: "plan" }, [
    forkOf("root", "fa", "Fix the parser (fork)", "Option A: rewrite the tokenizer", { message_count: 14, files_changed: 1, cost_usd: 0.5 }, [
      forkOf("fa", "fa1", "Fix the parser (fork.1)", "Now add the tests", { status: "busy" }),
    ]),
    forkOf("root", "fb", "Fix the parser (fork 2)", "Option B: keep the tokenizer and patch it", {
      own_worktree: true,
      worktree: "fork-otter",
    }),
  ]),
  node("other", "Write the docs", { cost_usd: 0 }),
];

function setup(handler: Handler = () => undefined, props: Partial<ForkTreeProps> = {}, roots = tree()) {
  const fake = fakeTransport((method, path, body) => {
    if (method === "GET" && path.startsWith("/api/sessions/tree?")) return roots;
    return handler(method, path, body);
  });
  const callbacks = { onBack: vi.fn(), onOpenSession: vi.fn(), onCompare: vi.fn() };
  render(
    <Providers transport={fake.transport}>
      <ForkTree directory="/proj" currentId="fa" {...callbacks} {...props} />
    </Providers>,
  );
  return { ...fake, ...callbacks, user: userEvent.setup() };
}

const nodeEl = (id: string) => document.querySelector<HTMLElement>(`[data-testid="fork-node"][data-session-id="${id}"]`);
const drawn = () => screen.queryAllByTestId("fork-node").map((n) => n.getAttribute("data-session-id"));
const activeId = () => {
  const tree = screen.getByTestId("fork-tree");
  const id = tree.getAttribute("aria-activedescendant");
  return id ? document.getElementById(id)?.getAttribute("data-session-id") : null;
};

describe("fork tree", () => {
  it("asks for the project's tree and lays it out with dagre: forks right of their parent, roots stacked", async () => {
    const { requests } = setup();
    await waitFor(() => expect(drawn()).toHaveLength(5));
    expect(requests[0]).toEqual({ method: "GET", path: "/api/sessions/tree?project=%2Fproj&archived=false", body: undefined });
    const x = (id: string) => Number(nodeEl(id)!.getAttribute("data-x"));
    const y = (id: string) => Number(nodeEl(id)!.getAttribute("data-y"));
    expect(x("fa")).toBeGreaterThan(x("root"));
    expect(x("fa1")).toBeGreaterThan(x("fa"));
    expect(x("fb")).toBe(x("fa"));
    expect(y("fa")).not.toBe(y("fb"));
    expect(x("other")).toBe(x("root"));
    expect(y("other")).toBeGreaterThan(y("root"));
    expect(nodeEl("fa")!.style.transform).toMatch(/^translate\(\d+(\.\d+)?px, \d+(\.\d+)?px\)$/);
    // One edge per fork, each with a route and its fork point as the label.
    expect(screen.getAllByTestId("fork-edge-path")).toHaveLength(3);
    for (const p of screen.getAllByTestId("fork-edge-path")) expect(p.getAttribute("d")).toMatch(/^M[\d.]+,[\d.]+ /);
    const edges = screen.getAllByTestId("fork-edge");
    expect(edges.map((e) => `${e.getAttribute("data-from")}>${e.getAttribute("data-to")}`).sort()).toEqual([
      "fa>fa1",
      "root>fa",
      "root>fb",
    ]);
    const toFb = edges.find((e) => e.getAttribute("data-to") === "fb")!;
    // The whole fork point (cut to the edge by CSS, unfolded on hover or when the fork is selected).
    expect(toFb).toHaveTextContent("Option B: keep the tokenizer and patch it");
    expect(toFb.getAttribute("title")).toContain("Option B: keep the tokenizer and patch it");
    expect(screen.getByTestId("fork-tree")).toHaveAttribute("role", "tree");
    expect(nodeEl("fa1")).toHaveAttribute("aria-level", "3");
  });

  it("each node shows title, agent, messages, files, cost, last activity and its badges; the open session is marked", async () => {
    setup();
    await waitFor(() => expect(drawn()).toHaveLength(5));
    const root = within(nodeEl("root")!);
    expect(nodeEl("root")).toHaveTextContent("Fix the parser");
    expect(root.getByText("plan")).toBeInTheDocument();
    expect(root.getByTestId("fork-node-messages")).toHaveTextContent("10 msg");
    expect(root.getByTestId("fork-node-files")).toHaveTextContent("2 files");
    expect(root.getByTestId("fork-node-cost")).toHaveTextContent("$0.0123");
    expect(root.getByTestId("fork-node-updated")).toHaveTextContent("2 h ago");
    expect(within(nodeEl("fa")!).getByTestId("fork-node-files")).toHaveTextContent("1 file");
    expect(within(nodeEl("other")!).getByTestId("fork-node-cost")).toHaveTextContent("$0");
    expect(within(nodeEl("fb")!).getByTestId("fork-node-worktree")).toHaveTextContent("fork-otter");
    expect(within(nodeEl("fa")!).queryByTestId("fork-node-worktree")).not.toBeInTheDocument();
    expect(within(nodeEl("fa1")!).getByTestId("fork-node-busy")).toHaveTextContent("running");
    expect(within(nodeEl("root")!).queryByTestId("fork-node-busy")).not.toBeInTheDocument();
    expect(nodeEl("fa")).toHaveAttribute("aria-current", "true");
    expect(nodeEl("fa")).toHaveClass("current");
    expect(nodeEl("root")).not.toHaveAttribute("aria-current");
    expect(nodeEl("fb")!.getAttribute("aria-label")).toContain("own worktree");
    expect(screen.getByTestId("fork-tree-count")).toHaveTextContent("5 sessions");
  });

  it("keyboard: arrows move parent/child/neighbours, Enter opens, Space collapses, → expands", async () => {
    const { user, onOpenSession } = setup(undefined, { currentId: null, focus: "root" });
    await waitFor(() => expect(drawn()).toHaveLength(5));
    const treeEl = screen.getByTestId("fork-tree");
    await waitFor(() => expect(treeEl).toHaveFocus());
    expect(activeId()).toBe("root");
    await user.keyboard("{ArrowRight}");
    const firstChild = activeId();
    expect(["fa", "fb"]).toContain(firstChild);
    await user.keyboard("{ArrowDown}");
    const second = activeId();
    // The other fork of the root (the one below the first).
    expect(second).toBe(firstChild === "fa" ? "fb" : "fa");
    await user.keyboard("{ArrowUp}");
    expect(activeId()).toBe(firstChild);
    await user.keyboard("{ArrowLeft}");
    expect(activeId()).toBe("root");
    expect(nodeEl("root")).toHaveAttribute("aria-selected", "true");
    await user.keyboard("{ArrowDown}");
    expect(activeId()).toBe("other");
    await user.keyboard("{Home}");
    expect(activeId()).toBe("root");
    await user.keyboard("{Enter}");
    expect(onOpenSession).toHaveBeenCalledWith("root");
    // Space collapses the subtree (+/− are the zoom), → on a collapsed session brings it back.
    await user.keyboard(" ");
    expect(drawn()).toEqual(["root", "other"]);
    expect(nodeEl("root")).toHaveAttribute("aria-expanded", "false");
    await user.keyboard("{ArrowRight}");
    expect(drawn()).toHaveLength(5);
    expect(nodeEl("root")).toHaveAttribute("aria-expanded", "true");
    expect(activeId()).toBe("root");
    await user.keyboard(" ");
    await user.keyboard(" ");
    expect(drawn()).toHaveLength(5);
  });

  it("clicking a node opens it; the collapse toggle hides and shows the subtree", async () => {
    const { user, onOpenSession } = setup();
    await waitFor(() => expect(drawn()).toHaveLength(5));
    await user.click(within(nodeEl("fb")!).getByTitle("Fix the parser (fork 2)"));
    expect(onOpenSession).toHaveBeenCalledWith("fb");
    const toggle = within(nodeEl("fa")!).getByTestId("fork-node-collapse");
    expect(toggle).toHaveAccessibleName("Collapse 1 forks");
    await user.click(toggle);
    expect(drawn()).not.toContain("fa1");
    expect(drawn()).toContain("fa");
    expect(within(nodeEl("fa")!).getByTestId("fork-node-collapse")).toHaveTextContent("1");
    expect(within(nodeEl("fa")!).getByTestId("fork-node-collapse")).toHaveAccessibleName("Expand 1 forks");
    expect(onOpenSession).toHaveBeenCalledTimes(1);
    await user.click(within(nodeEl("fa")!).getByTestId("fork-node-collapse"));
    expect(drawn()).toContain("fa1");
  });

  it("search keeps the matching sessions and their ancestors, and marks the matches", async () => {
    const { user } = setup();
    await waitFor(() => expect(drawn()).toHaveLength(5));
    await user.type(screen.getByTestId("fork-tree-search"), "fork.1");
    await waitFor(() => expect(drawn()).toEqual(["root", "fa", "fa1"]));
    expect(nodeEl("fa1")).toHaveClass("match");
    expect(nodeEl("root")).not.toHaveClass("match");
    expect(screen.getByTestId("fork-tree-count")).toHaveTextContent("1 of 5 match");
    await user.clear(screen.getByTestId("fork-tree-search"));
    await user.type(screen.getByTestId("fork-tree-search"), "docs");
    await waitFor(() => expect(drawn()).toEqual(["other"]));
  });

  it("Show archived asks for the tree with archived=true", async () => {
    const { user, requests } = setup();
    await waitFor(() => expect(drawn()).toHaveLength(5));
    await user.click(screen.getByTestId("fork-tree-archived"));
    await waitFor(() =>
      expect(requests.map((r) => r.path)).toContain("/api/sessions/tree?project=%2Fproj&archived=true"),
    );
  });

  it("the edge label opens the parent at the fork point", async () => {
    const { user, onOpenSession } = setup();
    await waitFor(() => expect(drawn()).toHaveLength(5));
    const edge = screen.getAllByTestId("fork-edge").find((e) => e.getAttribute("data-to") === "fa1")!;
    await user.click(edge);
    expect(onOpenSession).toHaveBeenCalledWith("fa", "msg-of-fa1");
  });

  it("node menu: Compare with parent, Compare with… another node, Promote (forks only)", async () => {
    const { user, onCompare, requests } = setup((method, path) =>
      method === "POST" && path === "/api/sessions/fb/promote" ? { ...node("fb", "Fix the parser (fork 2)"), parent_id: null } : undefined,
    );
    await waitFor(() => expect(drawn()).toHaveLength(5));
    await user.click(within(nodeEl("fa1")!).getByTestId("fork-node-menu"));
    const menu = screen.getByRole("menu");
    expect(within(menu).getAllByRole("menuitem")[0]).toHaveFocus();
    await user.click(within(menu).getByText("Compare with parent"));
    expect(onCompare).toHaveBeenCalledWith("fa1", "fa");
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();

    // A root has nothing to compare with above it, and cannot be promoted.
    await user.click(within(nodeEl("root")!).getByTestId("fork-node-menu"));
    const rootMenu = screen.getByRole("menu");
    expect(within(rootMenu).getByText("Compare with parent").closest("[role='menuitem']")).toHaveAttribute(
      "aria-disabled",
      "true",
    );
    expect(within(rootMenu).getByText("Promote").closest("[role='menuitem']")).toHaveAttribute("aria-disabled", "true");
    // Compare with…: pick the second session.
    await user.click(within(rootMenu).getByText("Compare with…"));
    expect(screen.getByTestId("fork-tree-picking")).toHaveTextContent("Fix the parser");
    await user.click(within(nodeEl("other")!).getByText("Write the docs"));
    expect(onCompare).toHaveBeenLastCalledWith("root", "other");
    expect(screen.queryByTestId("fork-tree-picking")).not.toBeInTheDocument();

    await user.click(within(nodeEl("fb")!).getByTestId("fork-node-menu"));
    await user.click(within(screen.getByRole("menu")).getByText("Promote"));
    await waitFor(() => expect(requests).toContainEqual({ method: "POST", path: "/api/sessions/fb/promote", body: undefined }));
    // The tree is fetched again after the promote.
    await waitFor(() => expect(requests.filter((r) => r.path.startsWith("/api/sessions/tree")).length).toBe(2));
  });

  it("the node menu works from the keyboard (Shift+F10), and Escape gives focus back to the tree", async () => {
    const { user, onCompare } = setup(undefined, { focus: "fa" });
    await waitFor(() => expect(drawn()).toHaveLength(5));
    await waitFor(() => expect(screen.getByTestId("fork-tree")).toHaveFocus());
    await user.keyboard("{Shift>}{F10}{/Shift}");
    const menu = screen.getByRole("menu");
    expect(within(menu).getByText("Open").closest("[role='menuitem']")).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("menu")).not.toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId("fork-tree")).toHaveFocus());
    // Open, Fork, Compare with parent.
    await user.keyboard("{Shift>}{F10}{/Shift}{ArrowDown}{ArrowDown}{Enter}");
    expect(onCompare).toHaveBeenCalledWith("fa", "root");
  });

  it("refreshes live when a session is created or updated", async () => {
    const fake = fakeTransport((method, path) => (path.startsWith("/api/sessions/tree") ? tree() : undefined));
    render(
      <Providers transport={fake.transport}>
        <ForkTree directory="/proj" currentId={null} onBack={vi.fn()} onOpenSession={vi.fn()} onCompare={vi.fn()} />
      </Providers>,
    );
    await waitFor(() => expect(drawn()).toHaveLength(5));
    const before = fake.requests.length;
    fake.emit({
      type: "session_updated",
      session: { id: "new", title: "t", slug: "t", directory: "/proj", project_id: "p", status: "idle", created_at: 1, updated_at: 1, version: "0.1" },
    });
    await waitFor(() => expect(fake.requests.length).toBe(before + 1));
    expect(fake.requests.at(-1)!.path).toBe("/api/sessions/tree?project=%2Fproj&archived=false");
  });
});

describe("fork tree model", () => {
  it("moves spatially and stays put at the edges", () => {
    const flat = flatten(tree());
    const { ids } = visibleNodes(flat, new Set(), "");
    const layout = layoutTree(flat, ids);
    expect(moveFrom(flat, layout, ids, "root", "parent")).toBe("root");
    expect(moveFrom(flat, layout, ids, "fa1", "child")).toBe("fa1");
    expect(moveFrom(flat, layout, ids, "fa1", "parent")).toBe("fa");
    expect(moveFrom(flat, layout, ids, "fa", "child")).toBe("fa1");
    expect(moveFrom(flat, layout, ids, "root", "last")).toBe("other");
    expect(layout.width).toBeGreaterThan(0);
    expect(flat.byId.get("root")!.descendants).toBe(3);
  });

  it("a collapsed session hides everything below it; a search shows a match inside it", () => {
    const flat = flatten(tree());
    expect(visibleNodes(flat, new Set(["root"]), "").ids).toEqual(["root", "other"]);
    expect(visibleNodes(flat, new Set(["root"]), "FORK 2").ids).toEqual(["root", "fb"]);
  });
});

describe("compare from the fork tree (app)", () => {
  const summary = (id: string, title: string, over: Partial<SessionSummary> = {}): SessionSummary => ({
    id,
    title,
    slug: id,
    directory: "/proj",
    project_id: "p",
    status: "idle",
    created_at: 1,
    updated_at: Date.now(),
    version: "0.1",
    message_count: 2,
    ...over,
  });
  const changes = (id: string, title: string, worktree?: string): SessionCompareData["left"] => ({
    session_id: id,
    title,
    worktree: worktree ?? null,
    files: [
      {
        file: `${id}.txt`,
        status: "added",
        additions: 1,
        deletions: 0,
        before: "",
        after: `from ${id}\n`,
        hunks: [
          { startBefore: 0, linesBefore: 0, startAfter: 1, linesAfter: 1, lines: [{ type: "add", content: `from ${id}`, lineNumber: 1, newLine: 1 }] },
        ],
      },
    ],
    stats: {
      filesChanged: 1,
      filesAdded: 1,
      filesDeleted: 0,
      filesModified: 0,
      totalAdditions: 1,
      totalDeletions: 0,
      estimatedLOCImpact: 1,
    },
  });

  function app(compare: SessionCompareData) {
    const fake = fakeTransport((method, path) => {
      if (path === "/api/info") return { version: "0.1", demo: false, home: "/h", project: "/proj" };
      if (path.startsWith("/api/sessions?")) return [summary("root", "Fix the parser"), summary("fa", "Fix the parser (fork)")];
      if (path.startsWith("/api/sessions/tree")) return tree();
      if (path.startsWith("/api/sessions/fa/compare")) return compare;
      if (path.startsWith("/api/worktrees/compare")) return undefined;
      if (path.startsWith("/api/worktrees")) return [];
      if (path.endsWith("/timeline")) return [];
      if (method === "GET" && path.startsWith("/api/sessions/")) return { session: summary("root", "Fix the parser"), agent: "build", messages: [] };
      if (path.startsWith("/api/agents")) return [];
      if (path.endsWith("/timeline")) return [];
      return undefined;
    });
    render(<App transport={fake.transport} platform={fakePlatform} />);
    return { ...fake, user: userEvent.setup() };
  }

  it("Compare with parent calls the compare route and shows both sides' changes", async () => {
    const { user, requests } = app({ left: changes("fa", "Fix the parser (fork)"), right: changes("root", "Fix the parser"), fork_point: "m123456789" });
    await user.click(await screen.findByTestId("open-fork-tree-project"));
    await waitFor(() => expect(drawn()).toHaveLength(5));
    await user.click(within(nodeEl("fa")!).getByTestId("fork-node-menu"));
    await user.click(within(screen.getByRole("menu")).getByText("Compare with parent"));
    await waitFor(() =>
      expect(requests).toContainEqual({ method: "GET", path: "/api/sessions/fa/compare?with=root", body: undefined }),
    );
    const left = await screen.findByTestId("session-compare-left");
    expect(left).toHaveTextContent("Fix the parser (fork)");
    expect((await within(left).findAllByText("fa.txt")).length).toBeGreaterThan(0);
    expect(within(left).queryByText("root.txt")).not.toBeInTheDocument();
    const right = screen.getByTestId("session-compare-right");
    expect((await within(right).findAllByText("root.txt")).length).toBeGreaterThan(0);
    expect(screen.getByTestId("session-compare")).toHaveTextContent("fork point m1234567");
  });

  it("when both sides have their own worktree, it opens the worktree comparison for them", async () => {
    const { user, requests } = app({ left: changes("fa", "A", "wt-a"), right: changes("root", "B", "wt-b") });
    await user.click(await screen.findByTestId("open-fork-tree-project"));
    await waitFor(() => expect(drawn()).toHaveLength(5));
    fireEvent.click(within(nodeEl("fa")!).getByTestId("fork-node-menu"));
    await user.click(within(screen.getByRole("menu")).getByText("Compare with parent"));
    await waitFor(() =>
      expect(requests.map((r) => r.path)).toContain("/api/worktrees/compare?directory=%2Fproj&a=wt-a&b=wt-b&check=false&hunks=true"),
    );
    expect(screen.getByTestId("compare")).toBeInTheDocument();
    expect(screen.getByTestId("compare-back")).toHaveTextContent("Fork tree");
  });
});
