import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { keys } from "../state/queries";
import type { TrashView } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { relativeTime } from "../lib/format";
import { useServices, useToast } from "./context";

const OPERATION: Record<TrashView["operation"], string> = {
  remove: "removed",
  reset: "reset",
  take: "taken over",
  promote: "promoted over",
  "auto-cleanup": "cleaned up",
};

/**
 * What forced worktree operations and resets kept: newest first, each with
 * its files, commits and submodule commits, and Restore (its files where they
 * were, never over a file that differs; its commits as a branch).
 */
export function WorktreeTrash({ directory }: { directory: string }) {
  const { api } = useServices();
  const toast = useToast();
  const queryClient = useQueryClient();
  // Read when opened (and again whenever the worktree list is invalidated while open).
  const [open, setOpen] = useState(false);
  const query = useQuery({
    queryKey: keys.worktreeTrash(directory),
    queryFn: () => api.worktreeTrash(directory),
    enabled: open,
  });
  const [busy, setBusy] = useState<string | null>(null);
  const [into, setInto] = useState("");

  const restore = async (t: TrashView) => {
    setBusy(t.id);
    try {
      const r = await api.restoreTrash(directory, t.id, into.trim() || undefined);
      const branch = r.trash.refs.length ? `; its commits are on branch mia-code-restored/${t.id}` : "";
      toast(`Restored ${t.files.length} file(s) into ${r.into}${branch}`, "info");
      await queryClient.invalidateQueries({ queryKey: keys.worktrees(directory) });
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const list = query.data ?? [];
  return (
    <details
      className="wt-card wt-trash"
      aria-label="Worktree trash"
      data-testid="worktree-trash"
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary>
        <h3>Trash</h3> <span className="muted small">what resets and forced operations kept</span>
      </summary>
      {query.error && <p className="error-text">{errorMessage(query.error)}</p>}
      {query.data && list.length === 0 && (
        <p className="muted small" data-testid="worktree-trash-empty">
          Nothing kept yet. A reset, or a forced remove, take or promote, keeps here what it drops.
        </p>
      )}
      {list.length > 0 && (
        <>
          <label className="small">
            Restore into <span className="muted">(optional; default: where the files were)</span>
            <input
              className="input mono"
              value={into}
              onChange={(e) => setInto(e.target.value)}
              placeholder="a folder"
              data-testid="worktree-trash-into"
            />
          </label>
          <ul className="wt-sessions">
            {list.map((t) => (
              <li key={t.id} data-testid="worktree-trash-entry" data-id={t.id}>
                <strong className="mono">{t.worktree}</strong> {OPERATION[t.operation]}{" "}
                <span className="muted small" title={new Date(t.created_at).toLocaleString()}>
                  {relativeTime(t.created_at)}
                </span>
                <span className="small" title={t.files.join("\n")}>
                  {" "}
                  · {t.files.length} file(s)
                </span>
                {t.refs.length > 0 && <span className="small"> · {t.refs.join(", ")}</span>}
                {t.submodule_commits.length > 0 && (
                  <span className="small"> · {t.submodule_commits.length} submodule commit(s)</span>
                )}{" "}
                <button
                  type="button"
                  className="btn small"
                  disabled={busy !== null}
                  onClick={() => void restore(t)}
                  data-testid="worktree-trash-restore"
                >
                  {busy === t.id ? "Restoring…" : "Restore"}
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </details>
  );
}
