import { useId, useState } from "react";
import type { ReactNode } from "react";
import { ChevronDown, ChevronRight, RotateCcw, Undo2 } from "lucide-react";
import type { TimelineStep } from "../../protocol/generated";
import { KIND_BADGE, clockTime, stepLabel } from "./format";

interface StepEntryProps {
  step: TimelineStep;
  busy: boolean;
  busyReason: string;
  onUndo: () => void;
  onRevert: () => void;
  /** The step's own diff (e.g. the shared DiffView), shown when the person expands it. */
  renderDiff?: ((step: TimelineStep) => ReactNode) | undefined;
  /** The preview panel, when it was opened from this step. */
  panel: ReactNode;
}

/** One file-changing step: tool, time, files with +/−, its diff on demand, and its history actions. */
export function StepEntry({ step, busy, busyReason, onUndo, onRevert, renderDiff, panel }: StepEntryProps) {
  const [open, setOpen] = useState(false);
  const diffId = useId();
  const actionable = step.kind === "tool" && !step.undone;
  const label = stepLabel(step);
  const uncaptured = step.uncaptured ?? [];
  const additions = step.changes.reduce((n, c) => n + (c.additions ?? 0), 0);
  const deletions = step.changes.reduce((n, c) => n + (c.deletions ?? 0), 0);
  const showDiff = renderDiff !== undefined && step.kind === "tool" && step.changes.length > 0;
  return (
    <li
      className={`mia-tl-step mia-tl-kind-${step.kind}${step.undone ? " mia-tl-undone" : ""}`}
      data-testid="timeline-step"
      data-step-id={step.id}
      data-undone={step.undone ? "true" : undefined}
    >
      <div className="mia-tl-step-head">
        <span className="mia-tl-index">#{step.index}</span>
        <span className={`mia-tl-tool${step.kind === "tool" ? "" : " mia-tl-tool-history"}`}>{label}</span>
        <time className="mia-tl-time" dateTime={new Date(step.created_at).toISOString()}>
          {clockTime(step.created_at)}
        </time>
        {step.undone && <span className="mia-tl-undone-tag">Undone</span>}
        {actionable && (
          <span className="mia-tl-step-actions">
            <button
              type="button"
              className="mia-tl-btn mia-tl-btn-small"
              data-testid="timeline-undo-step"
              disabled={busy}
              title={busy ? busyReason : "Preview undoing only this step"}
              onClick={onUndo}
            >
              <Undo2 size={12} aria-hidden /> Undo
            </button>
            <button
              type="button"
              className="mia-tl-btn mia-tl-btn-small"
              data-testid="timeline-revert-here"
              disabled={busy}
              title={busy ? busyReason : "Preview the files as they were before this message's first change"}
              onClick={onRevert}
            >
              <RotateCcw size={12} aria-hidden /> Restore to here
            </button>
          </span>
        )}
      </div>
      <ul className="mia-tl-files">
        {step.changes.map((c) => (
          <li key={c.path} className="mia-tl-file">
            <span className={`mia-tl-badge mia-tl-badge-${c.kind}`} title={c.kind}>
              {KIND_BADGE[c.kind]}
            </span>
            <code className="mia-tl-path">{c.path}</code>
            {(c.additions !== undefined || c.deletions !== undefined) && (
              <span className="mia-tl-counts">
                <span className="mia-tl-add">+{c.additions ?? 0}</span>{" "}
                <span className="mia-tl-del">−{c.deletions ?? 0}</span>
              </span>
            )}
          </li>
        ))}
      </ul>
      {uncaptured.length > 0 && (
        <p className="mia-tl-uncaptured">
          Not restorable (not captured): {uncaptured.map((p) => <code key={p}>{p}</code>)}
        </p>
      )}
      <div className="mia-tl-step-more">
        {showDiff && (
          <button
            type="button"
            className="link-btn small mia-tl-diff-toggle"
            data-testid="timeline-step-diff-toggle"
            aria-expanded={open}
            aria-controls={diffId}
            onClick={() => setOpen((o) => !o)}
          >
            {open ? <ChevronDown size={12} aria-hidden /> : <ChevronRight size={12} aria-hidden />}{" "}
            {open ? "Hide the diff" : "Show the diff"}
            {!open && (additions > 0 || deletions > 0) && (
              <span className="mia-tl-counts">
                {" "}
                <span className="mia-tl-add">+{additions}</span> <span className="mia-tl-del">−{deletions}</span>
              </span>
            )}
          </button>
        )}
        <details className="mia-tl-details">
          <summary>Details</summary>
          <dl className="mia-tl-details-list">
            <dt>Step</dt>
            <dd>
              <code>{step.id}</code>
            </dd>
            <dt>Message</dt>
            <dd>
              <code>{step.message_id}</code>
            </dd>
            {step.tool_call_id && (
              <>
                <dt>Tool call</dt>
                <dd>
                  <code>{step.tool_call_id}</code>
                </dd>
              </>
            )}
            <dt>Snapshots</dt>
            <dd>
              <code>{step.before.slice(0, 12)}</code> → <code>{step.after.slice(0, 12)}</code>
            </dd>
          </dl>
        </details>
      </div>
      {showDiff && open && (
        <div className="mia-tl-step-diff" id={diffId} data-testid="timeline-step-diff">
          {renderDiff(step)}
        </div>
      )}
      {panel}
    </li>
  );
}
