import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from "@dagrejs/dagre";
import type { ForkTreeNode } from "../protocol/generated";

/** One session of the tree with where it sits. */
export interface FlatNode {
  node: ForkTreeNode;
  parent: string | null;
  depth: number;
  /** Index among its parent's children (or among the roots), and how many there are. */
  index: number;
  siblings: number;
  /** All sessions below it. */
  descendants: number;
}

export interface Flat {
  byId: Map<string, FlatNode>;
  /** Pre-order (parents before children): the order of the tree items for screen readers. */
  order: string[];
}

export function flatten(roots: ForkTreeNode[]): Flat {
  const byId = new Map<string, FlatNode>();
  const order: string[] = [];
  const walk = (node: ForkTreeNode, parent: string | null, depth: number, index: number, siblings: number): number => {
    const entry: FlatNode = { node, parent, depth, index, siblings, descendants: 0 };
    byId.set(node.id, entry);
    order.push(node.id);
    let below = 0;
    node.children.forEach((c, i) => {
      below += 1 + walk(c, node.id, depth + 1, i, node.children.length);
    });
    entry.descendants = below;
    return below;
  };
  roots.forEach((r, i) => walk(r, null, 0, i, roots.length));
  return { byId, order };
}

export interface Visible {
  /** Sessions drawn, in pre-order. */
  ids: string[];
  /** Sessions whose title (or slug) matches the search. */
  matches: Set<string>;
}

/**
 * What is drawn: without a search, everything except what lies below a
 * collapsed session; with one, the matching sessions and their ancestors
 * (a match inside a collapsed subtree is shown, the search wins).
 */
export function visibleNodes(flat: Flat, collapsed: ReadonlySet<string>, query: string): Visible {
  const q = query.trim().toLowerCase();
  const matches = new Set<string>();
  if (!q) {
    const ids: string[] = [];
    const hidden = new Set<string>();
    for (const id of flat.order) {
      const f = flat.byId.get(id)!;
      if (f.parent && (hidden.has(f.parent) || collapsed.has(f.parent))) {
        hidden.add(id);
        continue;
      }
      ids.push(id);
    }
    return { ids, matches };
  }
  const keep = new Set<string>();
  for (const id of flat.order) {
    const n = flat.byId.get(id)!.node;
    if (n.title.toLowerCase().includes(q) || n.slug.toLowerCase().includes(q)) {
      matches.add(id);
      for (let a: string | null = id; a && !keep.has(a); a = flat.byId.get(a)?.parent ?? null) keep.add(a);
    }
  }
  return { ids: flat.order.filter((id) => keep.has(id)), matches };
}

export interface Point {
  x: number;
  y: number;
}
export interface PlacedNode {
  id: string;
  /** Top-left corner. */
  x: number;
  y: number;
}
export interface PlacedEdge {
  from: string;
  to: string;
  /** The route dagre chose, as an SVG path. */
  path: string;
  /** Centre of the label box (the fork point). */
  label: Point;
}
export interface TreeLayout {
  nodes: Map<string, PlacedNode>;
  edges: PlacedEdge[];
  width: number;
  height: number;
  /** LR: parents left, forks right; TB: parents above, forks below. */
  dir: Direction;
}

/** Left to right (the default) or top to bottom (deep trees). */
export type Direction = "LR" | "TB";
/** Past this many levels (a root and its forks of forks), "auto" lays the tree out top to bottom. */
export const DEEP_LEVELS = 5;

/** The deepest drawn level (1 = roots only). */
export function levels(flat: Flat, ids: string[]): number {
  let max = 0;
  for (const id of ids) max = Math.max(max, (flat.byId.get(id)?.depth ?? 0) + 1);
  return max;
}

/** The direction to lay out in: the chosen one, or by depth. */
export function directionFor(choice: Direction | "auto", depth: number): Direction {
  if (choice !== "auto") return choice;
  return depth > DEEP_LEVELS ? "TB" : "LR";
}

export const NODE_W = 236;
export const NODE_H = 100;
export const LABEL_W = 150;
export const LABEL_H = 22;

/**
 * Lays the drawn sessions out with dagre (a layered DAG layout: parents left
 * and forks to the right, or parents above and forks below; each edge with
 * room for its fork-point label).
 */
