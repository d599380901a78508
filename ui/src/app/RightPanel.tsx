import { memo, useCallback } from "react";
import { useQuery } from "@tanstack/react-query";
import { keys } from "../state/queries";
import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
import type { FileDiff, HistoryAction, RevertSummary, TimelineStep } from "../protocol/generated";
import { ArrowLeft, FileDiff as FileDiffIcon, ScrollText } from "lucide-react";
import { UndoTimeline } from "../components/timeline/UndoTimeline";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { FilesDiff, LoadedDiff } from "./DiffSlot";
import { CostPanel } from "./CostPanel";
import { HistoryPanel } from "./HistoryPanel";

/**
 * What the side panel shows: the timeline ("changes"; "diff" opens the whole session's diff at its
 * top, "history" the full message list in its place) or the cost.
 */
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
      <Tabs selectedKey={tab === "cost" ? "cost" : "changes"} onSelectionChange={(k) => onTab(k as PanelTab)}>
        <TabList className="tabs" aria-label="Side panel">
          <Tab id="changes" data-testid="tab-changes">
            Changes
          </Tab>
          <Tab id="cost" data-testid="tab-cost">
            Cost
          </Tab>
        </TabList>
        <TabPanel id="changes" className="panel-body" data-testid="panel-changes">
          {tab === "history" ? (
            <div data-testid="panel-history">
              <button type="button" className="link-btn small" data-testid="history-back" onClick={() => onTab("changes")}>
                <ArrowLeft size={12} aria-hidden /> Back to the changes
              </button>
              <HistoryPanel load={loadHistory} refreshKey={refreshKey} />
            </div>
          ) : null}
          {tab !== "history" && error && <div className="error-text">{error}</div>}
          {tab !== "history" && !steps && !error && <div className="muted">Loading…</div>}
          {tab !== "history" && steps && (
            <UndoTimeline
              steps={steps}
              busy={busy}
              onPreview={(action) => api.preview(sessionId, action)}
              onApply={apply}
              onRedo={(force) => apply({ action: "redo" }, force)}
              renderDiff={(files: FileDiff[]) => <FilesDiff files={files} />}
              renderStepDiff={(step: TimelineStep) => (
                <LoadedDiff
                  queryKey={keys.diff(sessionId, { step: step.id })}
                  load={() => api.diff(sessionId, { step: step.id })}
                  mode="unified"
                />
              )}
              headerTools={
                <>
                  <button
                    type="button"
                    className="mia-tl-btn mia-tl-btn-small"
                    data-testid="tab-diff"
                    aria-pressed={tab === "diff"}
                    title="The whole session's diff: summary, copy as patch, open wide"
                    onClick={() => onTab(tab === "diff" ? "changes" : "diff")}
                  >
                    <FileDiffIcon size={12} aria-hidden /> Whole diff
                  </button>
                  <button
                    type="button"
                    className="mia-tl-btn mia-tl-btn-small"
                    data-testid="tab-history"
                    title="Every message of the session, the ones compaction archived included"
                    onClick={() => onTab("history")}
                  >
                    <ScrollText size={12} aria-hidden /> All messages
                  </button>
                </>
              }
              top={
                tab === "diff" ? (
                  <div className="mia-tl-session-diff" data-testid="panel-diff">
                    <LoadedDiff queryKey={keys.diff(sessionId, "session")} load={() => api.diff(sessionId, "session")} mode="unified" />
                  </div>
                ) : null
              }
            />
          )}
        </TabPanel>
        <TabPanel id="cost" className="panel-body" data-testid="panel-cost">
          <CostPanel
            view={cost.data ?? null}
            error={cost.error ? errorMessage(cost.error) : null}
            onOpenSession={onOpenSession}
            sessionTitle={sessionTitle}
          />
        </TabPanel>
      </Tabs>
    </aside>
  );
});
