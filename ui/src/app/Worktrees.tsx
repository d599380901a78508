import { useCallback, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { keys } from "../state/queries";
import type { ScriptView, WorktreeCreated, WorktreeSessionRef, WorktreeView } from "../protocol/generated";
import { errorMessage, type TryAttempt } from "../lib/api";
import { formatBytes, formatDuration, relativeTime } from "../lib/format";
import { useServices, useToast } from "./context";
import { Modal } from "./Modal";
import { useRemoveWorktree } from "./useRemoveWorktree";
import { useWorktreeLog, type LogLine } from "./useWorktreeLog";

export const shortSha = (sha: string) => sha.slice(0, 7);

/** Whether a start or check script succeeded. */
export const scriptOk = (s: ScriptView) => !s.cancelled && s.exit_code === 0;

export function scriptStatus(s: ScriptView): string {
  if (s.cancelled) return `cancelled after ${formatDuration(s.duration_ms)}`;
  if (s.exit_code === null || s.exit_code === undefined) return `killed after ${formatDuration(s.duration_ms)}`;
  return `${s.exit_code === 0 ? "passed" : "failed"} (exit ${s.exit_code}) in ${formatDuration(s.duration_ms)}`;
}

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
      await api.resetWorktree(directory, w.name);
      toast(`Reset ${w.name} to ${shortSha(w.base)}`, "info");
      await reload();
    } catch (e) {
      toast(errorMessage(e));
    }
  };

  return (
    <div className="wt-view" data-testid="worktrees-view">
      <header className="conv-header">
        <button type="button" className="btn small" onClick={onBack} data-testid="worktrees-back">
          ← Sessions
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
          ⟳ Refresh
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
        </div>
      </div>
      {removal.dialog}
      {resetting && (
        <Modal title={`Reset ${resetting.name}?`} onClose={() => setResetting(null)} testId="worktree-reset-confirm">
          <p>
            Back to its base <span className="mono">{shortSha(resetting.base)}</span>:{" "}
            {lossText(resetting) || "it has no changes of its own, so nothing is lost"}.
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
      <td className="mono small">{w.branch}</td>
      <td className="mono small" title={w.base}>
        {w.base_ref ? `${w.base_ref} @ ` : ""}
        {shortSha(w.base)}
      </td>
      <td className="small" title={new Date(w.created_at).toLocaleString()}>
        {relativeTime(w.created_at)}
      </td>
      <td className="small">{formatBytes(w.size_bytes)}</td>
      <td className="small wt-state" data-testid="worktree-state">
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
          <span className="chip wt-unmerged" title="It has work its base does not have">
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
        <button type="button" className="btn small" onClick={onReset} data-testid="worktree-reset">
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

function LogView({ lines }: { lines: LogLine[] }) {
  return (
    <pre className="wt-log" data-testid="worktree-log" aria-live="polite">
      {lines.map((l, i) => (
        <div key={i} className={l.stderr ? "wt-log-err" : undefined}>
          {l.line}
        </div>
      ))}
    </pre>
  );
}

function CreateForm({ directory, onCreated }: { directory: string; onCreated: () => void }) {
  const { api } = useServices();
  const log = useWorktreeLog(directory);
  const [name, setName] = useState("");
  const [base, setBase] = useState("");
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<WorktreeCreated | null>(null);
  const [error, setError] = useState<string | null>(null);

  const submit = async () => {
    const n = name.trim();
    setRunning(true);
    setResult(null);
    setError(null);
    log.start(n ? [n] : undefined);
    try {
      const created = await api.createWorktree(directory, n || undefined, base.trim() || undefined);
      log.narrow([created.name]);
      setResult(created);
      setName("");
      setBase("");
      onCreated();
    } catch (e) {
      log.stop();
      setError(errorMessage(e));
    } finally {
      setRunning(false);
    }
  };

  return (
    <section className="wt-card" aria-label="Create a worktree">
      <h3>New worktree</h3>
      <form
        className="wt-form"
        data-testid="worktree-create"
        onSubmit={(e) => {
          e.preventDefault();
          if (!running) void submit();
        }}
      >
        <label>
          Name <span className="muted small">(optional)</span>
          <input
            className="input mono"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="a generated adjective-noun"
            data-testid="worktree-name"
          />
        </label>
        <label>
          Base <span className="muted small">(optional)</span>
          <input
            className="input mono"
            value={base}
            onChange={(e) => setBase(e.target.value)}
            placeholder="HEAD, a branch, tag or commit"
            data-testid="worktree-base"
          />
        </label>
        <button type="submit" className="btn primary" disabled={running} data-testid="worktree-create-submit">
          {running ? "Creating…" : "Create"}
        </button>
      </form>
      {error && (
        <p className="error-text" role="alert" data-testid="worktree-create-error">
          {error}
        </p>
      )}
      {(running || log.lines.length > 0) && (
        <>
          <p className="small muted">{running ? "Running the start scripts…" : "Start-script output"}</p>
          <LogView lines={log.lines} />
        </>
      )}
      {result && <CreatedResult created={result} />}
    </section>
  );
}

function CreatedResult({ created }: { created: WorktreeCreated }) {
  const failed = created.scripts.filter((s) => !scriptOk(s));
  return (
    <div className="wt-result" data-testid="worktree-result" role="status">
      <p>
        Created <strong className="mono">{created.name}</strong> on branch <span className="mono">{created.branch}</span> from{" "}
        <span className="mono">{shortSha(created.base)}</span> at <span className="mono small">{created.path}</span>
        {created.submodules ? " (submodules initialised)" : ""}.
      </p>
      {failed.length > 0 && (
        <p className="warning" data-testid="worktree-script-failed">
          {failed.length === 1 ? "A start script" : `${failed.length} start scripts`} failed; the worktree was kept so you
          can look at it (or remove it).
        </p>
      )}
      <p className="small">
        {created.included.length === 0 ? (
          <span className="muted">No ignored files copied (.worktreeinclude).</span>
        ) : (
          <>
            Copied from .worktreeinclude:{" "}
            <span data-testid="worktree-included">
              {created.included.map((f) => (
                <span key={f} className="chip mono">
                  {f}
                </span>
              ))}
            </span>
          </>
        )}
      </p>
      {created.scripts.length > 0 && (
        <ul className="wt-scripts" data-testid="worktree-scripts">
          {created.scripts.map((s, i) => (
            <li key={i} className={scriptOk(s) ? "add" : "del"}>
              <span aria-hidden>{scriptOk(s) ? "✓" : "✗"}</span> <span className="mono">{s.command}</span> — {scriptStatus(s)}
            </li>
          ))}
        </ul>
      )}
    </div>
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
