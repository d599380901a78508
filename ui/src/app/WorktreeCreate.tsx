import { useState } from "react";
import type { WorktreeCreated } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { useWorktreeLog, type LogLine } from "./useWorktreeLog";
import { scriptOk, scriptStatus, shortSha } from "./worktreeFormat";

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

/** "New worktree": name and base, the start scripts' log live, what was made. */
export function CreateForm({ directory, onCreated }: { directory: string; onCreated: () => void }) {
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
