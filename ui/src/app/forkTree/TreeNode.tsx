import { memo, type RefObject } from "react";
import { ChevronDown, ChevronRight, Ellipsis, Eye, FolderGit2, GitBranch } from "lucide-react";
import { formatCostFine, relativeTime } from "../../lib/format";
import { MenuButton, type MenuItem } from "../MenuButton";
import { forkLine, NODE_H, NODE_W, type FlatNode } from "../forkTreeModel";

/**
 * A session of the fork tree: a tree item at its place in the layout, with its forks'
 * collapse toggle, its actions menu (a plain button until opened: one menu at a time), and its facts.
 */
export const TreeNode = memo(function TreeNode({
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
  treeRef: RefObject<HTMLDivElement | null>;
}) {
  const n = f.node;
  const kids = n.children.length;
  const menuLabel = `Actions for ${n.title || n.slug}`;
  const line = forkLine(n);
  const cls = [
    "ft-node",
    active && "active",
    current && "current",
    match && "match",
    n.archived_at && "archived",
    n.status === "busy" && "busy",
    collapsed && "collapsed",
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
            {collapsed ? <ChevronRight size={12} aria-hidden="true" /> : <ChevronDown size={12} aria-hidden="true" />}
            {collapsed && <span className="ft-toggle-count">{f.descendants}</span>}
          </button>
        )}
        <TitleText title={n.title || n.slug} />
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
              <Ellipsis size={14} aria-hidden="true" />
            </button>
          )}
        </span>
      </div>
      {line && (
        <div className={`ft-line small ${line.kind}`} data-testid="fork-node-line" data-kind={line.kind} title={line.text}>
          {line.kind === "point" && <GitBranch size={11} aria-hidden="true" />}
          <span>{line.kind === "prompt" ? `“${line.text}”` : line.text}</span>
        </div>
      )}
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
            <FolderGit2 size={11} aria-hidden="true" /> {n.worktree ?? "worktree"}
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
            <Eye size={11} aria-hidden="true" /> open
          </span>
        )}
      </div>
    </div>
  );
});

function nodeLabel(f: FlatNode, current: boolean): string {
  const n = f.node;
  const line = forkLine(n);
  const parts = [
    n.title || n.slug,
    line ? (line.kind === "prompt" ? `first prompt: ${line.text}` : `forked at: ${line.text}`) : "",
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

/** The title cut at the end of its base, never in its fork number ("… (fork 1.2)" stays readable). */
function TitleText({ title }: { title: string }) {
  const m = /^(.*?)(\s\(fork[^()]*\))$/.exec(title);
  return (
    <span className="ft-title" title={title}>
      {m ? (
        <>
          <span className="ft-title-base">{m[1]}</span>
          <span className="ft-title-fork">{m[2]}</span>
        </>
      ) : (
        <span className="ft-title-base">{title}</span>
      )}
    </span>
  );
}
