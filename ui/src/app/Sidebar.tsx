import { memo, useEffect, useMemo, useRef, useState } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import type { SessionSummary } from "../protocol/generated";
import { relativeTime } from "../lib/format";
import { Modal } from "./Modal";

const VIRTUALISE_ABOVE = 200;

const SessionItem = memo(function SessionItem({
  s,
  active,
  onOpen,
  onArchive,
  onDelete,
  style,
}: {
  /** Changes once a minute so the relative time is recomputed. */
  minute: number;
  style?: React.CSSProperties;
  s: SessionSummary;
  active: boolean;
  onOpen: (id: string) => void;
  onArchive: (s: SessionSummary) => void;
  onDelete: (s: SessionSummary) => void;
}) {
  return (
    <li style={style} className={`session-item${active ? " active" : ""}`} data-testid="session-item" data-session-id={s.id}>
      <button type="button" className="session-open" onClick={() => onOpen(s.id)} aria-current={active ? "true" : undefined}>
        <span className="session-title">{s.title || s.slug}</span>
        <span className="session-meta muted small">
          {relativeTime(s.updated_at)} · {s.message_count} msg{s.status === "busy" ? " · running" : ""}
          {s.archived_at ? " · archived" : ""}
        </span>
      </button>
      <span className="session-actions">
        <button
          type="button"
          className="icon-btn"
          data-testid="session-archive"
          aria-label={s.archived_at ? `Unarchive ${s.title}` : `Archive ${s.title}`}
          title={s.archived_at ? "Unarchive" : "Archive"}
          onClick={() => onArchive(s)}
        >
          {s.archived_at ? "⇡" : "⇣"}
        </button>
        <button
          type="button"
          className="icon-btn"
          data-testid="session-delete"
          aria-label={`Delete ${s.title}`}
          title="Delete"
          onClick={() => onDelete(s)}
        >
          🗑
        </button>
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
}: {
  sessions: SessionSummary[];
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
  const filtered = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = showArchived ? sessions : sessions.filter((s) => !s.archived_at);
    return q ? list.filter((s) => s.title.toLowerCase().includes(q) || s.slug.toLowerCase().includes(q)) : list;
  }, [sessions, query, showArchived]);

  const item = (s: SessionSummary, style?: React.CSSProperties) => (
    <SessionItem
      key={s.id}
      minute={minute}
      style={style}
      s={s}
      active={s.id === currentId}
      onOpen={onOpen}
      onArchive={(x) => onArchive(x, !x.archived_at)}
      onDelete={setConfirm}
    />
  );

  return (
    <nav className="sidebar" aria-label="Sessions">
      <div className="sidebar-tools">
        <button type="button" className="btn primary" data-testid="new-session" onClick={onNew}>
          + New session
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
      {filtered.length > VIRTUALISE_ABOVE ? (
        <VirtualList sessions={filtered} render={item} />
      ) : (
        <ul className="session-list" data-testid="session-list">
          {filtered.map((s) => item(s))}
        </ul>
      )}
      {filtered.length === 0 && <p className="muted small pad">{query ? "No session matches." : "No sessions yet."}</p>}
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

function VirtualList({
  sessions,
  render,
}: {
  sessions: SessionSummary[];
  render: (s: SessionSummary, style: React.CSSProperties) => React.ReactNode;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- a notice for React Compiler, which this app does not use (nothing here memoises the virtualizer's results)
  const v = useVirtualizer({ count: sessions.length, getScrollElement: () => ref.current, estimateSize: () => 52, overscan: 8 });
  return (
    <div className="session-scroll" ref={ref}>
      <ul className="session-list virtual" data-testid="session-list" style={{ height: v.getTotalSize(), position: "relative" }}>
        {v
          .getVirtualItems()
          .map((it) =>
            render(sessions[it.index]!, {
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
