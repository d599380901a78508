import { useCallback, useDeferredValue, useEffect, useEffectEvent, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { ForkTreeNode } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { baseName } from "../lib/format";
import { useServices, useToast } from "./context";
import type { MenuItem } from "./MenuButton";
import { EdgeLabels } from "./forkTree/EdgeLabels";
import { ForkTreeHeader, PickingBanner } from "./forkTree/ForkTreeHeader";
import { SelectionBar } from "./forkTree/SelectionBar";
import { TreeNode } from "./forkTree/TreeNode";
import { flatten, layoutTree, moveFrom, visibleNodes, type FlatNode, type Move } from "./forkTreeModel";

const KEY_MOVES: Record<string, Move> = {
  ArrowLeft: "parent",
  ArrowRight: "child",
  ArrowUp: "up",
  ArrowDown: "down",
  Home: "first",
  End: "last",
};

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
 * positioned HTML over an SVG of the edges): open, compare, promote,
 * collapse subtrees, search by title, show archived sessions.
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
  /** The session whose ⋯ menu is open (one at a time: the others show a plain button). */
  const [menuFor, setMenuFor] = useState<string | null>(null);
  const treeRef = useRef<HTMLDivElement>(null);
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
  // The layout depends only on which sessions are drawn: a search that draws the same ones keeps it.
  const layout = useMemo(() => layoutTree(flat, idsKey ? idsKey.split(" ") : []), [flat, idsKey]);
  const searching = deferredQuery.trim() !== "";

  // The active session stays a drawn one.
  const activeId = active && layout.nodes.has(active) ? active : (visible.ids[0] ?? null);
  const activeNode = activeId ? flat.byId.get(activeId) : undefined;

  const scrolledTo = useRef<string | null>(null);
  useEffect(() => {
    if (!activeId || scrolledTo.current === activeId) return;
    scrolledTo.current = activeId;
    document.getElementById(domId(activeId))?.scrollIntoView?.({ block: "nearest", inline: "nearest" });
  }, [activeId, domId, layout]);

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
      const items: MenuItem[] = [{ label: "Open", testId: "fork-node-open", onSelect: () => onOpenSession(n.id) }];
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
    [collapsed, onCompare, onOpenSession, promote, toggle],
  );

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (!activeId) return;
    const move = KEY_MOVES[e.key];
    if (move) {
      e.preventDefault();
      setActive(moveFrom(flat, layout, visible.ids, activeId, move));
      return;
    }
    const f = flat.byId.get(activeId);
    if (!f) return;
    if (e.key === "Enter") {
      e.preventDefault();
      open(activeId);
    } else if ((e.key === "-" || e.key === "+" || e.key === "=") && f.node.children.length > 0) {
      e.preventDefault();
      const isCollapsed = collapsed.has(activeId);
      if (e.key === "-" ? !isCollapsed : isCollapsed) toggle(activeId);
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
      <div className="ft-scroll">
        <div className="ft-canvas" style={{ width: layout.width, height: layout.height }}>
          <svg className="ft-edges" width={layout.width} height={layout.height} aria-hidden="true" focusable="false">
            {layout.edges.map((e) => (
              <path key={`${e.from}>${e.to}`} d={e.path} className="ft-edge" data-testid="fork-edge-path" />
            ))}
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
            {visible.ids.map((id) => {
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
          <EdgeLabels layout={layout} flat={flat} onOpenSession={onOpenSession} />
        </div>
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
