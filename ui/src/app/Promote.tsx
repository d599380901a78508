import { useState } from "react";
import type { AttemptView, PromotedView } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { Modal } from "./Modal";
import { isKept } from "./useForced";
import { useRemoveWorktree } from "./useRemoveWorktree";
import { shortSha } from "./Worktrees";

type PromoteMode = "merge" | "keep_branch";

/** Promote one attempt: merge into its base branch, or keep the branch. */
export function PromoteDialog({
  directory,
  side,
  attempt,
  onClose,
  onDone,
}: {
  directory: string;
  /** Its letter in the comparison (A, B, C …). */
  side: string;
  attempt: AttemptView;
  onClose: () => void;
  onDone: (p: PromotedView) => void;
}) {
  const { api } = useServices();
  const [mode, setMode] = useState<PromoteMode>("merge");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** The server refused because the merge would overwrite ignored files: its message. */
  const [kept, setKept] = useState<string | null>(null);
  const go = async (force: boolean) => {
    setBusy(true);
    setError(null);
    try {
      onDone(await api.promote(directory, attempt.name, mode, force));
    } catch (e) {
      if (!force && isKept(e)) setKept(errorMessage(e));
      else setError(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <Modal title={`Promote ${side.toUpperCase()} (${attempt.name})?`} onClose={onClose} testId="promote-dialog">
      <p>Its uncommitted changes are committed on its branch first.</p>
      <fieldset className="stack cmp-modes">
        <legend className="sr-only">How to promote</legend>
        <label className="check">
          <input
            type="radio"
            name="promote-mode"
            value="merge"
            checked={mode === "merge"}
            onChange={() => setMode("merge")}
            data-testid="promote-mode-merge"
          />
          Merge into the branch it started from (fast-forward when possible; on a conflict the branch it started from is
          left as it was)
        </label>
        <label className="check">
          <input
            type="radio"
            name="promote-mode"
            value="keep_branch"
            checked={mode === "keep_branch"}
            onChange={() => setMode("keep_branch")}
            data-testid="promote-mode-keep"
          />
          Keep the branch (nothing is merged: push it or open a pull request yourself)
        </label>
      </fieldset>
      {error && (
        <p className="error-text" role="alert" data-testid="promote-error">
          {error}
        </p>
      )}
      {kept && (
        <p className="warning" role="alert" data-testid="promote-kept">
          {kept} Promoting anyway keeps a copy of those files in the worktree trash first.
        </p>
      )}
      <div className="row-end">
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
        {kept ? (
          <button
            type="button"
            className="btn danger"
            disabled={busy}
            onClick={() => void go(true)}
            data-testid="promote-force"
          >
            {busy ? "Promoting…" : "Promote anyway"}
          </button>
        ) : (
          <button type="button" className="btn primary" disabled={busy} onClick={() => void go(false)} data-testid="promote-confirm">
            {busy ? "Promoting…" : "Promote"}
          </button>
        )}
      </div>
    </Modal>
  );
}

/** What a promote did, and the other attempts one may remove now. */
export function PromoteResult({
  directory,
  promoted,
  onBack,
  onAgain,
}: {
  directory: string;
  promoted: PromotedView;
  onBack: () => void;
  onAgain: () => void;
}) {
  const [gone, setGone] = useState<string[]>([]);
  const removal = useRemoveWorktree(directory, (w) => setGone((g) => [...g, w.name]));
  const left = promoted.others.filter((o) => !gone.includes(o));
  const removeAll = async () => {
    for (const name of left) {
      // Stops at the first one that would lose work: its confirmation is then open.
      if (!(await removal.remove(name))) break;
    }
  };
  return (
    <div className="cmp-body pad" data-testid="promote-result" role="status">
      <h3>Promoted {promoted.name}</h3>
      {promoted.committed && (
        <p className="small" data-testid="promote-committed">
          Its uncommitted changes were first committed on its branch as{" "}
          <span className="mono">{shortSha(promoted.committed)}</span>.
        </p>
      )}
      {promoted.merged_into ? (
        <p>
          Branch <span className="mono">{promoted.branch}</span> was merged into{" "}
          <strong className="mono">{promoted.merged_into}</strong>{" "}
          {promoted.fast_forward ? "as a fast-forward" : "with a merge commit"}
          {promoted.commit ? (
            <>
              {" "}
              (now at <span className="mono">{shortSha(promoted.commit)}</span>)
            </>
          ) : null}
          . {promoted.removed ? "Its worktree was removed." : "Its worktree is kept."}
        </p>
      ) : null}
      {promoted.merged_into && promoted.kept ? (
        <p className="small muted" data-testid="promote-kept-reason">
          Kept because {promoted.kept}
        </p>
      ) : null}
      {promoted.trash ? (
        <p className="small" data-testid="promote-trash">
          Ignored files it overwrote are in the worktree trash ({promoted.trash.files.join(", ")}).
        </p>
      ) : null}
      {promoted.merged_into ? null : (
        <p>
          Its work is committed on branch <strong className="mono">{promoted.branch}</strong> at{" "}
          <span className="mono">{shortSha(promoted.head)}</span>; nothing was merged. The worktree is kept.
        </p>
      )}
      {promoted.others.length > 0 && (
        <section className="wt-card" data-testid="promote-others">
          <p>Other attempts you may remove now:</p>
          <ul className="wt-sessions">
            {promoted.others.map((o) => (
              <li key={o} className="row" data-testid="promote-other" data-name={o}>
                <span className="mono">{o}</span>
                {gone.includes(o) ? (
                  <span className="muted small">removed</span>
                ) : (
                  <button
                    type="button"
                    className="btn small danger"
                    disabled={removal.busy !== null}
                    onClick={() => void removal.remove(o)}
                    data-testid="remove-other"
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
          {left.length > 1 && (
            <button
              type="button"
              className="btn small danger"
              disabled={removal.busy !== null}
              onClick={() => void removeAll()}
              data-testid="remove-others"
            >
              Remove all {left.length}
            </button>
          )}
        </section>
      )}
      <div className="row">
        <button type="button" className="btn" onClick={onBack} data-testid="promote-back">
          Back to worktrees
        </button>
        <button type="button" className="btn" onClick={onAgain}>
          Compare others
        </button>
      </div>
      {removal.dialog}
    </div>
  );
}
