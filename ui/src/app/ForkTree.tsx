import { memo, useCallback, useDeferredValue, useEffect, useEffectEvent, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { ForkTreeNode } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { baseName, formatCostFine, relativeTime } from "../lib/format";
import { useServices, useToast } from "./context";
import { MenuButton, type MenuItem } from "./MenuButton";
import {
  flatten,
  layoutTree,
  LABEL_H,
  LABEL_W,
  moveFrom,
  NODE_H,
  NODE_W,
  shortExcerpt,
  visibleNodes,
  type FlatNode,
  type Move,
} from "./forkTreeModel";

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
      <header className="conv-header ft-header">
        <button type="button" className="btn small" onClick={onBack} data-testid="fork-tree-back">
          ← Sessions
        </button>
        <h1 className="conv-title">Fork tree</h1>
        <input
          type="search"
          className="input ft-search"
          placeholder="Search by title"
          aria-label="Search sessions by title"
          data-testid="fork-tree-search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <span className="muted small" data-testid="fork-tree-count" aria-live="polite">
          {searching ? `${visible.matches.size} of ${total} match` : `${total} session${total === 1 ? "" : "s"}`}
        </span>
        <label className="small muted check">
          <input
            type="checkbox"
            checked={archived}
            onChange={(e) => setArchived(e.target.checked)}
            data-testid="fork-tree-archived"
          />
          Show archived
        </label>
        <button type="button" className="btn small" onClick={() => void load()} aria-label="Refresh the tree">
          ⟳
        </button>
      </header>
      {picking && (
        <div className="ft-picking" role="status" data-testid="fork-tree-picking">
          <span>
            Pick the session to compare with <strong>{pickingTitle}</strong>: click it, or move to it and press Enter.
          </span>
          <button type="button" className="btn small" onClick={() => setPicking(null)}>
            Cancel
          </button>
        </div>
      )}
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
          {layout.edges.map((e) => {
            const child = flat.byId.get(e.to)?.node;
            if (!child) return null;
            const parentTitle = flat.byId.get(e.from)?.node.title ?? "the parent";
            const messageId = child.fork?.source_message_id;
            return (
              <button
                key={`${e.from}>${e.to}`}
                type="button"
                tabIndex={-1}
                className="ft-edge-label"
                data-testid="fork-edge"
                data-from={e.from}
                data-to={e.to}
                style={{ left: e.label.x - LABEL_W / 2, top: e.label.y - LABEL_H / 2, width: LABEL_W, height: LABEL_H }}
                title={`Forked at: ${child.fork_excerpt ?? "?"}\nOpens “${parentTitle}” at this message`}
                onClick={() => onOpenSession(e.from, messageId ?? undefined)}
              >
                {shortExcerpt(child.fork_excerpt)}
              </button>
            );
          })}
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

const TreeNode = memo(function TreeNode({
  f,
  domId,
  x,
  y,
  active,
  current,
  match,
  collapsed,
  actionsFor,
  menuOpen,
  onMenu,
  onOpen,
  onToggle,
  onActivate,
  treeRef,
}: {
  f: FlatNode;
  domId: string;
  x: number;
  y: number;
  active: boolean;
  current: boolean;
  match: boolean;
  collapsed: boolean;
  actionsFor: (f: FlatNode) => MenuItem[];
  menuOpen: boolean;
  onMenu: (id: string | null) => void;
  onOpen: (id: string) => void;
  onToggle: (id: string) => void;
  onActivate: (id: string) => void;
  treeRef: React.RefObject<HTMLDivElement | null>;
}) {
  const n = f.node;
  const kids = n.children.length;
  const menuLabel = `Actions for ${n.title || n.slug}`;
  const cls = [
    "ft-node",
    active && "active",
    current && "current",
    match && "match",
    n.archived_at && "archived",
    n.status === "busy" && "busy",
  ]
    .filter(Boolean)
    .join(" ");
  return (
    // A tree item of an aria-activedescendant tree: the tree has the focus and the keys (arrows,
    // Enter); a click is the pointer's way to the same action.
    // eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/interactive-supports-focus
    <div
      id={domId}
      role="treeitem"
      aria-level={f.depth + 1}
      aria-posinset={f.index + 1}
      aria-setsize={f.siblings}
      aria-expanded={kids > 0 ? !collapsed : undefined}
      aria-selected={active}
      aria-current={current ? "true" : undefined}
      aria-label={nodeLabel(f, current)}
      className={cls}
      data-testid="fork-node"
      data-session-id={n.id}
      data-x={Math.round(x)}
      data-y={Math.round(y)}
      style={{ transform: `translate(${x}px, ${y}px)`, width: NODE_W, height: NODE_H }}
      onClick={(e) => {
        // Not from its menu (its button, or the menu's popover, which is elsewhere in the page).
        const t = e.target as Node;
        if (!e.currentTarget.contains(t) || (t instanceof Element && t.closest(".ft-menu-slot"))) return;
        onActivate(n.id);
        onOpen(n.id);
      }}
    >
      <div className="ft-node-head">
        {kids > 0 && (
          <button
            type="button"
            tabIndex={-1}
            className="icon-btn ft-toggle"
            data-testid="fork-node-collapse"
            aria-label={collapsed ? `Expand ${f.descendants} forks` : `Collapse ${f.descendants} forks`}
            title={collapsed ? `Show the ${f.descendants} sessions below` : `Hide the ${f.descendants} sessions below`}
            onClick={(e) => {
              e.stopPropagation();
              onToggle(n.id);
            }}
          >
            {collapsed ? `▸ ${f.descendants}` : "▾"}
          </button>
        )}
        <span className="ft-title" title={n.title || n.slug}>
          {n.title || n.slug}
        </span>
        <span className="ft-menu-slot">
          {menuOpen ? (
            <MenuButton
              label={menuLabel}
              className="icon-btn ft-menu"
              testId="fork-node-menu"
              tabIndex={-1}
              items={actionsFor(f)}
              initiallyOpen
              returnFocus={() => treeRef.current}
              onOpenChange={(o) => !o && onMenu(null)}
            />
          ) : (
            <button
              type="button"
              className="icon-btn ft-menu"
              tabIndex={-1}
              aria-label={menuLabel}
              title={menuLabel}
              aria-haspopup="menu"
              aria-expanded={false}
              data-testid="fork-node-menu"
              onClick={() => {
                onActivate(n.id);
                onMenu(n.id);
              }}
            >
              ⋯
            </button>
          )}
        </span>
      </div>
      <div className="ft-meta small">
        {n.agent && <span className="agent-tag">{n.agent}</span>}
        <span data-testid="fork-node-messages">{n.message_count} msg</span>
        <span data-testid="fork-node-files">
          {n.files_changed} file{n.files_changed === 1 ? "" : "s"}
        </span>
        <span data-testid="fork-node-cost">{formatCostFine(n.cost_usd)}</span>
      </div>
      <div className="ft-meta small">
        <span className="muted" data-testid="fork-node-updated">
          {relativeTime(n.updated_at)}
        </span>
        {n.own_worktree && (
          <span className="chip ft-badge ft-wt" data-testid="fork-node-worktree" title={`Own worktree: ${n.worktree ?? ""}`}>
            ⎇ {n.worktree ?? "worktree"}
          </span>
        )}
        {n.status === "busy" && (
          <span className="chip ft-badge ft-busy" data-testid="fork-node-busy">
            running
          </span>
        )}
        {n.archived_at && <span className="chip ft-badge">archived</span>}
        {current && (
          <span className="chip ft-badge ft-current" data-testid="fork-node-current">
            open
          </span>
        )}
      </div>
    </div>
  );
});

function nodeLabel(f: FlatNode, current: boolean): string {
  const n = f.node;
  const parts = [
    n.title || n.slug,
    n.agent ?? "",
    `${n.message_count} messages`,
    `${n.files_changed} files changed`,
    formatCostFine(n.cost_usd),
    `updated ${relativeTime(n.updated_at)}`,
  ];
  if (n.own_worktree) parts.push("own worktree");
  if (n.status === "busy") parts.push("running");
  if (n.archived_at) parts.push("archived");
  if (current) parts.push("open now");
  if (f.node.children.length) parts.push(`${f.descendants} below`);
  return parts.filter(Boolean).join(", ");
}

function SelectionBar({
  f,
  parentTitle,
  actions,
  onOpenParent,
}: {
  f: FlatNode;
  parentTitle?: string;
  actions: MenuItem[];
  onOpenParent: () => void;
}) {
  const n = f.node;
  return (
    <footer className="ft-selbar" aria-label="Selected session" data-testid="fork-tree-selected">
      <div className="ft-sel-text">
        <strong>{n.title || n.slug}</strong>
        {f.parent ? (
          <span className="muted small">
            {" "}
            · forked from{" "}
            <button type="button" className="link-btn" onClick={onOpenParent} data-testid="fork-open-parent">
              {parentTitle ?? "its parent"}
            </button>{" "}
            at <q>{shortExcerpt(n.fork_excerpt, 80)}</q>
          </span>
        ) : (
          <span className="muted small"> · top-level{n.fork ? " (a promoted fork)" : ""}</span>
        )}
      </div>
      <div className="row ft-sel-actions">
        {actions.map((a) => (
          <button
            key={a.label}
            type="button"
            className="btn small"
            disabled={!!a.disabled}
            title={a.disabled || undefined}
            data-testid={a.testId ? `sel-${a.testId}` : undefined}
            onClick={a.onSelect}
          >
            {a.label}
          </button>
        ))}
      </div>
      <span className="muted small ft-keys">←/→ parent/fork · ↑/↓ neighbours · Enter open · +/− expand/collapse · Shift+F10 actions</span>
    </footer>
  );
}
