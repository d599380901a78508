import { Panel, PanelResizeHandle } from "react-resizable-panels";
import { ErrorBoundary } from "../ErrorBoundary";
import { RightPanel, type PanelTab } from "../RightPanel";

/**
 * The session view's side panel beside the conversation (its edge resizes it). Its tabs mount a
 * frame after the view's first paint (`ready`): until then an empty panel holds their place.
 */
export function SidePanel({
  ready,
  tab,
  onTab,
  sessionId,
  refreshKey,
  busy,
  onResult,
  onOpenSession,
  sessionTitle,
}: {
  ready: boolean;
  tab: PanelTab;
  onTab: (tab: PanelTab | null) => void;
  sessionId: string;
  refreshKey: number;
  busy: boolean;
  onResult: () => void;
  onOpenSession: (id: string) => void;
  sessionTitle: (id: string) => string | undefined;
}) {
  return (
    <>
      <PanelResizeHandle className="resize-handle" aria-label="Resize the side panel" />
      <Panel id="side-panel" order={2} defaultSize={34} minSize={22} maxSize={60}>
        <ErrorBoundary label="The side panel">
          {ready ? (
            <RightPanel
              tab={tab}
              onTab={onTab}
              sessionId={sessionId}
              refreshKey={refreshKey}
              busy={busy}
              onResult={onResult}
              onOpenSession={onOpenSession}
              sessionTitle={sessionTitle}
            />
          ) : (
            <aside className="right-panel" aria-label="Changes and diffs" aria-busy="true" />
          )}
        </ErrorBoundary>
      </Panel>
    </>
  );
}
