import { useCallback, useEffect, useState } from "react";
import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
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
      <Tabs selectedKey={tab} onSelectionChange={(k) => onTab(k as PanelTab)}>
        <TabList className="tabs" aria-label="Side panel">
          <Tab id="changes" data-testid="tab-changes">
            Changes
          </Tab>
          <Tab id="diff" data-testid="tab-diff">
            Diff
          </Tab>
          <Tab id="cost" data-testid="tab-cost">
            Cost
          </Tab>
          <Tab id="history" data-testid="tab-history">
            History
          </Tab>
        </TabList>
        <TabPanel id="changes" className="panel-body" data-testid="panel-changes">
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
        </TabPanel>
        <TabPanel id="diff" className="panel-body" data-testid="panel-diff">
          <LoadedDiff load={() => api.diff(sessionId, "session")} reloadKey={`${sessionId}:${refreshKey}`} mode="unified" />
        </TabPanel>
        <TabPanel id="cost" className="panel-body" data-testid="panel-cost">
          <CostPanel load={loadCost} refreshKey={refreshKey} onOpenSession={onOpenSession} sessionTitle={sessionTitle} />
        </TabPanel>
        <TabPanel id="history" className="panel-body" data-testid="panel-history">
          <HistoryPanel load={loadHistory} refreshKey={refreshKey} />
        </TabPanel>
      </Tabs>
    </aside>
  );
}
