import { useCallback, useDeferredValue, useEffect, useEffectEvent, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { ForkTreeNode } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { baseName } from "../lib/format";
import { useServices, useToast } from "./context";
import "../styles/forkTree.css";
import type { MenuItem } from "./MenuButton";
import { EdgeLabels } from "./forkTree/EdgeLabels";
import { ForkTreeHeader, PickingBanner } from "./forkTree/ForkTreeHeader";
import { SelectionBar } from "./forkTree/SelectionBar";
import { TreeNode } from "./forkTree/TreeNode";
import { HiddenCounts } from "./forkTree/HiddenCounts";
import { Minimap } from "./forkTree/Minimap";
import { useViewport } from "./forkTree/useViewport";
import { ViewControls } from "./forkTree/ViewControls";
import { centreOn, cullNodes, fitView, fitZoom, OPEN_MIN_ZOOM, overflows, revealNode } from "./forkTree/viewport";
import {
  directionFor,
  flatten,
  layoutTree,
  levels,
  moveFrom,
  visibleNodes,
  type Direction,
  type FlatNode,
  type Move,
} from "./forkTreeModel";

/** The arrows follow the layout: towards the parent, towards the forks, and along a rank. */
const KEY_MOVES: Record<Direction, Record<string, Move>> = {
  LR: { ArrowLeft: "parent", ArrowRight: "child", ArrowUp: "up", ArrowDown: "down", Home: "first", End: "last" },
  TB: { ArrowUp: "parent", ArrowDown: "child", ArrowLeft: "up", ArrowRight: "down", Home: "first", End: "last" },
};
/** Past this many sessions the minimap shows by itself (and whenever the tree overflows the view). */
const MINIMAP_AT = 10;

export interface ForkTreeProps {
  directory: string;
  /** The session open in the conversation view (marked). */
  currentId: string | null;
  /** The session selected first (`/forks`, the header's "Fork tree"). */
  focus?: string;
  onBack: () => void;
  /** Opens a session, optionally scrolled to one of its messages. */
  onOpenSession: (id: string, messageId?: string) => void;
  /** Two sessions' changes side by side (or their worktrees' comparison). */
  onCompare: (left: string, right: string) => void;
}

/**
 * The project's sessions as a graph of forks (laid out by dagre, drawn as
 * positioned HTML over an SVG of the edges, in a pan-and-zoom viewport with
 * a minimap; only the sessions in and near the view are in the DOM): open,
 * fork, compare, promote, collapse subtrees, search by title, show archived
 * sessions, left to right or top to bottom.
 */
export function ForkTree({ directory, currentId, focus, onBack, onOpenSession, onCompare }: ForkTreeProps) {
  const { api, transport } = useServices();
  const toast = useToast();
  const [roots, setRoots] = useState<ForkTreeNode[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [archived, setArchived] = useState(false);
  const [query, setQuery] = useState("");
  const deferredQuery = useDeferredValue(query);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  const [active, setActive] = useState<string | null>(focus ?? currentId);
  const [picking, setPicking] = useState<string | null>(null);
  /** The session whose actions menu is open (one at a time: the others show a plain button). */
  const [menuFor, setMenuFor] = useState<string | null>(null);
  const [dirChoice, setDirChoice] = useState<Direction | "auto">("auto");
  const [minimapChoice, setMinimapChoice] = useState<boolean | null>(null);
  const treeRef = useRef<HTMLDivElement>(null);
  const { ref: viewportRef, view, setView, size, dragging, zoomIn, zoomOut, fit: fitTo, pointer } = useViewport();
  const idBase = useId();
  const domId = useCallback((id: string) => `${idBase}-n-${id}`, [idBase]);

  const load = useCallback(
    (): Promise<void> =>
      api.forkTree(directory, archived).then(
        (tree) => {
          setRoots(tree);
          setError(null);
        },
        (e: unknown) => setError(errorMessage(e)),
      ),
    [api, directory, archived],
  );
  useEffect(() => {
    void load();
  }, [load]);

  // Live: a new fork, a promote, a rename or a finished turn (cost, files) refreshes the tree.
  const reload = useEffectEvent(() => void load());
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const stop = transport.subscribe(null, (e) => {
      if (e.type !== "session_updated" && e.type !== "turn_finished") return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => reload(), 150);
    });
    return () => {
      if (timer) clearTimeout(timer);
      stop();
    };
  }, [transport]);

  const flat = useMemo(() => flatten(roots ?? []), [roots]);
  const visible = useMemo(() => visibleNodes(flat, collapsed, deferredQuery), [flat, collapsed, deferredQuery]);
  const idsKey = visible.ids.join(" ");
  const depth = useMemo(() => levels(flat, idsKey ? idsKey.split(" ") : []), [flat, idsKey]);
  const dir = directionFor(dirChoice, depth);
  // The layout depends only on which sessions are drawn (and the direction): a search that draws
  // the same ones keeps it, and panning, zooming or selecting never lays out again.
  const layout = useMemo(() => layoutTree(flat, idsKey ? idsKey.split(" ") : [], dir), [flat, idsKey, dir]);
  const searching = deferredQuery.trim() !== "";

  // The active session stays a drawn one.
  const activeId = active && layout.nodes.has(active) ? active : (visible.ids[0] ?? null);
  const activeNode = activeId ? flat.byId.get(activeId) : undefined;

  const content = useMemo(() => ({ w: layout.width, h: layout.height }), [layout]);
  // Opened (and after a change of direction): the tree fitted in the view, zoomed out no further than
  // readable; the selected session in sight.
  const placedFor = useRef<string | null>(null);
  const revealedFor = useRef<string | null>(null);
  useEffect(() => {
    if (!roots || size.w <= 0 || layout.nodes.size === 0 || placedFor.current === layout.dir) return;
    placedFor.current = layout.dir;
    const at = activeId ? layout.nodes.get(activeId) : undefined;
    revealedFor.current = activeId;
    const v = fitView(content, size, Math.max(OPEN_MIN_ZOOM, fitZoom(content, size)));
    setView(at ? revealNode(v, size, at) : v);
  }, [roots, size, layout, content, activeId, setView]);
  // A session selected with the keys (or the search, a collapse) comes into view.
  useEffect(() => {
    if (!activeId || placedFor.current === null || revealedFor.current === activeId) return;
    revealedFor.current = activeId;
    const at = layout.nodes.get(activeId);
    if (at) setView((v) => revealNode(v, size, at));
  }, [activeId, layout, size, setView]);
  const fit = useCallback(() => fitTo(content), [fitTo, content]);
  const drawnIds = useMemo(() => cullNodes(visible.ids, layout, view, size, activeId), [visible.ids, layout, view, size, activeId]);
  const drawnSet = useMemo(() => new Set(drawnIds), [drawnIds]);
  const minimap = minimapChoice ?? (visible.ids.length >= MINIMAP_AT || overflows(layout, view, size));
  const edgePaths = useMemo(
    () =>
      layout.edges.map((e) => <path key={`${e.from}>${e.to}`} d={e.path} className="ft-edge" data-testid="fork-edge-path" />),
    [layout],
  );

  // Opened to show one session (`/forks`): keys work at once.
  const focused = useRef(false);
  useEffect(() => {
    if (focused.current || !roots) return;
    focused.current = true;
    treeRef.current?.focus({ preventScroll: true });
  }, [roots]);

  const toggle = useCallback((id: string) => {
    setCollapsed((c) => {
      const next = new Set(c);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }, []);

  const promote = useCallback(
    async (n: ForkTreeNode) => {
      try {
        const s = await api.promoteFork(n.id);
        toast(`Promoted: “${s.title}” is a top-level session now`, "info");
        await load();
      } catch (e) {
        toast(errorMessage(e));
      }
    },
    [api, load, toast],
  );

  const forkSession = useCallback(
    async (n: ForkTreeNode) => {
      try {
        const r = await api.fork(n.id, null, false);
        toast(`Forked: ${r.title}`, "info");
        onOpenSession(r.id);
      } catch (e) {
        toast(errorMessage(e));
      }
    },
    [api, onOpenSession, toast],
  );

  const pick = useCallback(
    (id: string) => {
      if (!picking) return false;
      if (id === picking) {
        toast("Pick another session to compare with.", "info");
        return true;
      }
      const left = picking;
      setPicking(null);
      onCompare(left, id);
      return true;
    },
    [onCompare, picking, toast],
  );

  const open = useCallback(
    (id: string) => {
      if (!pick(id)) onOpenSession(id);
    },
    [onOpenSession, pick],
  );

  const actionsFor = useCallback(
    (f: FlatNode): MenuItem[] => {
      const n = f.node;
      const parent = f.parent;
      const items: MenuItem[] = [
        { label: "Open", testId: "fork-node-open", onSelect: () => onOpenSession(n.id) },
        { label: "Fork", testId: "fork-node-fork", onSelect: () => void forkSession(n) },
      ];
      items.push({
        label: "Compare with parent",
        testId: "fork-node-compare-parent",
        disabled: parent ? false : "not a fork",
        onSelect: () => parent && onCompare(n.id, parent),
      });
      items.push({
        label: "Compare with…",
        testId: "fork-node-compare-with",
        onSelect: () => {
          setPicking(n.id);
          treeRef.current?.focus();
        },
      });
      items.push({
        label: "Promote",
        testId: "fork-node-promote",
        disabled: parent ? false : "already top-level",
        onSelect: () => void promote(n),
      });
      if (n.children.length > 0)
        items.push({
          label: collapsed.has(n.id) ? "Expand forks" : "Collapse forks",
          testId: "fork-node-toggle",
          onSelect: () => toggle(n.id),
        });
      return items;
    },
    [collapsed, forkSession, onCompare, onOpenSession, promote, toggle],
  );

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    // Zoom: + / − (with or without Ctrl/Cmd), 0 fits the tree in the view.
    if (e.key === "+" || e.key === "=" || e.key === "-" || e.key === "0") {
      e.preventDefault();
      if (e.key === "0") fit();
      else if (e.key === "-") zoomOut();
      else zoomIn();
      return;
    }
    if (!activeId) return;
    const f = flat.byId.get(activeId);
    const move = KEY_MOVES[layout.dir][e.key];
    if (move) {
      e.preventDefault();
      // Towards the forks of a collapsed session: it opens (as in any tree view).
      if (move === "child" && f && collapsed.has(activeId) && !searching) toggle(activeId);
      else setActive(moveFrom(flat, layout, visible.ids, activeId, move));
      return;
    }
    if (!f) return;
    if (e.key === "Enter") {
      e.preventDefault();
      open(activeId);
    } else if (e.key === " " && f.node.children.length > 0) {
      e.preventDefault();
      toggle(activeId);
    } else if (e.key === "Escape" && picking) {
      e.preventDefault();
      setPicking(null);
    } else if (e.key === "ContextMenu" || (e.key === "F10" && e.shiftKey)) {
      e.preventDefault();
      setMenuFor(activeId);
    }
  };

  const total = flat.order.length;
  const pickingTitle = picking ? flat.byId.get(picking)?.node.title : null;

  return (
    <div className="ft-view" data-testid="fork-tree-view">
      <ForkTreeHeader
        query={query}
        onQuery={setQuery}
        searching={searching}
        matches={visible.matches.size}
        total={total}
        archived={archived}
        onArchived={setArchived}
        onRefresh={() => void load()}
        onBack={onBack}
      />
      {picking && <PickingBanner title={pickingTitle} onCancel={() => setPicking(null)} />}
      {error && (
        <p className="error-text pad" role="alert">
          {error}
        </p>
      )}
      {!roots && !error && <p className="muted pad">Loading…</p>}
      {roots && total === 0 && (
        <p className="muted pad" data-testid="fork-tree-empty">
          No sessions in this project yet.
        </p>
      )}
      {roots && searching && visible.ids.length === 0 && <p className="muted pad">No session title matches.</p>}
      <div
        ref={viewportRef}
        className={`ft-viewport${dragging ? " dragging" : ""}`}
        data-testid="fork-tree-viewport"
        data-dir={layout.dir}
        data-zoom={view.k.toFixed(3)}
        {...pointer}
      >
        <div
          className="ft-canvas"
          data-testid="fork-tree-canvas"
          style={{ width: layout.width, height: layout.height, transform: `translate(${view.x}px, ${view.y}px) scale(${view.k})` }}
        >
          <svg className="ft-edges" width={layout.width} height={layout.height} aria-hidden="true" focusable="false">
            {edgePaths}
          </svg>
          <div
            ref={treeRef}
            className={`ft-tree${picking ? " picking" : ""}`}
            role="tree"
            tabIndex={0}
            aria-label={`Sessions and forks of ${baseName(directory)}`}
            aria-activedescendant={activeId ? domId(activeId) : undefined}
            data-testid="fork-tree"
            onKeyDown={onKeyDown}
          >
            {drawnIds.map((id) => {
              const f = flat.byId.get(id)!;
              const at = layout.nodes.get(id)!;
              return (
                <TreeNode
                  key={id}
                  f={f}
                  domId={domId(id)}
                  x={at.x}
                  y={at.y}
                  active={id === activeId}
                  current={id === currentId}
                  match={visible.matches.has(id)}
                  collapsed={collapsed.has(id) && !searching}
                  actionsFor={actionsFor}
                  menuOpen={menuFor === id}
                  onMenu={setMenuFor}
                  onOpen={open}
                  onToggle={toggle}
                  onActivate={setActive}
                  treeRef={treeRef}
                />
              );
            })}
          </div>
          <EdgeLabels layout={layout} flat={flat} drawn={drawnSet} activeId={activeId} onOpenSession={onOpenSession} />
          {!searching && <HiddenCounts layout={layout} flat={flat} drawn={drawnSet} collapsed={collapsed} onToggle={toggle} />}
        </div>
        <ViewControls
          k={view.k}
          dir={layout.dir}
          auto={dirChoice === "auto"}
          minimap={minimap}
          onZoomIn={zoomIn}
          onZoomOut={zoomOut}
          onFit={fit}
          onDirection={setDirChoice}
          onMinimap={setMinimapChoice}
        />
        {minimap && layout.nodes.size > 0 && (
          <Minimap
            layout={layout}
            view={view}
            viewport={size}
            activeId={activeId}
            currentId={currentId}
            onCentre={(x, y) => setView((v) => centreOn(v, size, x, y))}
          />
        )}
      </div>
      {activeNode && (
        <SelectionBar
          f={activeNode}
          parentTitle={activeNode.parent ? flat.byId.get(activeNode.parent)?.node.title : undefined}
          // eslint-disable-next-line react-hooks/refs -- builds the items only: treeRef is read when "Compare with…" is chosen
          actions={actionsFor(activeNode)}
          onOpenParent={() => {
            const fork = activeNode.node.fork;
            if (activeNode.parent) onOpenSession(activeNode.parent, fork?.source_message_id ?? undefined);
          }}
        />
      )}
    </div>
  );
}
