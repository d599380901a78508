import { useMemo, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { HunkView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { ApiError } from "../../transport/types";
import { useServices } from "../context";
import { filesToDiff, LazyDiffView } from "../DiffSlot";
import { hunksToFiles } from "./hunkFiles";

type HunkAction = "stage" | "unstage" | "discard";

const LABEL: Record<HunkAction, string> = { stage: "Stage", unstage: "Unstage", discard: "Discard" };

/** The checkout's unstaged and staged hunks, each with Stage / Discard or Unstage. */
export function HunkLists({ directory, sessionId }: { directory: string; sessionId: string }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <section className="review-hunks" aria-label="Hunks to stage">
      {error && (
        <p className="error-text" role="alert" data-testid="hunk-error">
          {error}
        </p>
      )}
      <HunkList directory={directory} sessionId={sessionId} staged={false} onError={setError} />
      <HunkList directory={directory} sessionId={sessionId} staged onError={setError} />
    </section>
  );
}

function HunkList({
  directory,
  sessionId,
  staged,
  onError,
}: {
  directory: string;
  sessionId: string;
  staged: boolean;
  onError: (message: string | null) => void;
}) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: [...keys.git(directory), "hunks", staged],
    queryFn: () => api.hunks(directory, staged),
  });
  const [busy, setBusy] = useState<string | null>(null);
  const hunks = query.data?.hunks;
  const { files, hunkAt } = useMemo(() => hunksToFiles(hunks ?? []), [hunks]);
  // Binary files, mode changes, renames: nothing to draw as lines, still one hunk to act on.
  const whole = useMemo(() => (hunks ?? []).filter((h) => h.binary === true || h.lines.length === 0), [hunks]);
  const diff = useMemo(
    () => ({ ...filesToDiff(files), scope: { scope: "step" as const, step: `hunks:${directory}:${staged}` } }),
    [files, directory, staged],
  );

  const act = async (h: HunkView, action: HunkAction) => {
    setBusy(h.id);
    onError(null);
    try {
      if (action === "stage") await api.stageHunk(directory, h.id);
      else if (action === "unstage") await api.unstageHunk(directory, h.id);
      else await api.revertHunk(directory, h.id, sessionId);
    } catch (e) {
      // A stale hunk (409): the server says so; the lists are read again below either way.
      onError(e instanceof ApiError && e.status === 409 ? e.message : `${LABEL[action]} failed: ${errorMessage(e)}`);
    } finally {
      setBusy(null);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: keys.git(directory) }),
        queryClient.invalidateQueries({ queryKey: keys.diffsOf(sessionId) }),
      ]);
    }
  };

  const buttons = (h: HunkView) => {
    const actions: HunkAction[] = staged ? ["unstage"] : ["stage", "discard"];
    return actions.map((a) => (
      <button
        key={a}
        type="button"
        className={`btn small${a === "discard" ? " danger" : ""}`}
        data-testid={`hunk-${a}`}
        data-hunk={h.id}
        disabled={busy !== null}
        title={a === "discard" ? "Discard this hunk from the work tree (a snapshot is kept: undo brings it back)" : undefined}
        aria-label={`${LABEL[a]} hunk ${h.file}:${h.new_start}`}
        onClick={() => void act(h, a)}
      >
        {LABEL[a]}
      </button>
    ));
  };

  const title = staged ? "Staged" : "Unstaged";
  return (
    <section className="review-hunk-list" data-testid={staged ? "hunks-staged" : "hunks-unstaged"} aria-label={`${title} hunks`}>
      <h3 className="review-subtitle">
        {title} <span className="muted small">{hunks ? `${hunks.length} hunk${hunks.length === 1 ? "" : "s"}` : ""}</span>
      </h3>
      {query.error && !query.data && <p className="error-text">{errorMessage(query.error)}</p>}
      {!query.data && !query.error && <p className="muted small">Loading…</p>}
      {hunks?.length === 0 && <p className="muted small">{staged ? "Nothing staged." : "No unstaged changes."}</p>}
      {whole.length > 0 && (
        <ul className="review-whole">
          {whole.map((h) => (
            <li key={h.id} className="row" data-testid="hunk-whole-file">
              <span className="mono small">{h.old_file ? `${h.old_file} → ${h.file}` : h.file}</span>
              <span className="muted small">{h.binary ? "binary" : "whole file"}</span>
              {buttons(h)}
            </li>
          ))}
        </ul>
      )}
      {files.length > 0 && files.some((f) => f.hunks.some((h) => h.lines.length > 0)) && (
        <LazyDiffView
          diff={diff}
          defaultMode="unified"
          hunkActions={(file, index) => {
            const h = hunkAt(file.file, index);
            return h ? buttons(h) : null;
          }}
        />
      )}
    </section>
  );
}
