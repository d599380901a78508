import { lazy, Suspense } from "react";
import type { AgentInfo, SessionSummary } from "../../protocol/generated";
import { Compare } from "../Compare";
import { DraftView } from "../DraftView";
import { ErrorBoundary } from "../ErrorBoundary";
import { SessionCompare } from "../SessionCompare";
import { SessionView } from "../SessionView";
import { Worktrees } from "../Worktrees";

// The fork tree (with its layout library) is loaded the first time it is shown.
const ForkTree = lazy(() => import("../ForkTree").then((m) => ({ default: m.ForkTree })));

/**
 * What the center shows: the open session (or a draft), the worktrees, a comparison of two attempts
 * (reached from the worktrees or from the fork tree), the fork tree, or two sessions' changes.
 */
export type CenterView =
  | { kind: "sessions" }
  | { kind: "worktrees" }
  | { kind: "compare"; a?: string; b?: string; from?: "worktrees" | "tree" }
  | { kind: "tree"; focus?: string }
  | { kind: "session-compare"; left: string; right: string; from: "tree" | "session" };

/**
 * The window's center: what `view` says, of the open project. The open session's view is a memo:
 * the callbacks it is given are the shell's stable ones.
 */
export function Center({
  project,
  view,
  setView,
  currentId,
  agents,
  sessions,
  highlight,
  hideAsks,
  openSession,
  newSession,
  sessionsChanged,
  showWorktrees,
  showCompare,
  compareAttempts,
  showTree,
  compareSessions,
  compareWithParent,
  sessionTitle,
  createAgent,
  startWith,
}: {
  project: string | null;
  view: CenterView;
  setView: (view: CenterView) => void;
  currentId: string | null;
  agents: AgentInfo[];
  sessions: SessionSummary[];
  highlight: { session: string; message: string } | null;
  /** The attention queue is open (it answers the open session's asks). */
  hideAsks: boolean;
  openSession: (id: string, messageId?: string) => void;
  newSession: () => void;
  sessionsChanged: () => void;
  showWorktrees: () => void;
  showCompare: (a?: string, b?: string) => void;
  compareAttempts: () => void;
  showTree: (focus?: string) => void;
  compareSessions: (left: string, right: string, from?: "tree" | "session") => void;
  compareWithParent: (left: string, right: string) => void;
  sessionTitle: (id: string) => string | undefined;
  createAgent: (description?: string, creator?: string) => void;
  startWith: (text: string, agent: string | null) => Promise<boolean>;
}) {
  return (
    <main className="center">
      {!project && (
        <div className="empty-state">
          <h1>Mia Code</h1>
          <p>Open a project folder to start.</p>
        </div>
      )}
      {project && view.kind === "worktrees" && (
        <ErrorBoundary label="Worktrees">
          <Worktrees
            directory={project}
            onBack={() => setView({ kind: "sessions" })}
            onCompare={showCompare}
            onOpenSession={openSession}
          />
        </ErrorBoundary>
      )}
      {project && view.kind === "compare" && (
        <ErrorBoundary label="The comparison">
          <Compare
            key={`${view.a ?? ""}\n${view.b ?? ""}`}
            directory={project}
            initialA={view.a}
            initialB={view.b}
            onBack={view.from === "tree" ? () => showTree(currentId ?? undefined) : showWorktrees}
            backLabel={view.from === "tree" ? "Fork tree" : undefined}
          />
        </ErrorBoundary>
      )}
      {project && view.kind === "tree" && (
        <ErrorBoundary label="The fork tree">
          <Suspense fallback={<p className="muted pad">Loading the fork tree…</p>}>
            <ForkTree
              directory={project}
              currentId={currentId}
              focus={view.focus}
              onBack={() => setView({ kind: "sessions" })}
              onOpenSession={openSession}
              onCompare={compareSessions}
            />
          </Suspense>
        </ErrorBoundary>
      )}
      {project && view.kind === "session-compare" && (
        <ErrorBoundary label="The comparison">
          <SessionCompare
            key={`${view.left}\n${view.right}`}
            left={view.left}
            right={view.right}
            backLabel={view.from === "session" ? "Session" : "Fork tree"}
            onBack={() => (view.from === "session" ? openSession(view.left) : showTree(view.left))}
            onWorktrees={(a, b) => setView({ kind: "compare", a, b, from: "tree" })}
            onOpenSession={openSession}
          />
        </ErrorBoundary>
      )}
      {project && view.kind === "sessions" && currentId && (
        <SessionView
          key={currentId}
          sessionId={currentId}
          directory={project}
          agents={agents}
          onNewSession={newSession}
          onSessionsChanged={sessionsChanged}
          onWorktrees={showWorktrees}
          onCompare={compareAttempts}
          onOpenSession={openSession}
          onForkTree={showTree}
          onCompareSessions={compareWithParent}
          sessionTitle={sessionTitle}
          highlightMessage={highlight?.session === currentId ? highlight.message : null}
          onCreateAgent={createAgent}
          hideAsks={hideAsks}
          listedUpdatedAt={sessions.find((x) => x.id === currentId)?.updated_at}
        />
      )}
      {project && view.kind === "sessions" && !currentId && (
        <DraftView
          directory={project}
          agents={agents}
          onStart={startWith}
          onWorktrees={showWorktrees}
          onCompare={() => showCompare()}
          onForkTree={() => showTree()}
          onCreateAgent={createAgent}
          sessions={sessions}
          onOpenSession={openSession}
        />
      )}
    </main>
  );
}
