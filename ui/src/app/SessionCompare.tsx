import { useEffect, useEffectEvent, useState } from "react";
import type { SessionChanges, SessionCompare as SessionCompareData } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { filesToDiff, LazyDiffView } from "./DiffSlot";
import { ArrowLeft } from "lucide-react";

/**
 * Two sessions' file changes since they diverged, side by side
 * (`GET /api/sessions/{id}/compare?with=`). When both work in worktrees of
 * their own, the worktree comparison screen compares them instead (it
 * includes uncommitted files and can take and promote).
 */
export function SessionCompare({
  left,
  right,
  onBack,
  backLabel = "Fork tree",
  onWorktrees,
  onOpenSession,
}: {
  left: string;
  right: string;
  onBack: () => void;
  backLabel?: string;
  /** Both sides have a worktree: open the worktree comparison for them. */
  onWorktrees: (a: string, b: string) => void;
  onOpenSession: (id: string) => void;
}) {
  const { api } = useServices();
  const [data, setData] = useState<SessionCompareData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const openWorktrees = useEffectEvent(onWorktrees);

  useEffect(() => {
    let alive = true;
    api.compareSessions(left, right).then(
      (c) => {
        if (!alive) return;
        if (c.left.worktree && c.right.worktree) openWorktrees(c.left.worktree, c.right.worktree);
        else setData(c);
      },
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [api, left, right]);

  return (
    <div className="cmp-view" data-testid="session-compare">
      <header className="conv-header cmp-header">
        <button type="button" className="btn small" onClick={onBack} data-testid="session-compare-back">
          <ArrowLeft size={14} aria-hidden />
          {backLabel}
        </button>
        <h1 className="conv-title">
          Compare sessions
          {data && (
            <span className="muted">
              {" "}
              · {data.left.title} ↔ {data.right.title}
            </span>
          )}
        </h1>
      </header>
      {error && (
        <p className="error-text pad" role="alert">
          {error}
        </p>
      )}
      {!data && !error && <p className="muted pad">Loading…</p>}
      {data && (
        <div className="cmp-body">
          <p className="small muted cmp-base">
            Each side's file changes since they diverged
            {data.fork_point ? (
              <>
                {" "}
                (fork point <span className="mono">{data.fork_point.slice(0, 8)}</span>)
              </>
            ) : null}
            .
          </p>
          <div className="cmp-cols">
            <Side side="left" changes={data.left} onOpenSession={onOpenSession} />
            <Side side="right" changes={data.right} onOpenSession={onOpenSession} />
          </div>
        </div>
      )}
    </div>
  );
}

function Side({
  side,
  changes,
  onOpenSession,
}: {
  side: "left" | "right";
  changes: SessionChanges;
  onOpenSession: (id: string) => void;
}) {
  const s = changes.stats;
  return (
    <section className="cmp-col" data-testid={`session-compare-${side}`} aria-label={`Changes of ${changes.title}`}>
      <h3 className="cmp-col-title">
        <button type="button" className="link-btn" onClick={() => onOpenSession(changes.session_id)} title="Open this session">
          {changes.title}
        </button>
        {changes.worktree && <span className="muted small mono"> · {changes.worktree}</span>}
        <span className="muted small" data-testid="session-compare-stats">
          {" "}
          · {s.filesChanged} file{s.filesChanged === 1 ? "" : "s"} <span className="add">+{s.totalAdditions}</span>{" "}
          <span className="del">−{s.totalDeletions}</span>
        </span>
      </h3>
      <div className="cmp-col-body">
        {changes.files.length === 0 ? (
          <p className="muted" data-testid="session-compare-none">
            No file changes since the fork point.
          </p>
        ) : (
          <LazyDiffView diff={filesToDiff(changes.files)} defaultMode="unified" />
        )}
      </div>
    </section>
  );
}
