import { useEffect, useRef } from "react";
import type { ReactNode } from "react";
import { useKeyDown } from "../../lib/useKeyDown";
import type { FileDiff, HistoryAction, RevertPreview, RevertSummary } from "../../protocol/generated";
import { ACTION_TITLES as TITLES, previewLine } from "./format";

export type PanelState = { key: string; action: HistoryAction } & (
  | { phase: "loading" }
  | { phase: "ready"; preview: RevertPreview }
  | { phase: "applying"; preview?: RevertPreview }
  /** The runtime refused (409): nothing was changed. */
  | { phase: "refused"; preview?: RevertPreview; summary: RevertSummary }
  | { phase: "error"; preview?: RevertPreview; message: string }
);

interface PreviewPanelProps {
  state: PanelState;
  busy: boolean;
  renderDiff?: ((files: FileDiff[]) => ReactNode) | undefined;
  onApply: (force: boolean) => void;
  onCancel: () => void;
}


const BUSY_TITLE = "A turn is running: wait for it to finish (or stop it) before applying.";

interface Conflict {
  path: string;
  reason: string;
}

function conflictsOf(state: PanelState): Conflict[] {
  if (state.phase === "refused") return state.summary.conflicts.map((c) => ({ path: c.path, reason: c.reason }));
  const preview = "preview" in state ? state.preview : undefined;
  return (preview?.files ?? []).flatMap((f) => (f.conflict ? [{ path: f.path, reason: f.conflict }] : []));
}

/** Exactly what an undo/revert/redo will change, with Apply (or an explicit overwrite on conflicts). */
export function PreviewPanel({ state, busy, renderDiff, onApply, onCancel }: PreviewPanelProps) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, [state.key, state.action.action]);

  const preview = "preview" in state ? state.preview : undefined;
  const conflicts = conflictsOf(state);
  const applying = state.phase === "applying";
  const canApply = preview !== undefined && !applying && !busy;
  const unrestorable = preview?.unrestorable ?? [];
  const leftAlone = preview?.left_alone ?? [];

  useKeyDown(ref, (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      onCancel();
    }
  });

  return (
    <div
      ref={ref}
      className="mia-tl-preview"
      data-testid="timeline-preview"
      role="region"
      aria-label={`Preview: ${TITLES[state.action.action]}`}
      tabIndex={-1}
    >
      <h3 className="mia-tl-preview-title">Preview: {TITLES[state.action.action]}</h3>
      {state.phase === "loading" && <p className="mia-tl-muted">Computing what would change…</p>}

      {preview && (
        <>
          {preview.files.length === 0 ? (
            <p className="mia-tl-muted">No file would change.</p>
          ) : (
            <ul className="mia-tl-preview-files">
              {preview.files.map((f) => (
                <li key={f.path} data-testid="timeline-preview-file" className={`mia-tl-pf mia-tl-pf-${f.action}`}>
                  {previewLine(f)}
                </li>
              ))}
            </ul>
          )}
          {unrestorable.length > 0 && (
            <div className="mia-tl-unrestorable">
              Cannot be restored (never captured):
              <ul>
                {unrestorable.map((p) => (
                  <li key={p}>
                    <code>{p}</code>
                  </li>
                ))}
              </ul>
            </div>
          )}
          {leftAlone.length > 0 && (
            <div className="mia-tl-left-alone" data-testid="timeline-left-alone">
              Left as they are:
              <ul>
                {leftAlone.map((l) => (
                  <li key={l.path}>
                    <code>{l.path}</code>: {l.reason}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {/* With the diff drawn, its files' headers carry the counts: said once. */}
          {!(renderDiff && preview.diff.length > 0) && (
            <p className="mia-tl-preview-counts">
              <span className="mia-tl-add">+{preview.additions}</span>{" "}
              <span className="mia-tl-del">−{preview.deletions}</span> lines
            </p>
          )}
          {renderDiff && preview.diff.length > 0 && <div className="mia-tl-preview-diff">{renderDiff(preview.diff)}</div>}
        </>
      )}

      {conflicts.length > 0 && (
        <div className="mia-tl-conflicts" data-testid="timeline-conflicts" role="alert">
          <strong>
            {state.phase === "refused" ? "Nothing was changed: " : ""}
            {conflicts.length === 1 ? "1 file was" : `${conflicts.length} files were`} changed outside Mia Code
          </strong>
          <ul>
            {conflicts.map((c) => (
              <li key={c.path}>
                <code>{c.path}</code>: {c.reason}
              </li>
            ))}
          </ul>
          {state.phase === "refused" && state.summary.message && <p>{state.summary.message}</p>}
        </div>
      )}

      {state.phase === "error" && (
        <p className="mia-tl-error" role="alert">
          {state.message}
        </p>
      )}
      {applying && <p className="mia-tl-muted">Applying…</p>}

      <div className="mia-tl-preview-actions">
        {conflicts.length > 0 ? (
          <button
            type="button"
            className="mia-tl-btn mia-tl-btn-danger"
            data-testid="timeline-force"
            disabled={!canApply}
            title={busy ? BUSY_TITLE : "Apply and keep the current content of these files as a backup"}
            onClick={() => onApply(true)}
          >
            Overwrite anyway (keeps a backup)
          </button>
        ) : (
          <button
            type="button"
            className="mia-tl-btn mia-tl-btn-primary"
            data-testid="timeline-apply"
            disabled={!canApply}
            title={busy ? BUSY_TITLE : undefined}
            onClick={() => onApply(false)}
          >
            Apply
          </button>
        )}
        <button type="button" className="mia-tl-btn" data-testid="timeline-cancel" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
