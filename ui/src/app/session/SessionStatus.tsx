import { isCompacting, type SessionState } from "../../state/session";
import type { SessionStore } from "../../state/store";
import { compactingDetail } from "../../lib/compaction";
import { Loader2, X } from "lucide-react";

/**
 * The lines under the conversation that say how the session stands: how the last turn ended
 * (when it did not complete), a compaction running or failed, a retry on its way, an error
 * (with Retry when sending again can help).
 */
export function SessionStatus({
  state,
  store,
  canRetry,
  onRetry,
}: {
  state: SessionState;
  store: SessionStore;
  canRetry: boolean;
  onRetry: () => void;
}) {
  const compacting = isCompacting(state);
  const running = state.compaction?.state === "running" ? state.compaction : null;
  const failed = state.compaction?.state === "failed" ? state.compaction : null;
  return (
    <>
      {!state.running && state.lastTurn && state.lastTurn.end !== "completed" && state.lastTurn.end !== "error" && (
        <div className="status-line muted small" role="status" data-testid="turn-end">
          {state.lastTurn.end === "cancelled"
            ? "Stopped."
            : state.lastTurn.end === "step_limit"
              ? `Stopped after ${state.lastTurn.steps} steps (the agent's step limit). Send a message to continue.`
              : "The turn was blocked (see the last tool result)."}
        </div>
      )}
      {compacting && (
        <div className="status-line compaction-status" role="status" data-testid="compacting">
          <span className="compaction-dot" aria-hidden>
            <Loader2 size={13} className="spin" />
          </span>{" "}
          Compacting the conversation…
          <span className="muted"> {compactingDetail(running?.trigger, running?.tokensBefore)}</span>
        </div>
      )}
      {failed && (
        <div className="error-banner" role="alert" data-testid="compaction-failed">
          <span>Could not compact the conversation: {failed.message}</span>
          <button
            type="button"
            className="icon-btn"
            aria-label="Dismiss the compaction error"
            onClick={() => store.update((s) => (s.compaction?.state === "failed" ? { ...s, compaction: null } : s))}
          >
            <X size={14} aria-hidden />
          </button>
        </div>
      )}
      {state.retrying && (
        <div className="status-line muted small" role="status">
          Retrying (attempt {state.retrying.attempt}) in {Math.round(state.retrying.delayMs / 1000)} s: {state.retrying.reason}
        </div>
      )}
      {state.error && (
        <div className="error-banner" role="alert" data-testid="error-banner">
          <span>{state.error.message}</span>
          {canRetry && (
            <button type="button" className="btn small" data-testid="retry" onClick={onRetry}>
              Retry
            </button>
          )}
          <button
            type="button"
            className="icon-btn"
            aria-label="Dismiss error"
            onClick={() => store.update((s) => ({ ...s, error: null }))}
          >
            <X size={14} aria-hidden />
          </button>
        </div>
      )}
    </>
  );
}
