import { useCallback, useEffect, useEffectEvent, useRef, useState } from "react";
import type { ReactNode } from "react";
import type {
  FileDiff,
  HistoryAction,
  RevertPreview,
  RevertSummary,
  TimelineStep,
} from "../../protocol/generated";
import { PreviewPanel } from "./PreviewPanel";
import type { PanelState } from "./PreviewPanel";
import { StepEntry } from "./StepEntry";
import { errorText, resultText } from "./format";
import "./UndoTimeline.css";
import { Redo2 } from "lucide-react";

export interface UndoTimelineProps {
  /** The session's file-changing steps (any order; shown oldest first, newest last). */
  steps: TimelineStep[];
  /** Compute what an action would change, without changing anything. */
  onPreview: (action: HistoryAction) => Promise<RevertPreview>;
  /**
   * Apply an undo/revert. `force` is true only after the person chose to overwrite files changed
   * outside Mia Code. A result with `applied: false` (HTTP 409) is shown as conflicts.
   */
  onApply: (action: HistoryAction, force: boolean) => Promise<RevertSummary>;
  /**
   * Apply a redo (its preview comes from `onPreview({action: "redo"})`). The Redo button is shown
   * when this is given and some step is undone.
   */
  onRedo?: (force: boolean) => Promise<RevertSummary>;
  /** Render a preview's diff (e.g. with DiffView). */
  renderDiff?: (files: FileDiff[]) => ReactNode;
  /** Render one step's own diff (expandable under the step). */
  renderStepDiff?: (step: TimelineStep) => ReactNode;
  /** More buttons in the header (e.g. the whole session's diff). */
  headerTools?: ReactNode;
  /** Shown under the header, above the steps (e.g. the whole session's diff when asked for). */
  top?: ReactNode;
  /** A turn is running: history actions are disabled. */
  busy?: boolean;
}

const BUSY_REASON = "A turn is running: wait for it to finish (or stop it) before undoing.";
const RESULT_MS = 8000;

interface Result {
  /** In plain words. */
  text: string;
  /** The runtime's own words (snapshots, ids): under "Details". */
  message: string;
  backups: { path: string; backup: string }[];
}

