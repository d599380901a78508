import type { ReactNode } from "react";
import type { TimelineStep } from "../../protocol/generated";
import { KIND_BADGE, clockTime, stepLabel } from "./format";

interface StepEntryProps {
  step: TimelineStep;
  busy: boolean;
  busyReason: string;
  onUndo: () => void;
  onRevert: () => void;
  /** The preview panel, when it was opened from this step. */
  panel: ReactNode;
}

/** One file-changing step: tool, time, files with +/−, and its history actions. */
export function StepEntry({ step, busy, busyReason, onUndo, onRevert, panel }: StepEntryProps) {
  const actionable = step.kind === "tool" && !step.undone;
  const label = stepLabel(step);
  const uncaptured = step.uncaptured ?? [];
  return (
    <li
      className={`mia-tl-step mia-tl-kind-${step.kind}${step.undone ? " mia-tl-undone" : ""}`}
      data-testid="timeline-step"
      data-step-id={step.id}
    >
      <div className="mia-tl-step-head">
        <span className="mia-tl-index">#{step.index}</span>
        <span className={`mia-tl-tool${step.kind === "tool" ? "" : " mia-tl-tool-history"}`}>{label}</span>
        <time className="mia-tl-time" dateTime={new Date(step.created_at).toISOString()}>
          {clockTime(step.created_at)}
        </time>
        {step.undone && <span className="mia-tl-undone-tag">undone</span>}
        {actionable && (
          <span className="mia-tl-step-actions">
            <button
              type="button"
              className="mia-tl-btn mia-tl-btn-small"
              data-testid="timeline-undo-step"
              disabled={busy}
              title={busy ? busyReason : `Preview undoing step #${step.index}`}
              onClick={onUndo}
            >
              Undo this step
            </button>
            <button
              type="button"
              className="mia-tl-btn mia-tl-btn-small"
              data-testid="timeline-revert-here"
              disabled={busy}
              title={busy ? busyReason : "Preview restoring the files to before this message"}
              onClick={onRevert}
            >
              Revert to here
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
      {panel}
    </li>
  );
}
