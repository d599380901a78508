import { memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { TipButton } from "./TipButton";
import { useVirtualizer } from "@tanstack/react-virtual";
import type { PermissionRequest, SessionSummary } from "../protocol/generated";
import { relativeTime } from "../lib/format";
import { Modal } from "./Modal";
import { AttentionBadge } from "./Attention";
import { AttentionStore } from "../state/attention";
import { Archive, ArchiveRestore, ChevronDown, ChevronRight, Flag, Plus, Trash2 } from "lucide-react";

const VIRTUALISE_ABOVE = 200;

/** One row of the list: a session, how deep it sits under the session that delegated to it. */
interface Row {
  s: SessionSummary;
  depth: number;
  /** Its subagents' sessions (listed under it when expanded). */
  children: number;
  expanded: boolean;
}

const SessionItem = memo(function SessionItem({
  s,
  active,
  onOpen,
  onArchive,
  onDelete,
  style,
  depth = 0,
  childCount = 0,
  expanded = false,
  onToggle,
  needsYou = 0,
  running = false,
  finished,
}: {
  /** Its last turn ended while it was not on screen: finished (unread) or failed. */
  finished?: "done" | "failed";
  /** Changes once a minute so the relative time is recomputed. */
  minute: number;
  /** Permission asks waiting in this session (its subagents' included). */
  needsYou?: number;
  /** A turn runs in it (live, from the window's event stream). */
  running?: boolean;
  style?: React.CSSProperties;
  s: SessionSummary;
  active: boolean;
  onOpen: (id: string) => void;
  onArchive: (s: SessionSummary) => void;
  onDelete: (s: SessionSummary) => void;
  depth?: number;
  childCount?: number;
  expanded?: boolean;
  onToggle?: (id: string) => void;
}) {
  const spawned = s.spawned_by;
  return (
    <li
      style={style}
      className={`session-item${active ? " active" : ""}${spawned ? " session-spawned" : ""}`}
      data-testid="session-item"
      data-session-id={s.id}
      data-spawned={spawned ? "true" : undefined}
      data-depth={depth || undefined}
      data-running={running ? "true" : undefined}
      data-needs-you={needsYou > 0 ? "true" : undefined}
      data-finished={finished}
    >
      <button
        type="button"
        className="session-open"
        style={depth ? { paddingLeft: 8 + depth * 14 } : undefined}
        onClick={() => onOpen(s.id)}
        aria-current={active ? "true" : undefined}
        title={spawned ? `A subagent's session (${s.agent ?? "subagent"}), started by a task of another session` : undefined}
      >
        <span className="session-title">
          {spawned && (
            <span className="session-sub-mark" aria-label="subagent">
              ↳ <span className="agent-tag">{s.agent ?? "subagent"}</span>{" "}
            </span>
          )}
          {s.title || s.slug}
          {needsYou > 0 && (
            <span
              className="session-needs-you"
              data-testid="session-needs-you"
              title={`${needsYou} permission ${needsYou === 1 ? "ask" : "asks"} waiting`}
            >
              {" "}
              <Flag size={12} aria-hidden /> {needsYou}
            </span>
          )}
          {finished && !running && needsYou === 0 && (
            <span
              className={`session-finished session-finished-${finished}`}
              data-testid="session-finished"
              title={finished === "failed" ? "Its last turn failed (not seen yet)" : "Finished (not seen yet)"}
            >
              {" "}
              {finished === "failed" ? "failed" : "new"}
            </span>
          )}
        </span>
        <span className="session-meta muted small">
          {relativeTime(s.updated_at)} · {s.message_count} msg{running ? " · running" : ""}
          {s.archived_at ? " · archived" : ""}
        </span>
      </button>
      {childCount > 0 && onToggle && (
        <button
          type="button"
          className="icon-btn session-children-toggle small"
          data-testid="session-children-toggle"
          aria-expanded={expanded}
          aria-label={`${expanded ? "Hide" : "Show"} ${childCount} subagent session${childCount === 1 ? "" : "s"} of ${s.title}`}
          title={`${childCount} subagent session${childCount === 1 ? "" : "s"}`}
          onClick={() => onToggle(s.id)}
        >
          {expanded ? <ChevronDown size={12} aria-hidden /> : <ChevronRight size={12} aria-hidden />} {childCount}
        </button>
      )}
      <span className="session-actions">
        <TipButton
          className="icon-btn"
          data-testid="session-archive"
          aria-label={s.archived_at ? `Unarchive ${s.title}` : `Archive ${s.title}`}
          tip={s.archived_at ? "Unarchive" : "Archive"}
          onPress={() => onArchive(s)}
        >
          {s.archived_at ? <ArchiveRestore size={14} aria-hidden /> : <Archive size={14} aria-hidden />}
        </TipButton>
        <TipButton
          className="icon-btn"
          data-testid="session-delete"
          aria-label={`Delete ${s.title}`}
          tip="Delete"
          onPress={() => onDelete(s)}
        >
          <Trash2 size={14} aria-hidden />
        </TipButton>
      </span>
    </li>
  );
});

export function Sidebar({
  sessions,
  currentId,
  showArchived,
  onShowArchived,
  onOpen,
  onNew,
  onArchive,
  onDelete,
  onForkTree,
  asks = [],
  running,
  finished,
  waitingElsewhere = 0,
  onOpenQueue,
  loading = false,
  error = null,
  onRetry,
}: {
  sessions: SessionSummary[];
  /** The list is being read for the first time (nothing to show yet). */
  loading?: boolean;
  /** Why the list could not be read (null: it was), and how to try again. */
  error?: string | null;
  onRetry?: () => void;
  /** Every waiting ask of the project (live). */
  asks?: PermissionRequest[];
  /** Whether a session runs a turn (live); the list's status is used where it is absent. */
  running?: ReadonlyMap<string, boolean>;
  /** Sessions whose last turn ended unseen (live). */
  finished?: ReadonlyMap<string, "done" | "failed">;
  /** Asks waiting in sessions other than the open one, and how to answer them. */
  waitingElsewhere?: number;
  onOpenQueue?: () => void;
  currentId: string | null;
  showArchived: boolean;
  onShowArchived: (v: boolean) => void;
  onOpen: (id: string) => void;
  onNew: () => void;
  onArchive: (s: SessionSummary, archived: boolean) => void;
  onDelete: (s: SessionSummary) => Promise<void>;
  /** Opens the project's fork tree. */
  onForkTree?: () => void;
}) {
  const [query, setQuery] = useState("");
  // Relative times ("5 min ago") move on once a minute.
  const [minute, setTick] = useState(0);
  useEffect(() => {
    const id = setInterval(() => setTick((t) => t + 1), 60_000);
    return () => clearInterval(id);
  }, []);
  const [confirm, setConfirm] = useState<SessionSummary | null>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  const toggle = useCallback(
    (id: string) =>
      setExpanded((x) => {
        const next = new Set(x);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    [],
  );
  const filtered = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = showArchived ? sessions : sessions.filter((s) => !s.archived_at);
    return q ? list.filter((s) => s.title.toLowerCase().includes(q) || s.slug.toLowerCase().includes(q)) : list;
  }, [sessions, query, showArchived]);
  // Subagents' sessions sit under the session that delegated to them (collapsed, unless the open
  // session is one of them); a search lists every match flat.
  const rows: Row[] = useMemo(() => {
    if (query.trim()) return filtered.map((s) => ({ s, depth: 0, children: 0, expanded: false }));
    const ids = new Set(filtered.map((s) => s.id));
    const byId = new Map(filtered.map((s) => [s.id, s]));
    const childrenOf = new Map<string, SessionSummary[]>();
    const top: SessionSummary[] = [];
    for (const s of filtered) {
      const parent = s.spawned_by?.session_id;
      if (parent && ids.has(parent) && parent !== s.id) {
        const list = childrenOf.get(parent) ?? [];
        list.push(s);
        childrenOf.set(parent, list);
      } else top.push(s);
    }
    // The open session's ancestors are expanded so it is visible.
    const open = new Set(expanded);
    for (let s = currentId ? byId.get(currentId) : undefined, n = 0; s?.spawned_by && n < 8; n++) {
      open.add(s.spawned_by.session_id);
      s = byId.get(s.spawned_by.session_id);
    }
    const out: Row[] = [];
    const add = (s: SessionSummary, depth: number) => {
      const kids = childrenOf.get(s.id) ?? [];
      const isOpen = open.has(s.id);
      out.push({ s, depth, children: kids.length, expanded: isOpen });
      if (isOpen && depth < 4) for (const k of kids) add(k, depth + 1);
    };
    for (const s of top) add(s, 0);
    return out;
  }, [filtered, query, expanded, currentId]);

  const item = (r: Row, style?: React.CSSProperties) => (
    <SessionItem
      key={r.s.id}
      minute={minute}
      style={style}
      s={r.s}
      active={r.s.id === currentId}
      onOpen={onOpen}
      onArchive={(x) => onArchive(x, !x.archived_at)}
      onDelete={setConfirm}
      depth={r.depth}
      childCount={r.children}
      expanded={r.expanded}
      onToggle={toggle}
      needsYou={AttentionStore.of(asks, r.s.id).length}
      running={running?.get(r.s.id) === true || r.s.status === "busy"}
      finished={r.s.spawned_by ? undefined : finished?.get(r.s.id)}
    />
  );

  return (
    <nav className="sidebar" aria-label="Sessions">
      <div className="sidebar-tools">
        {onOpenQueue && <AttentionBadge count={waitingElsewhere} onOpen={onOpenQueue} />}
        <button type="button" className="btn primary" data-testid="new-session" onClick={onNew}>
          <Plus size={14} aria-hidden />
          New session
        </button>
        <input
          type="search"
          className="input"
          placeholder="Search sessions"
          aria-label="Search sessions"
          data-testid="session-search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <div className="sidebar-row">
          <label className="small muted check">
            <input
              type="checkbox"
              checked={showArchived}
              onChange={(e) => onShowArchived(e.target.checked)}
              data-testid="show-archived"
            />{" "}
            Show archived
          </label>
          {onForkTree && (
            <button
              type="button"
              className="link-btn"
              data-testid="open-fork-tree-project"
              title="The project's sessions and their forks as a tree"
              onClick={onForkTree}
            >
              Fork tree
            </button>
          )}
        </div>
      </div>
      {rows.length > VIRTUALISE_ABOVE ? (
        <VirtualList rows={rows} render={item} />
      ) : (
        <ul className="session-list" data-testid="session-list">
          {rows.map((r) => item(r))}
        </ul>
      )}
      {filtered.length === 0 &&
        (query ? (
          <p className="muted small pad">No session matches.</p>
        ) : loading ? (
          <p className="muted small pad" role="status" data-testid="sessions-loading">
            Loading sessions…
          </p>
        ) : error ? (
          <div className="pad small" role="alert" data-testid="sessions-error">
            <p className="error-text">Could not read the sessions: {error}</p>
            {onRetry && (
              <button type="button" className="btn small" onClick={onRetry}>
                Try again
              </button>
            )}
          </div>
        ) : (
          <p className="muted small pad" data-testid="sessions-empty">
            No sessions yet.
          </p>
        ))}
      {confirm && (
        <Modal title="Delete session?" onClose={() => setConfirm(null)}>
          <p>
            Delete <strong>{confirm.title || confirm.slug}</strong> and its {confirm.message_count} messages? This cannot be
            undone.
          </p>
          <div className="row-end">
            <button type="button" className="btn" onClick={() => setConfirm(null)} autoFocus>
              Cancel
            </button>
            <button
              type="button"
              className="btn danger"
              data-testid="confirm-delete"
              onClick={() => {
                const s = confirm;
                setConfirm(null);
                void onDelete(s);
              }}
            >
              Delete
            </button>
          </div>
        </Modal>
      )}
    </nav>
  );
}

function VirtualList({ rows, render }: { rows: Row[]; render: (r: Row, style: React.CSSProperties) => React.ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- a notice for React Compiler, which this app does not use (nothing here memoises the virtualizer's results)
  const v = useVirtualizer({ count: rows.length, getScrollElement: () => ref.current, estimateSize: () => 52, overscan: 8 });
  return (
    <div className="session-scroll" ref={ref}>
      <ul className="session-list virtual" data-testid="session-list" style={{ height: v.getTotalSize(), position: "relative" }}>
        {v
          .getVirtualItems()
          .map((it) =>
            render(rows[it.index]!, {
              position: "absolute",
              top: 0,
              left: 0,
              right: 0,
              height: it.size,
              transform: `translateY(${it.start}px)`,
            }),
          )}
      </ul>
    </div>
  );
}