export function layoutTree(flat: Flat, ids: string[], dir: Direction = "LR"): TreeLayout {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>();
  const tb = dir === "TB";
  g.setGraph({ rankdir: dir, nodesep: tb ? 24 : 14, ranksep: tb ? 20 : 36, edgesep: 8, marginx: 16, marginy: 16, ranker: "tight-tree" });
  g.setDefaultEdgeLabel(() => ({}));
  const drawn = new Set(ids);
  for (const id of ids) g.setNode(id, { width: NODE_W, height: NODE_H });
  for (const id of ids) {
    const parent = flat.byId.get(id)?.parent;
    if (parent && drawn.has(parent)) g.setEdge(parent, id, { width: LABEL_W, height: LABEL_H, labelpos: "c" });
  }
  dagre.layout(g, { disableOptimalOrderHeuristic: true });
  const nodes = new Map<string, PlacedNode>();
  for (const id of ids) {
    const n = g.node(id);
    nodes.set(id, { id, x: (n.x ?? 0) - NODE_W / 2, y: (n.y ?? 0) - NODE_H / 2 });
  }
  const edges: PlacedEdge[] = g.edges().map((e) => {
    const label = g.edge(e);
    const points = label.points ?? [];
    return { from: e.v, to: e.w, path: smoothPath(points), label: { x: label.x ?? 0, y: label.y ?? 0 } };
  });
  const graph = g.graph();
  return { nodes, edges, width: Math.ceil(graph.width ?? 0), height: Math.ceil(graph.height ?? 0), dir };
}

/** A path through dagre's points, rounded at the bends (quadratic curves through the midpoints). */
export function smoothPath(points: Point[]): string {
  if (points.length === 0) return "";
  const f = (n: number) => Math.round(n * 10) / 10;
  const [first, ...rest] = points;
  let d = `M${f(first!.x)},${f(first!.y)}`;
  if (rest.length === 0) return d;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i]!;
    const q = rest[i + 1]!;
    d += ` Q${f(p.x)},${f(p.y)} ${f((p.x + q.x) / 2)},${f((p.y + q.y) / 2)}`;
  }
  const last = rest[rest.length - 1]!;
  return `${d} L${f(last.x)},${f(last.y)}`;
}

export type Move = "parent" | "child" | "up" | "down" | "first" | "last";

/**
 * Keyboard moves in the drawn tree: parent / child along the layout's
 * direction (the child nearest across it), up/down = the nearest session
 * before/after in the same column (LR) or row (TB): siblings, then cousins.
 */
export function moveFrom(flat: Flat, layout: TreeLayout, ids: string[], from: string, move: Move): string {
  // Along = the axis parents → forks; across = the other one.
  const tb = layout.dir === "TB";
  const along = (p: PlacedNode) => (tb ? p.y : p.x);
  const across = (p: PlacedNode) => (tb ? p.x : p.y);
  if (move === "first") return ids[0] ?? from;
  if (move === "last") return ids[ids.length - 1] ?? from;
  const here = layout.nodes.get(from);
  if (!here) return ids[0] ?? from;
  if (move === "parent") {
    const p = flat.byId.get(from)?.parent;
    return p && layout.nodes.has(p) ? p : from;
  }
  if (move === "child") {
    const kids = flat.byId.get(from)?.node.children.map((c) => c.id).filter((id) => layout.nodes.has(id)) ?? [];
    let best: string | null = null;
    let dist = Infinity;
    for (const id of kids) {
      const d = Math.abs(across(layout.nodes.get(id)!) - across(here));
      if (d < dist) {
        dist = d;
        best = id;
      }
    }
    return best ?? from;
  }
  const sign = move === "down" ? 1 : -1;
  let best: string | null = null;
  let bestD = Infinity;
  for (const id of ids) {
    const n = layout.nodes.get(id)!;
    if (Math.abs(along(n) - along(here)) > 1) continue;
    const d = (across(n) - across(here)) * sign;
    if (d > 0 && d < bestD) {
      bestD = d;
      best = id;
    }
  }
  return best ?? from;
}

/** The fork point's text for an edge label (the whole text is in the tooltip). */
export function shortExcerpt(text: string | null | undefined, max = 36): string {
  const t = (text ?? "").replace(/\s+/g, " ").trim();
  if (!t) return "fork point";
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** A tree node as the server may send it: `first_prompt` is not in the protocol yet (see forkLine). */
type WithFirstPrompt = ForkTreeNode & { first_prompt?: string | null };

/**
 * The second line that tells a fork from its siblings (they share the title
 * "… (fork)"): its first new prompt (the first user message after the fork
 * point) when the tree carries it, else the fork point's text; none for a root.
 */
export function forkLine(n: ForkTreeNode): { kind: "prompt" | "point"; text: string } | null {
  const prompt = (n as WithFirstPrompt).first_prompt?.replace(/\s+/g, " ").trim();
  if (prompt) return { kind: "prompt", text: prompt };
  if (!n.fork) return null;
  const point = (n.fork_excerpt ?? "").replace(/\s+/g, " ").trim();
  return point ? { kind: "point", text: point } : null;
}