/** The session's file-changing steps with point-and-click undo, each previewed before it is applied. */
export function UndoTimeline({
  steps,
  onPreview,
  onApply,
  onRedo,
  renderDiff,
  renderStepDiff,
  headerTools,
  top,
  busy = false,
}: UndoTimelineProps) {
  const [panel, setPanel] = useState<PanelState | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  // Answers of an older preview request (another button was clicked since) are dropped.
  const requestNo = useRef(0);

  useEffect(() => {
    if (!result) return;
    const timer = setTimeout(() => setResult(null), RESULT_MS);
    return () => clearTimeout(timer);
  }, [result]);

  const openPreview = useCallback(
    /** `key` says where the panel opens: under the step whose button was pressed, or "redo". */
    (action: HistoryAction, key: string) => {
      const no = ++requestNo.current;
      setResult(null);
      setPanel({ key, action, phase: "loading" });
      onPreview(action).then(
        (preview) => {
          if (no !== requestNo.current) return;
          setPanel({ key, action, phase: "ready", preview });
        },
        (err: unknown) => {
          if (no !== requestNo.current) return;
          setPanel({ key, action, phase: "error", message: errorText(err) });
        },
      );
    },
    [onPreview],
  );

  // The session moved on under an open preview (a turn added or undid steps): preview again, so
  // Apply never carries out a plan nobody saw.
  const stepsKey = steps.map((st) => `${st.id}${st.undone ? "~" : ""}`).join(",");
  const previewAgain = useEffectEvent(() => {
    if (panel && (panel.phase === "ready" || panel.phase === "loading" || panel.phase === "error")) {
      openPreview(panel.action, panel.key);
    }
  });
  const seenKey = useRef(stepsKey);
  useEffect(() => {
    if (seenKey.current === stepsKey) return;
    seenKey.current = stepsKey;
    previewAgain();
  }, [stepsKey]);

  const cancel = useCallback(() => {
    requestNo.current++;
    setPanel(null);
  }, []);

  const apply = useCallback(
    (force: boolean) => {
      if (!panel || panel.phase === "loading" || panel.phase === "applying") return;
      const { action, key } = panel;
      const preview = panel.preview;
      const no = ++requestNo.current;
      setPanel({ key, action, phase: "applying", preview });
      const run =
        action.action === "redo" && onRedo ? onRedo(force) : onApply(action, force);
      run.then(
        (summary) => {
          if (no !== requestNo.current) return;
          if (!summary.applied) {
            // Nothing was changed: show why, and offer the explicit overwrite.
            setPanel({ key, action, phase: "refused", preview, summary });
            return;
          }
          setPanel(null);
          setResult({
            text: resultText(action.action, summary),
            message: summary.message,
            backups: summary.conflicts.flatMap((c) => (c.backup ? [{ path: c.path, backup: c.backup }] : [])),
          });
        },
        (err: unknown) => {
          if (no !== requestNo.current) return;
          setPanel({ key, action, phase: "error", preview, message: errorText(err) });
        },
      );
    },
    [panel, onApply, onRedo],
  );

  const ordered = [...steps].sort((a, b) => a.index - b.index);
  // Redo brings back undone changes: offered only when some step is undone.
  const canRedo = onRedo !== undefined && steps.some((s) => s.undone);
  const panelFor = (key: string): ReactNode =>
    panel && panel.key === key ? (
      <PreviewPanel state={panel} busy={busy} renderDiff={renderDiff} onApply={apply} onCancel={cancel} />
    ) : null;

  return (
    <section className="mia-tl" data-testid="timeline" aria-label="Changes timeline" aria-busy={busy}>
      <header className="mia-tl-header">
        <h2 className="mia-tl-title">Changes</h2>
        <span className="mia-tl-header-tools">
        {headerTools}
        {canRedo && (
          <button
            type="button"
            className="mia-tl-btn"
            disabled={busy}
            title={busy ? BUSY_REASON : "Redo the last undo"}
            onClick={() => openPreview({ action: "redo" }, "redo")}
          >
            <Redo2 size={12} aria-hidden /> Redo…
          </button>
        )}
        </span>
      </header>
      {top}
      {busy && <p className="mia-tl-busy">{BUSY_REASON}</p>}

      {result && (
        <div className="mia-tl-result" data-testid="timeline-result" role="status">
          <p className="mia-tl-result-msg">{result.text}</p>
          {result.backups.length > 0 && (
            <ul className="mia-tl-backups">
              {result.backups.map((b) => (
                <li key={b.path}>
                  <code>{b.path}</code>: your version was kept at <code>{b.backup}</code>
                </li>
              ))}
            </ul>
          )}
          {result.message && (
            <details className="mia-tl-details">
              <summary>Details</summary>
              <pre className="mia-tl-result-raw">{result.message}</pre>
            </details>
          )}
          <button type="button" className="mia-tl-btn mia-tl-btn-small" onClick={() => setResult(null)}>
            Dismiss
          </button>
        </div>
      )}

      {panelFor("redo")}

      {ordered.length === 0 ? (
        <p className="mia-tl-empty">No file changes in this session yet</p>
      ) : (
        <ol className="mia-tl-list">
          {ordered.map((step) => (
            <StepEntry
              key={step.id}
              step={step}
              busy={busy}
              busyReason={BUSY_REASON}
              onUndo={() => openPreview({ action: "undo", step: step.id }, `step:${step.id}`)}
              onRevert={() => openPreview({ action: "revert", message_id: step.message_id }, `step:${step.id}`)}
              renderDiff={renderStepDiff}
              panel={panelFor(`step:${step.id}`)}
            />
          ))}
        </ol>
      )}
    </section>
  );
}
