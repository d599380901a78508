import { useEffect, useMemo, useState } from "react";
import type { AttemptView, FileDiff, HunkView, WorktreeFileDiff } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { useServices } from "../context";
import { filesToDiff, LazyDiffView } from "../DiffSlot";

/** The comparison's hunk (its id) that a hunk of the shown diff is: same start lines, else the same place. */
export function matchHunk(file: FileDiff, index: number, hunks: HunkView[] | undefined): HunkView | undefined {
  if (!hunks?.length) return undefined;
  const h = file.hunks[index];
  if (!h) return undefined;
  return (
    hunks.find((v) => v.old_start === h.startBefore && v.new_start === h.startAfter) ??
    (hunks.length === file.hunks.length ? hunks[index] : undefined)
  );
}

/**
 * One attempt's diff of one file against the base (the server's files and hunks), with "Take → the
 * other" on each hunk when the comparison listed the file's hunks.
 */
export function DiffColumn({
  side,
  directory,
  attempt,
  base,
  path,
  rev,
  testId,
  onTakeHunk,
}: {
  side: "A" | "B";
  directory: string;
  attempt: AttemptView;
  base: string;
  path: string;
  rev: number;
  testId: string;
  /** Takes one hunk of this attempt into the other one. */
  onTakeHunk?: (hunk: HunkView) => void;
}) {
  const other = side === "A" ? "B" : "A";
  const { api } = useServices();
  const changed = attempt.files.find((f) => f.path === path);
  const [state, setState] = useState<{ key: string; diff?: WorktreeFileDiff; error?: string } | null>(null);
  const key = `${attempt.name}\n${base}\n${path}\n${rev}`;
  const hasChange = changed !== undefined;
  useEffect(() => {
    if (!hasChange) return;
    let alive = true;
    api.attemptDiff(directory, attempt.name, base, path).then(
      (r) => alive && setState({ key, diff: r }),
      (e: unknown) => alive && setState({ key, error: errorMessage(e) }),
    );
    return () => {
      // Another file, attempt or revision (or the file is unchanged now): this answer is not shown.
      alive = false;
      setState(null);
    };
  }, [api, directory, attempt.name, base, path, key, hasChange]);
  const diff = useMemo(() => {
    if (state?.key !== key || state.diff === undefined) return null;
    // The server sends files and hunks: nothing is parsed here.
    const d = filesToDiff(state.diff.files);
    return { ...d, patch: state.diff.diff };
  }, [state, key]);
  return (
    <section className="cmp-col" data-testid={testId} aria-label={`${side}'s diff of ${path}`}>
      <h3 className="cmp-col-title">
        {side} · <span className="mono">{attempt.name}</span>
        {changed && <span className="muted small"> · {changed.status}</span>}
      </h3>
      <div className="cmp-col-body">
        {!changed ? (
          <p className="muted" data-testid="diff-unchanged">
            Unchanged from the base in {side}.
          </p>
        ) : state?.key === key && state.error ? (
          <p className="error-text">{state.error}</p>
        ) : diff ? (
          <LazyDiffView
            diff={diff}
            defaultMode="unified"
            hunkActions={
              onTakeHunk && changed?.hunks?.length
                ? (file, index) => {
                    const h = matchHunk(file, index, changed.hunks);
                    return h ? (
                      <button
                        type="button"
                        className="btn small"
                        data-testid="take-hunk"
                        data-hunk={h.id}
                        title={`Copy only this hunk of ${side}'s change into ${other}`}
                        onClick={() => onTakeHunk(h)}
                      >
                        Take → {other}
                      </button>
                    ) : null;
                  }
                : undefined
            }
          />
        ) : (
          <p className="muted">Loading diff…</p>
        )}
      </div>
    </section>
  );
}
