import { memo, useCallback } from "react";
import { useQuery } from "@tanstack/react-query";
import { keys } from "../state/queries";
import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
import type { FileDiff, HistoryAction, RevertSummary } from "../protocol/generated";
import { UndoTimeline } from "../components/timeline/UndoTimeline";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { FilesDiff, LoadedDiff } from "./DiffSlot";
import { CostPanel } from "./CostPanel";
import { HistoryPanel } from "./HistoryPanel";

export type PanelTab = "changes" | "diff" | "cost" | "history";

export const RightPanel = memo(function RightPanel({
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
  // The session's steps and cost: cached per session (switching back shows them at once), made
  // stale by its Events (state/queries.ts) and by the view's own changes (an undo: SessionView).
  // `refreshKey` reloads what is not cached (the history); the session's diff is (keys.diff).
  const timeline = useQuery({ queryKey: keys.timeline(sessionId), queryFn: () => api.timeline(sessionId) });
  const cost = useQuery({ queryKey: keys.cost(sessionId), queryFn: () => api.cost(sessionId), enabled: tab === "cost" });
  const steps = timeline.data ?? null;
  const error = timeline.error ? errorMessage(timeline.error) : null;

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
          <LoadedDiff queryKey={keys.diff(sessionId, "session")} load={() => api.diff(sessionId, "session")} mode="unified" />
        </TabPanel>
        <TabPanel id="cost" className="panel-body" data-testid="panel-cost">
          <CostPanel
            view={cost.data ?? null}
            error={cost.error ? errorMessage(cost.error) : null}
            onOpenSession={onOpenSession}
            sessionTitle={sessionTitle}
          />
        </TabPanel>
        <TabPanel id="history" className="panel-body" data-testid="panel-history">
          <HistoryPanel load={loadHistory} refreshKey={refreshKey} />
        </TabPanel>
      </Tabs>
    </aside>
  );
});
