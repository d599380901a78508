import { useCallback, useEffect, useState } from "react";
import type { FileDiff, HistoryAction, RevertSummary, TimelineStep } from "../protocol/generated";
import { UndoTimeline } from "../components/timeline/UndoTimeline";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { FilesDiff, LoadedDiff } from "./DiffSlot";
import { CostPanel } from "./CostPanel";
import { HistoryPanel } from "./HistoryPanel";

export type PanelTab = "changes" | "diff" | "cost" | "history";

export function RightPanel({
  tab,
  onTab,
  sessionId,
  refreshKey,
  busy,
  onResult,
  onOpenSession,
  sessionTitle,
}: {
  tab: PanelTab;
  onTab: (t: PanelTab) => void;
  sessionId: string;
  refreshKey: number;
  busy: boolean;
  onResult: (r: RevertSummary) => void;
  /** The cost tab's links to subagent sessions. */
  onOpenSession?: (id: string) => void;
  sessionTitle?: (id: string) => string | undefined;
}) {
  const { api } = useServices();
  const [steps, setSteps] = useState<TimelineStep[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    api.timeline(sessionId).then(
      (s) => {
        if (!alive) return;
        setSteps(s);
        setError(null);
      },
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [api, sessionId, refreshKey]);

  const loadCost = useCallback(() => api.cost(sessionId), [api, sessionId]);
  const loadHistory = useCallback(
    () => api.sessionWithArchive(sessionId).then((d) => d.messages),
    [api, sessionId],
  );

  const apply = useCallback(
    async (action: HistoryAction, force: boolean): Promise<RevertSummary> => {
      const r =
        action.action === "undo"
          ? await api.undo(sessionId, action.step ?? null, force)
          : action.action === "revert"
            ? await api.revert(sessionId, action.message_id, force)
            : await api.redo(sessionId, force);
      if (r.applied) onResult(r);
      return r;
    },
    [api, onResult, sessionId],
  );

  return (
    <aside className="right-panel" aria-label="Changes and diffs">
      <div className="tabs" role="tablist">
        <button
          type="button"
          role="tab"
          aria-selected={tab === "changes"}
          data-testid="tab-changes"
          onClick={() => onTab("changes")}
        >
          Changes
        </button>
        <button type="button" role="tab" aria-selected={tab === "diff"} data-testid="tab-diff" onClick={() => onTab("diff")}>
          Diff
        </button>
        <button type="button" role="tab" aria-selected={tab === "cost"} data-testid="tab-cost" onClick={() => onTab("cost")}>
          Cost
        </button>
        <button
          type="button"
          role="tab"
          aria-selected={tab === "history"}
          data-testid="tab-history"
          onClick={() => onTab("history")}
        >
          History
        </button>
      </div>
      {tab === "changes" && (
        <div className="panel-body" role="tabpanel" data-testid="panel-changes">
          {error && <div className="error-text">{error}</div>}
          {!steps && !error && <div className="muted">Loading…</div>}
          {steps && (
            <UndoTimeline
              steps={steps}
              busy={busy}
              onPreview={(action) => api.preview(sessionId, action)}
              onApply={apply}
              onRedo={(force) => apply({ action: "redo" }, force)}
              renderDiff={(files: FileDiff[]) => <FilesDiff files={files} />}
            />
          )}
        </div>
      )}
      {tab === "diff" && (
        <div className="panel-body" role="tabpanel" data-testid="panel-diff">
          <LoadedDiff load={() => api.diff(sessionId, "session")} reloadKey={`${sessionId}:${refreshKey}`} mode="unified" />
        </div>
      )}
      {tab === "cost" && (
        <div className="panel-body" role="tabpanel" data-testid="panel-cost" aria-label="Cost">
          <CostPanel load={loadCost} refreshKey={refreshKey} onOpenSession={onOpenSession} sessionTitle={sessionTitle} />
        </div>
      )}
      {tab === "history" && (
        <div className="panel-body" role="tabpanel" data-testid="panel-history" aria-label="Full history">
          <HistoryPanel load={loadHistory} refreshKey={refreshKey} />
        </div>
      )}
    </aside>
  );
}
