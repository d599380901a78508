import type { CostLine, CostView } from "../protocol/generated";
import { formatCostFine, formatTokens } from "../lib/format";

function Row({ line, label, testId }: { line: CostLine; label?: string; testId: string }) {
  return (
    <tr data-testid={testId} data-agent={line.agent || undefined} data-model={line.model || undefined}>
      {label ? (
        <th scope="row">{label}</th>
      ) : (
        <td>
          <span className="cost-agent">{line.agent}</span>
          <span className="mono small muted cost-model" title={line.model}>
            {/* Wraps after the provider, never inside a name. */}
            {line.model.split("/").map((part, i) => (
              <span key={i}>
                {i > 0 && (
                  <>
                    /<wbr />
                  </>
                )}
                {part}
              </span>
            ))}
          </span>
        </td>
      )}
      <td className="num">{line.requests}</td>
      <td className="num" title={`${line.input_tokens} input tokens`}>
        {formatTokens(line.input_tokens)}
      </td>
      <td className="num" title={`${line.output_tokens} output tokens`}>
        {formatTokens(line.output_tokens)}
      </td>
      <td className="num" title={`cache read ${line.cache_read_tokens} / write ${line.cache_write_tokens}`}>
        {formatTokens(line.cache_read_tokens)} / {formatTokens(line.cache_write_tokens)}
      </td>
      <td className="num">{formatCostFine(line.cost_usd)}</td>
    </tr>
  );
}

/** A session's cost (`/cost`): per agent and model, the session alone, and with its subagents. */
export function CostTable({
  view,
  onOpenSession,
  sessionTitle,
}: {
  view: CostView;
  onOpenSession?: (id: string) => void;
  sessionTitle?: (id: string) => string | undefined;
}) {
  const n = view.subagent_sessions.length;
  return (
    <div className="cost-view" data-testid="cost-view">
      <table className="table cost-table" data-testid="cost-table">
        <thead>
          <tr>
            <th>Agent · model</th>
            <th className="num">Req.</th>
            <th className="num">In</th>
            <th className="num">Out</th>
            <th className="num">Cache r/w</th>
            <th className="num">Cost</th>
          </tr>
        </thead>
        <tbody>
          {view.lines.length === 0 && (
            <tr>
              <td colSpan={6} className="muted">
                Nothing used yet.
              </td>
            </tr>
          )}
          {view.lines.map((l) => (
            <Row key={`${l.agent}\n${l.model}`} line={l} testId="cost-line" />
          ))}
        </tbody>
        <tfoot>
          <Row line={view.session} label="This session" testId="cost-session" />
          <Row
            line={view.total}
            label={n ? `Total with ${n} subagent session${n === 1 ? "" : "s"}` : "Total"}
            testId="cost-total"
          />
        </tfoot>
      </table>
      {n > 0 && (
        <p className="muted small">
          Subagent sessions:{" "}
          {view.subagent_sessions.map((id, i) => (
            <span key={id}>
              {i > 0 && ", "}
              {onOpenSession ? (
                <button type="button" className="link-btn" onClick={() => onOpenSession(id)} data-testid="cost-subagent" title={id}>
                  {sessionTitle?.(id) ?? id}
                </button>
              ) : (
                <span title={id}>{sessionTitle?.(id) ?? id}</span>
              )}
            </span>
          ))}
        </p>
      )}
      <p className="muted small">Prices from the model catalog; a model without a price counts $0.</p>
    </div>
  );
}

/** The Cost tab: a session's cost as loaded (GET /api/sessions/{id}/cost, cached by the side panel). */
export function CostPanel({
  view,
  error,
  onOpenSession,
  sessionTitle,
}: {
  view: CostView | null;
  error: string | null;
  onOpenSession?: (id: string) => void;
  sessionTitle?: (id: string) => string | undefined;
}) {
  return (
    <>
      {error && (
        <div className="error-text" role="alert">
          Could not load the cost: {error}
        </div>
      )}
      {!view && !error && <div className="muted">Loading…</div>}
      {view && <CostTable view={view} onOpenSession={onOpenSession} sessionTitle={sessionTitle} />}
    </>
  );
}
