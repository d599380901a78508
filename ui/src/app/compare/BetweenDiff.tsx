import { useEffect, useMemo, useState } from "react";
import type { WorktreeFileDiff } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { useServices } from "../context";
import { filesToDiff, LazyDiffView } from "../DiffSlot";

/** One file as A has it against B's version: the direct A↔B diff (`GET /api/worktrees/between`). */
export function BetweenDiff({
  directory,
  a,
  b,
  path,
  rev,
}: {
  directory: string;
  a: string;
  b: string;
  path: string;
  rev: number;
}) {
  const { api } = useServices();
  const key = `${a}\n${b}\n${path}\n${rev}`;
  const [state, setState] = useState<{ key: string; diff?: WorktreeFileDiff; error?: string } | null>(null);
  useEffect(() => {
    let alive = true;
    api.between(directory, a, b, path).then(
      (r) => alive && setState({ key, diff: r }),
      (e: unknown) => alive && setState({ key, error: errorMessage(e) }),
    );
    return () => {
      alive = false;
    };
  }, [api, directory, a, b, path, key]);
  const diff = useMemo(() => {
    if (state?.key !== key || !state.diff) return null;
    return { ...filesToDiff(state.diff.files), patch: state.diff.diff, scope: { scope: "step" as const, step: `between:${key}` } };
  }, [state, key]);
  return (
    <section className="cmp-col cmp-between-diff" data-testid="between-diff" aria-label={`${path}: A against B`}>
      <h3 className="cmp-col-title">
        <span className="mono">{a}</span> → <span className="mono">{b}</span>
        <span className="muted small"> · − A's lines, + B's lines</span>
      </h3>
      <div className="cmp-col-body">
        {state?.key === key && state.error ? (
          <p className="error-text">{state.error}</p>
        ) : !diff ? (
          <p className="muted">Loading diff…</p>
        ) : diff.files.length === 0 ? (
          <p className="muted" data-testid="between-same">
            A and B have the same {path}.
          </p>
        ) : (
          <LazyDiffView diff={diff} defaultMode="split" />
        )}
      </div>
    </section>
  );
}
