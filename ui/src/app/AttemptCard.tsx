import type { AttemptView, ScriptView } from "../protocol/generated";
import { formatCost, formatDuration, formatTokens } from "../lib/format";
import { scriptOk, scriptStatus } from "./Worktrees";
import { BranchPrChip } from "./review/PrChip";

/** One attempt's numbers: files, lines, sessions, tokens, cost, time, its check. */
export function AttemptCard({
  side,
  attempt,
  testId,
  onPromote,
}: {
  side: "A" | "B";
  attempt: AttemptView;
  testId: string;
  onPromote: () => void;
}) {
  const u = attempt.usage;
  return (
    <section className="cmp-attempt" data-testid={testId} aria-label={`Attempt ${side}: ${attempt.name}`}>
      <header className="row">
        <h3>
          {side} · <span className="mono">{attempt.name}</span>
        </h3>
        <BranchPrChip directory={attempt.path} testId="attempt-pr-chip" />
        <button
          type="button"
          className="btn small primary"
          data-testid={`promote-${side.toLowerCase()}`}
          disabled={attempt.name === "main"}
          title={attempt.name === "main" ? "main is already the main tree" : `Promote ${attempt.name}`}
          onClick={onPromote}
        >
          Promote {side}
        </button>
      </header>
      <dl className="cmp-stats">
        <div>
          <dt>Files</dt>
          <dd data-testid="stat-files">{attempt.stats.files}</dd>
        </div>
        <div>
          <dt>Lines</dt>
          <dd data-testid="stat-lines">
            <span className="add">+{attempt.stats.additions}</span> <span className="del">−{attempt.stats.deletions}</span>
          </dd>
        </div>
        <div>
          <dt>Steps</dt>
          <dd data-testid="stat-steps">{u.steps}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd data-testid="stat-tokens" title={`${u.input_tokens} in, ${u.output_tokens} out`}>
            {formatTokens(u.input_tokens)} in · {formatTokens(u.output_tokens)} out
          </dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd data-testid="stat-cost">
            {u.sessions === 0 ? "—" : u.cost === null || u.cost === undefined ? "unknown" : formatCost(u.cost)}
          </dd>
        </div>
        <div>
          <dt>Time</dt>
          <dd data-testid="stat-duration">{u.sessions === 0 ? "—" : formatDuration(u.duration_ms)}</dd>
        </div>
        <div>
          <dt>Sessions</dt>
          <dd>{u.sessions}</dd>
        </div>
      </dl>
      <CheckResult check={attempt.check ?? null} />
    </section>
  );
}

function CheckResult({ check }: { check: ScriptView | null }) {
  if (!check)
    return (
      <p className="small muted" data-testid="check-result">
        Check: not run
      </p>
    );
  const ok = scriptOk(check);
  return (
    <details className="cmp-check" data-testid="check-result" data-ok={ok}>
      <summary className={ok ? "add" : "del"}>
        Check {ok ? "✓" : "✗"} {scriptStatus(check)} <span className="mono muted small">{check.command}</span>
      </summary>
      <pre className="wt-log" data-testid="check-output">
        {check.output || "(no output)"}
      </pre>
    </details>
  );
}

/**
 * The files either attempt changed, with how they compare: a react-aria-components listbox (one
 * tab stop; ArrowUp/ArrowDown/Home/End and typing a name move the selection with the focus).
 */
