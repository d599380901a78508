import { useCallback, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { keys } from "../state/queries";
import type { WorktreeSessionRef, WorktreeView } from "../protocol/generated";
import { errorMessage, type TryAttempt } from "../lib/api";
import { formatBytes, relativeTime } from "../lib/format";
import { useServices, useToast } from "./context";
import { Modal } from "./Modal";
import { useRemoveWorktree } from "./useRemoveWorktree";
import { CreateForm } from "./WorktreeCreate";
import { scriptOk, shortSha } from "./worktreeFormat";
import { WorktreeTrash } from "./WorktreeTrash";
import { BranchPrChip } from "./review/PrChip";
import { ArrowLeft, RefreshCw } from "lucide-react";

export { scriptOk, scriptStatus, shortSha } from "./worktreeFormat";

/** The project's worktrees: list with state, create (live start-script log), remove, reset, "try N ways". */
export function Worktrees({
  directory,
  onBack,
  onCompare,
  onOpenSession,
}: {
  directory: string;
  onBack: () => void;
  /** Opens the comparison screen (A and B: worktree names or `main`). */
  onCompare: (a?: string, b?: string) => void;
  onOpenSession: (id: string) => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const [resetting, setResetting] = useState<WorktreeView | null>(null);
  // The project's worktrees: cached (TanStack Query), read again on open, on Refresh and after
  // what this view changes; a session's turn ending (its worktree's status) makes them stale.
  const queryClient = useQueryClient();
  const query = useQuery({ queryKey: keys.worktrees(directory), queryFn: () => api.worktrees(directory), staleTime: 0 });
  const list: WorktreeView[] | null = query.data ?? null;
  const error = query.error ? errorMessage(query.error) : null;
  const reload = useCallback(
    (): Promise<void> => queryClient.invalidateQueries({ queryKey: keys.worktrees(directory) }),
    [queryClient, directory],
  );

  const removal = useRemoveWorktree(directory, (removed) => {
    queryClient.setQueryData<WorktreeView[]>(keys.worktrees(directory), (l) => l?.filter((w) => w.name !== removed.name));
    void reload();
  });

  const reset = async (w: WorktreeView) => {
    setResetting(null);
    try {
      const r = await api.resetWorktree(directory, w.name);
      const kept = r.trash ? `; what it dropped is in the trash (${r.trash.id})` : "";
      toast(`Reset ${w.name} to ${shortSha(w.base)}${kept}`, "info");
      await reload();
    } catch (e) {
      toast(errorMessage(e));
    }
  };

  return (
    <div className="wt-view" data-testid="worktrees-view">
      <header className="conv-header">
        <button type="button" className="btn small" onClick={onBack} data-testid="worktrees-back">
          <ArrowLeft size={14} aria-hidden />
          Sessions
        </button>
        <h1 className="conv-title">Worktrees</h1>
        <button
          type="button"
          className="btn small"
          data-testid="open-compare"
          disabled={!list || list.length === 0}
          onClick={() => onCompare()}
        >
          Compare attempts…
        </button>
        <button type="button" className="btn small" onClick={() => void reload()} aria-label="Refresh the list">
          <RefreshCw size={13} aria-hidden />
          Refresh
        </button>
      </header>
      <div className="wt-body">
        <section aria-label="Worktrees of this project">
          {error && <p className="error-text">{error}</p>}
          {!list && !error && (
            <p className="muted" role="status" data-testid="worktrees-loading">
              Loading…
            </p>
          )}
          {list?.length === 0 && (
            <p className="muted" data-testid="worktrees-empty">
              No worktrees yet. Create one below, or try a prompt several ways at once.
            </p>
          )}
          {list && list.length > 0 && (
            <div className="table-scroll wt-table-scroll" tabIndex={0} role="region" aria-label="Worktrees">
              <table className="table wt-table" data-testid="worktrees">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Branch</th>
                    <th>Base</th>
                    <th>Age</th>
                    <th>Size</th>
                    <th>State</th>
                    <th>Sessions</th>
                    <th>
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((w) => (
                    <WorktreeRow
                      key={w.name}
                      w={w}
                      busy={removal.busy === w.name}
                      onRemove={() => void removal.remove(w.name)}
                      onReset={() => setResetting(w)}
                      onCompare={() => onCompare(w.name, "main")}
                      onOpenSession={onOpenSession}
                    />
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
        <div className="wt-forms">
          <CreateForm directory={directory} onCreated={() => void reload()} />
          <TryForm
            directory={directory}
            onStarted={() => void reload()}
            onOpenSession={onOpenSession}
            onCompare={onCompare}
          />
          <WorktreeTrash directory={directory} />
        </div>
      </div>
      {removal.dialog}
      {resetting && (
        <Modal title={`Reset ${resetting.name}?`} onClose={() => setResetting(null)} testId="worktree-reset-confirm">
          <p>
            Back to its base <span className="mono">{shortSha(resetting.base)}</span>:{" "}
            {lossText(resetting) || "it has no changes of its own, so nothing is lost"}.
            {lossText(resetting) && " A copy goes to the worktree trash first (Trash, below), from where it can be restored."}
          </p>
          <div className="row-end">
            <button type="button" className="btn" onClick={() => setResetting(null)} autoFocus>
              Cancel
            </button>
            <button
              type="button"
              className="btn danger"
              data-testid="worktree-reset-confirm-button"
              onClick={() => void reset(resetting)}
            >
              Reset
            </button>
          </div>
        </Modal>
      )}
    </div>
  );
}

/** "2 uncommitted changes and 1 commit are dropped" (empty when there is nothing of its own). */
function lossText(w: WorktreeView): string {
  const parts: string[] = [];
  if (w.dirty.length) parts.push(`${w.dirty.length} uncommitted change${w.dirty.length === 1 ? "" : "s"}`);
  if (w.ahead) parts.push(`${w.ahead} commit${w.ahead === 1 ? "" : "s"} of its own`);
  return parts.length ? `${parts.join(" and ")} ${parts.length > 1 || w.dirty.length + w.ahead > 1 ? "are" : "is"} dropped` : "";
}

function WorktreeRow({
  w,
  busy,
  onRemove,
  onReset,
  onCompare,
  onOpenSession,
}: {
  w: WorktreeView;
  busy: boolean;
  onRemove: () => void;
  onReset: () => void;
  onCompare: () => void;
  onOpenSession: (id: string) => void;
}) {
  return (
    <tr data-testid="worktree-row" data-name={w.name}>
      <td>
        <strong className="mono" title={w.path}>
          {w.name}
        </strong>
      </td>
      <td className="mono small">
        {w.branch}
        {w.state !== "missing" && (
          <>
            {" "}
            <BranchPrChip directory={w.path} testId="worktree-pr-chip" />
          </>
        )}
      </td>
      <td className="mono small" title={w.base}>
        {w.base_ref ? `${w.base_ref} @ ` : ""}
        {shortSha(w.base)}
      </td>
      <td className="small" title={new Date(w.created_at).toLocaleString()}>
        {relativeTime(w.created_at)}
      </td>
      <td className="small">{formatBytes(w.size_bytes)}</td>
      <td className="small wt-state" data-testid="worktree-state" data-state={w.state}>
        {w.state === "missing" && (
          <span className="chip wt-unmerged" title={`${w.path} is gone: moved or deleted by hand`} data-testid="worktree-missing">
            folder missing
          </span>
        )}
        {w.state === "branch-changed" && (
          <span
            className="chip wt-unmerged"
            title={`Mia Code made it on ${w.recorded_branch}; ${w.branch} is checked out there now. Its commands act only on ${w.recorded_branch}.`}
            data-testid="worktree-branch-changed"
          >
            on another branch
          </span>
        )}
        {w.dirty.length > 0 && (
          <span className="chip wt-dirty" title={w.dirty.join("\n")}>
            {w.dirty.length} uncommitted
          </span>
        )}
        {w.ahead > 0 && (
          <span className="chip wt-ahead">
            {w.ahead} commit{w.ahead === 1 ? "" : "s"} ahead
          </span>
        )}
        {w.merged ? (
          <span className="chip wt-merged" title="Removing it loses nothing">
            merged
          </span>
        ) : (
          <span className="chip wt-unmerged" title={w.would_lose ? `Removing it would lose ${w.would_lose}` : "It has work its base does not have"}>
            unmerged work
          </span>
        )}
        {w.dirty.length === 0 && w.ahead === 0 && <span className="muted"> clean</span>}
      </td>
      <td className="small">
        {w.sessions.length === 0 && <span className="muted">none</span>}
        <ul className="wt-sessions">
          {w.sessions.map((s) => (
            <SessionLink key={s.id} s={s} onOpen={onOpenSession} />
          ))}
        </ul>
      </td>
      <td className="wt-actions">
        <button type="button" className="btn small" onClick={onCompare} data-testid="worktree-compare">
          Compare
        </button>
        <button
          type="button"
          className="btn small"
          onClick={onReset}
          disabled={w.state !== "ok"}
          title={w.state !== "ok" ? "Only a worktree on the branch Mia Code made it on can be reset" : undefined}
          data-testid="worktree-reset"
        >
          Reset
        </button>
        <button type="button" className="btn small danger" onClick={onRemove} disabled={busy} data-testid="worktree-remove">
          Remove
        </button>
      </td>
    </tr>
  );
}

function SessionLink({ s, onOpen }: { s: WorktreeSessionRef; onOpen: (id: string) => void }) {
  return (
    <li>
      <button type="button" className="link-btn" onClick={() => onOpen(s.id)} data-testid="worktree-session">
        {s.title || s.id.slice(0, 8)}
      </button>
      {s.status !== "idle" && <span className="muted"> · {s.status === "busy" ? "running" : s.status}</span>}
    </li>
  );
}

function TryForm({
  directory,
  onStarted,
  onOpenSession,
  onCompare,
}: {
  directory: string;
  onStarted: () => void;
  onOpenSession: (id: string) => void;
  onCompare: (a?: string, b?: string) => void;
}) {
  const { api } = useServices();
  const [text, setText] = useState("");
  const [n, setN] = useState(2);
  const [running, setRunning] = useState(false);
  const [attempts, setAttempts] = useState<TryAttempt[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const submit = async () => {
    if (!text.trim()) return;
    setRunning(true);
    setError(null);
    setAttempts(null);
    try {
      const r = await api.tryWays(directory, text.trim(), n);
      setAttempts(r.attempts);
      setText("");
      onStarted();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setRunning(false);
    }
  };

  return (
    <section className="wt-card" aria-label="Try N ways">
      <h3>Try N ways</h3>
      <form
        className="stack"
        data-testid="worktree-try"
        onSubmit={(e) => {
          e.preventDefault();
          if (!running) void submit();
        }}
      >
        <label className="stack">
          <span className="small muted">One prompt, started in separate new worktrees, each its own session.</span>
          <textarea
            className="input"
            rows={3}
            value={text}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                if (!running) void submit();
              }
            }}
            placeholder="What should each attempt do?"
            aria-label="Prompt for every attempt"
            data-testid="worktree-try-text"
          />
        </label>
        <div className="row">
          <label className="row">
            Attempts
            <select
              className="input inline"
              value={n}
              onChange={(e) => setN(Number(e.target.value))}
              data-testid="worktree-try-n"
            >
              {[2, 3, 4].map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </label>
          <button
            type="submit"
            className="btn primary"
            disabled={running || !text.trim()}
            data-testid="worktree-try-submit"
          >
            {running ? "Starting…" : `Start ${n} attempts`}
          </button>
        </div>
      </form>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {attempts && (
        <div className="wt-result" data-testid="worktree-try-result" role="status">
          <p>Started {attempts.length} attempts:</p>
          <ul className="wt-sessions">
            {attempts.map((a) => (
              <li key={a.session.id} data-testid="worktree-try-attempt">
                <span className="mono">{a.worktree.name}</span> —{" "}
                <button type="button" className="link-btn" onClick={() => onOpenSession(a.session.id)}>
                  {a.session.title || a.session.id}
                </button>
                {a.worktree.scripts.some((s) => !scriptOk(s)) && <span className="del small"> (a start script failed)</span>}
              </li>
            ))}
          </ul>
          {attempts.length >= 2 && (
            <button
              type="button"
              className="btn small"
              onClick={() => onCompare(attempts[0]!.worktree.name, attempts[1]!.worktree.name)}
            >
              Compare {attempts[0]!.worktree.name} and {attempts[1]!.worktree.name}
            </button>
          )}
        </div>
      )}
    </section>
  );
}
