import { useQueries } from "@tanstack/react-query";
import type { AttemptView, ComparisonView } from "../../protocol/generated";
import { formatCost, formatDuration, formatTokens } from "../../lib/format";
import { useServices } from "../context";
import { scriptOk, scriptStatus } from "../worktreeFormat";
import { X } from "lucide-react";

/** A column's letter: A, B, then C, D, … for the attempts added. */
export const letter = (i: number) => String.fromCharCode(65 + i);

export interface Labeled {
  label: string;
  attempt: AttemptView;
}

/** The one attempt whose check passed when exactly one did (among those whose check ran). */
export function suggestedPromotion(attempts: Labeled[]): Labeled | null {
  const passed = attempts.filter((x) => x.attempt.check && scriptOk(x.attempt.check));
  return passed.length === 1 && passed[0]!.attempt.name !== "main" ? passed[0]! : null;
}

/**
 * The extra attempts' views: one comparison each against A (its `b` side is the attempt),
 * cached per pair and read again with `reloadKey`.
 */
export function useExtraAttempts(directory: string, a: string, extras: string[], reloadKey: number) {
  const { api } = useServices();
  return useQueries({
    queries: extras.map((name) => ({
      queryKey: ["compare-extra", directory, a, name, reloadKey],
      queryFn: () => api.compare(directory, a, name).then((c: ComparisonView) => c.b),
      staleTime: Infinity,
    })),
  });
}

/**
 * More than two attempts in one view: a column per attempt (its check, files, cost, time; numbers
 * that are zero are left out), an attempt added from the picker, and one suggested Promote when
 * exactly one attempt's check passed.
 */
export function MoreAttempts({
  attempts,
  extraErrors,
  addable,
  onAdd,
  onRemove,
  onPromote,
}: {
  /** A, B and the added ones (null: still loading). */
  attempts: (Labeled | { label: string; name: string; loading: true })[];
  extraErrors: string[];
  /** Names that can be added. */
  addable: string[];
  onAdd: (name: string) => void;
  onRemove: (name: string) => void;
  onPromote: (x: Labeled) => void;
}) {
  const loaded = attempts.filter((x): x is Labeled => "attempt" in x);
  const suggested = suggestedPromotion(loaded);
  const many = attempts.length > 2;
  return (
    <section className="cmp-more" aria-label="All attempts">
      <div className="row">
        {suggested && (
          <p className="cmp-suggestion small" data-testid="promote-suggestion">
            Only {suggested.label} (<span className="mono">{suggested.attempt.name}</span>) passed its check.{" "}
            <button type="button" className="btn small primary" data-testid="promote-suggested" onClick={() => onPromote(suggested)}>
              Promote {suggested.label}
            </button>
          </p>
        )}
        {addable.length > 0 && (
          <label className="small row cmp-add">
            Add an attempt
            <select
              className="input inline mono"
              data-testid="compare-add"
              value=""
              onChange={(e) => {
                if (e.target.value) onAdd(e.target.value);
              }}
            >
              <option value="">…</option>
              {addable.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {extraErrors.map((e, i) => (
        <p key={i} className="error-text small" role="alert">
          {e}
        </p>
      ))}
      {many && (
        <div className="cmp-columns" data-testid="attempt-columns">
          {attempts.map((x, i) =>
            "attempt" in x ? (
              <AttemptColumn
                key={x.attempt.name}
                x={x}
                suggested={suggested?.attempt.name === x.attempt.name}
                onRemove={i >= 2 ? () => onRemove(x.attempt.name) : undefined}
                onPromote={() => onPromote(x)}
              />
            ) : (
              <section key={x.name} className="cmp-column" data-testid="attempt-column" data-name={x.name}>
                <h3>
                  {x.label} · <span className="mono">{x.name}</span>
                </h3>
                <p className="muted small">Loading…</p>
              </section>
            ),
          )}
        </div>
      )}
    </section>
  );
}

function AttemptColumn({
  x,
  suggested,
  onRemove,
  onPromote,
}: {
  x: Labeled;
  suggested: boolean;
  onRemove?: () => void;
  onPromote: () => void;
}) {
  const { attempt, label } = x;
  const u = attempt.usage;
  const check = attempt.check ?? null;
  const metrics: [string, string, string][] = [];
  if (attempt.stats.additions || attempt.stats.deletions)
    metrics.push(["lines", "Lines", `+${attempt.stats.additions} −${attempt.stats.deletions}`]);
  if (u.steps) metrics.push(["steps", "Steps", String(u.steps)]);
  if (u.input_tokens || u.output_tokens)
    metrics.push(["tokens", "Tokens", `${formatTokens(u.input_tokens)} in · ${formatTokens(u.output_tokens)} out`]);
  if (u.cost) metrics.push(["cost", "Cost", formatCost(u.cost)]);
  if (u.duration_ms) metrics.push(["time", "Time", formatDuration(u.duration_ms)]);
  return (
    <section
      className={`cmp-column${suggested ? " cmp-suggested" : ""}`}
      data-testid="attempt-column"
      data-name={attempt.name}
      aria-label={`Attempt ${label}: ${attempt.name}`}
    >
      <header className="row">
        <h3>
          {label} · <span className="mono">{attempt.name}</span>
        </h3>
        {onRemove && (
          <button type="button" className="icon-btn" aria-label={`Remove ${attempt.name} from the comparison`} onClick={onRemove}>
            <X size={14} aria-hidden />
          </button>
        )}
      </header>
      <p className="small" data-testid="column-status">
        {attempt.stats.files === 0 ? "no changes" : `${attempt.stats.files} file${attempt.stats.files === 1 ? "" : "s"} changed`}
      </p>
      <p className={`small ${check ? (scriptOk(check) ? "add" : "del") : "muted"}`} data-testid="column-check">
        {check ? `Check ${scriptOk(check) ? "✓" : "✗"} ${scriptStatus(check)}` : "Check: not run"}
      </p>
      {metrics.length > 0 && (
        <dl className="cmp-stats">
          {metrics.map(([id, name, value]) => (
            <div key={id}>
              <dt>{name}</dt>
              <dd data-testid={`column-${id}`}>{value}</dd>
            </div>
          ))}
        </dl>
      )}
      {attempt.files.length > 0 && (
        <ul className="cmp-column-files small mono" data-testid="column-files">
          {attempt.files.map((f) => (
            <li key={f.path}>
              {f.path}{" "}
              <span className="muted">
                +{f.additions} −{f.deletions}
              </span>
            </li>
          ))}
        </ul>
      )}
      <button
        type="button"
        className={`btn small${suggested ? " primary" : ""}`}
        data-testid="column-promote"
        disabled={attempt.name === "main"}
        onClick={onPromote}
      >
        Promote {label}
        {suggested ? " (suggested)" : ""}
      </button>
    </section>
  );
}

