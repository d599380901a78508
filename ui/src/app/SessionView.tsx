import { memo, startTransition, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { keys } from "../state/queries";
import type { AgentInfo, ShareRecord } from "../protocol/generated";
import { isCompacting, sessionTotals, userTexts } from "../state/session";
import { useSessionState } from "../state/store";
import { LOAD_FAILED } from "../state/liveSessions";
import { useDelegations } from "./useDelegations";
import { useTranscriptSearch, type SearchState } from "./useTranscriptSearch";
import { Panel, PanelGroup } from "react-resizable-panels";
import { errorMessage } from "../lib/api";
import { useServices, useToast } from "./context";
import { Conversation } from "./Conversation";
import { PromptInput } from "./PromptInput";
import { primaryAgents, toggleTarget } from "./ModeBadge";
import type { PanelTab } from "./RightPanel";
import { useLocalFlag } from "./useLocalFlag";
import { ErrorBoundary } from "./ErrorBoundary";
import { OpenFileContext } from "./openFile";
import { TranscriptSearch } from "./TranscriptSearch";
import { InputTools } from "./session/InputTools";
import { QueuedList } from "./session/QueuedList";
import { SessionDialogs, type DiffTarget } from "./session/SessionDialogs";
import { SessionHeader } from "./session/SessionHeader";
import { SessionStatus } from "./session/SessionStatus";
import { TrustBanner } from "./session/TrustBanner";
import { SidePanel } from "./session/SidePanel";
import { useMessageActions } from "./session/useMessageActions";
import { useSessionActions } from "./session/useSessionActions";
import { usePaletteCommands, useSessionCommand } from "./session/useSessionCommand";
import { useCustomCommands, useDisabledCommands, useMentionAgents } from "./session/composerOptions";
import { useParentTitle } from "./session/useParentTitle";
import { useSend } from "./session/useSend";
import { useProjectFiles, useSessionEvents } from "./session/useSessionEvents";
import { ReviewPane } from "./review/ReviewPane";
import { InlineAsksProvider, useInlineAsks } from "./inlineAsks";
import { CheckpointsProvider } from "./checkpoints/Checkpoints";

export interface SessionViewProps {
  sessionId: string;
  directory: string;
  agents: AgentInfo[];
  onNewSession: () => void;
  onSessionsChanged: () => void;
  /** `/worktrees` and `/compare`. */
  onWorktrees?: () => void;
  onCompare?: () => void;
  /** Opens a session (a new fork, the parent from the fork marker), optionally at one of its messages. */
  onOpenSession?: (id: string, messageId?: string) => void;
  /** `/forks` and the header's "Fork tree": the project's fork tree, focused on this session. */
  onForkTree?: (focus?: string) => void;
  /** "Compare with parent": the two sessions' changes since the fork. */
  onCompareSessions?: (left: string, right: string) => void;
  /** A session's title when the caller knows it (the fork marker names the parent). */
  sessionTitle?: (id: string) => string | undefined;
  /** A message to scroll to and mark once loaded. */
  highlightMessage?: string | null;
  /** `/agent create [description]`: the agent generator (with the session's agent as the creator). */
  onCreateAgent?: (description?: string, creator?: string) => void;
  /** The window's attention queue is open and answers these asks instead. */
  hideAsks?: boolean;
  /** When the session list says the session last changed (a cached session older than that loads again). */
  listedUpdatedAt?: number;
}

/**
 * One session: the header, the conversation with the lines that say how it stands, the composer
 * (session/*: its tools, the queued follow-ups, the input), the side panel, and what opens over
 * them. A memo: the shell renders with every list read and stream status; this view renders with
 * its session.
 */
export const SessionView = memo(function SessionView(props: SessionViewProps) {
  const { sessionId, directory, agents } = props;
  const { api, sessions } = useServices();
  const toast = useToast();
  // The session, kept live outside React (switching back shows it at once, as it is now), and
  // what its compaction markers show (open summaries and archives).
  const live = useMemo(() => sessions.get(sessionId, (e) => toast(errorMessage(e))), [sessions, sessionId, toast]);
  const { store } = live;
  const listedAt = useRef(props.listedUpdatedAt);
  // eslint-disable-next-line react-hooks/refs -- the latest value, read by the effect below (never during render)
  listedAt.current = props.listedUpdatedAt;
  useEffect(() => {
    sessions.show(live, listedAt.current);
    return () => sessions.hide(live);
  }, [sessions, live]);
  const state = useSessionState(store);
  const sideReady = useAfterFirstPaint();
  const [hideCommentary, setHideCommentary] = useLocalFlag("mia-code.hideCommentary", false);
  // The side panel: open by choice, or (until one is made) while the session has changes to show.
  const [panelChoice, setPanel] = useState<PanelTab | null | "auto">("auto");
  const steps = useQuery({ queryKey: keys.timeline(sessionId), queryFn: () => api.timeline(sessionId) });
  const panel: PanelTab | null = panelChoice === "auto" ? ((steps.data?.length ?? 0) > 0 ? "changes" : null) : panelChoice;
  const [timelineKey, setTimelineKey] = useState(0);
  // This view changed the session (an undo): its steps and cost are stale (what Events make
  // stale is in state/queries.ts), and the side panel's diff and history load again.
  const queryClient = useQueryClient();
  const ownChange = useCallback(() => {
    setTimelineKey((k) => k + 1);
    void queryClient.invalidateQueries({ queryKey: keys.timeline(sessionId) });
    void queryClient.invalidateQueries({ queryKey: keys.cost(sessionId) });
    void queryClient.invalidateQueries({ queryKey: keys.diffsOf(sessionId) });
  }, [queryClient, sessionId]);
  const [diff, setDiff] = useState<DiffTarget>(null);
  const [picker, setPicker] = useState(false);
  const [help, setHelp] = useState(false);
  const [modelPicker, setModelPicker] = useState(false);
  /** `/review` and the header's Review: the review and ship pane. */
  const [review, setReview] = useState(false);
  /** `/share` and the header's Share: the preview and share dialog. */
  const [sharing, setSharing] = useState(false);
  /** `/unshare`: the share about to be revoked (asked first). */
  const [unsharing, setUnsharing] = useState<ShareRecord | null>(null);
  const [inputKey, setInputKey] = useState(0);
  const remountInput = useCallback(() => setInputKey((k) => k + 1), []);
  /** Transcript search (Ctrl/Cmd+F): the query and which match is current. */
  const [search, setSearch] = useState<SearchState>(null);
  const propsRef = useRef(props);
  // eslint-disable-next-line react-hooks/refs -- the latest props, read by callbacks when they run (never during render)
  propsRef.current = props;
  // The latest props' callbacks, stable (read when called).
  const sessionsChanged = useCallback(() => propsRef.current.onSessionsChanged(), []);
  const openSessionLink = useCallback((id: string) => propsRef.current.onOpenSession?.(id), []);
  const knownTitle = useCallback((id: string) => propsRef.current.sessionTitle?.(id), []);

  const bumpSteps = useCallback(() => setTimelineKey((k) => k + 1), []);
  useSessionEvents(live, sessionId, bumpSteps);

  const children = useDelegations(sessionId, directory, store, state);

  // The parent's title for the fork marker, when the caller does not know it.
  const parentId = state.session?.fork?.source_session_id ?? state.session?.spawned_by?.session_id ?? null;
  const fetchedParent = useParentTitle(parentId, knownTitle);

  const closePicker = useCallback(() => setPicker(false), []);
  const sessionActions = useSessionActions({
    sessionId,
    live,
    onSessionsChanged: sessionsChanged,
    onOpenSession: openSessionLink,
    ownChange,
    onUnshare: setUnsharing,
    onPicked: closePicker,
  });
  const { fork, switchTo, reply, stop } = sessionActions;

  const history = useMemo(() => userTexts(state.messages), [state.messages]);
  const totals = useMemo(() => sessionTotals(state.messages), [state.messages]);

  const { queued, send, sendQueued, editQueued, cancelQueued } = useSend(live, sessionId, remountInput);

  const retry = useCallback(() => {
    if (store.getState().error?.kind === LOAD_FAILED) {
      store.update((s) => ({ ...s, error: null }));
      void live.load();
      return;
    }
    const last = userTexts(store.getState().messages).at(-1);
    if (last) void send(last);
  }, [live, send, store]);

  const toggleMode = useCallback(() => {
    if (primaryAgents(agents).length >= 3) {
      setPicker(true);
      return;
    }
    const s = store.getState();
    void switchTo(toggleTarget(s.queuedAgent ?? s.agent, agents));
  }, [agents, store, switchTo]);

  const { matches, currentMatch } = useTranscriptSearch(search, setSearch, state);

  // Tab with nothing focused (outside any field or button) also toggles.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Tab" || e.shiftKey || e.defaultPrevented) return;
      const t = e.target as HTMLElement | null;
      if (t && t !== document.body && t !== document.documentElement) return;
      if (document.querySelector("[role='dialog']")) return;
      e.preventDefault();
      toggleMode();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [toggleMode]);

  const onCommand = useSessionCommand({
    sessionId,
    props,
    store,
    actions: sessionActions,
    setPanel,
    setHelp,
    setModelPicker,
    setSharing,
    setReview,
  });

  const openSession = useCallback((id: string, messageId?: string) => propsRef.current.onOpenSession?.(id, messageId), []);
  const titleOf = useCallback(
    (id: string) => propsRef.current.sessionTitle?.(id) ?? (fetchedParent?.id === id ? fetchedParent.title : undefined),
    [fetchedParent],
  );
  const actions = useMessageActions({ sessionId, live, children, onDiff: setDiff, retry, fork, openSession, sessionTitle: titleOf });

  // What the composer is given is stable across a streamed answer's frames, so the composer (a
  // memo) does not render again with every delta.
  const onNotice = useCallback((m: string) => toast(m, "info"), [toast]);
  const onStop = useCallback(() => void stop(), [stop]);

  usePaletteCommands({ store, stop, toggleMode, onCommand });
  // The session's own folder: a worktree session mentions the worktree's files.
  const sessionDir = state.session?.directory || directory;
  const loadFiles = useProjectFiles(sessionDir);
  const customCommands = useCustomCommands(sessionDir);

  const title = state.session?.title || state.session?.slug || "New session";
  const compacting = isCompacting(state);

  const canRetry = state.error?.kind === LOAD_FAILED || (!state.running && history.length > 0);
  const spawned = state.session?.spawned_by ?? null;
  const fetchedTitle = (id: string) => (fetchedParent?.id === id ? fetchedParent.title : undefined);
  const spawnedTitle =
    (spawned && (props.sessionTitle?.(spawned.session_id) ?? fetchedTitle(spawned.session_id))) || "the parent session";
  const mentionAgents = useMentionAgents(agents);
  // A subagent session's name in the cost panel: its delegation's description, else the session list's title.
  const subagentTitle = useCallback(
    (id: string) => {
      const d = Object.values(state.subagents).find((a) => a.childId === id);
      return (d?.description ? `${d.agent}: ${d.description}` : undefined) ?? propsRef.current.sessionTitle?.(id);
    },
    [state.subagents],
  );
  // Stable, so the side panel does not draw again on every frame of a streaming answer.
  const bumpTimeline = ownChange;
  const openFile = useCallback(
    (path: string, line?: number) => {
      api.openInEditor(sessionDir, path, line).then(
        () => toast(`Opened ${path} in the editor`, "info"),
        (e: unknown) => toast(errorMessage(e)),
      );
    },
    [api, sessionDir, toast],
  );
  const loadModels = useCallback(() => api.models(sessionDir), [api, sessionDir]);
  // Asks of this session at their tool cards; the rest (a subagent's, or all when the person
  // chose the dialog) in the dialog.
  const asks = useInlineAsks(sessionId, state.permissions, state.tools, sessionDir, reply);
  const parent = state.session?.parent_id ?? null;
  const disabledCommands = useDisabledCommands(parent, state.running, compacting);

  return (
    <OpenFileContext.Provider value={openFile}>
      <PanelGroup
        direction="horizontal"
        autoSaveId="mia-code.layout.session"
        className={`session-layout${panel ? " with-panel" : ""}`}
      >
        <Panel id="conversation" order={1} defaultSize={66} minSize={40}>
          <section className="main-col" aria-label="Conversation">
            <SessionHeader
              sessionId={sessionId}
              state={state}
              title={title}
              spawnedTitle={spawnedTitle}
              totals={totals}
              hideCommentary={hideCommentary}
              onHideCommentary={setHideCommentary}
              panel={panel}
              onPanel={setPanel}
              onShare={() => setSharing(true)}
              onReview={() => setReview(true)}
              directory={sessionDir}
              onOpenSession={props.onOpenSession}
              onForkTree={props.onForkTree}
              onCompareSessions={props.onCompareSessions}
            />
            {search && (
              <TranscriptSearch
                query={search.query}
                at={matches.length ? Math.min(search.at, matches.length - 1) : 0}
                count={matches.length}
                onQuery={(query) => setSearch({ query, at: 0 })}
                onMove={(d) => setSearch((s) => (s && matches.length ? { ...s, at: (Math.min(s.at, matches.length - 1) + d + matches.length) % matches.length } : s))}
                onClose={() => setSearch(null)}
              />
            )}
            <ErrorBoundary label="The conversation">
              <InlineAsksProvider value={asks.value}>
                <CheckpointsProvider
                  sessionId={sessionId}
                  messages={state.messages}
                  busy={state.running}
                  onChanged={ownChange}
                  onFork={fork}
                >
                  <Conversation
                    state={state}
                    hideCommentary={hideCommentary}
                    actions={actions}
                    highlight={currentMatch ?? props.highlightMessage ?? null}
                  />
                </CheckpointsProvider>
              </InlineAsksProvider>
            </ErrorBoundary>
            <SessionStatus state={state} store={store} canRetry={canRetry} onRetry={retry} />
            <TrustBanner key={sessionDir} directory={sessionDir} />
            <div className="input-row">
              <InputTools
                state={state}
                agents={agents}
                compacting={compacting}
                picker={picker}
                onClosePicker={closePicker}
                onSwitch={(a) => void switchTo(a)}
                onToggleMode={toggleMode}
                modelPicker={modelPicker}
                onModelPicker={setModelPicker}
                loadModels={loadModels}
                setModel={sessionActions.setModel}
                onStop={() => void stop()}
              />
              <QueuedList
                queued={queued}
                running={state.running}
                onSendNow={sendQueued}
                onEdit={editQueued}
                onCancel={cancelQueued}
              />
              <PromptInput
                projectDir={sessionDir}
                onNotice={onNotice}
                onStop={onStop}
                loadFiles={loadFiles}
                history={history}
                onSend={send}
                onCommand={onCommand}
                onToggleMode={toggleMode}
                key={inputKey}
                draftKey={sessionId}
                running={state.running}
                disabledCommands={disabledCommands}
                customCommands={customCommands}
                mentionAgents={mentionAgents}
              />
            </div>
          </section>
        </Panel>
        {panel && (
          <SidePanel
            ready={sideReady}
            tab={panel}
            onTab={setPanel}
            sessionId={sessionId}
            refreshKey={timelineKey}
            busy={state.running}
            onResult={bumpTimeline}
            onOpenSession={openSessionLink}
            sessionTitle={subagentTitle}
          />
        )}
      </PanelGroup>
      {review && (
        <ErrorBoundary label="The review pane">
          <ReviewPane sessionId={sessionId} directory={sessionDir} running={state.running} onClose={() => setReview(false)} />
        </ErrorBoundary>
      )}
      <SessionDialogs
        sessionId={sessionId}
        permissions={asks.dialog}
        hideAsks={props.hideAsks}
        onReply={reply}
        diff={diff}
        onCloseDiff={() => setDiff(null)}
        sharing={sharing}
        onCloseShare={() => setSharing(false)}
        unsharing={unsharing}
        onCloseUnshare={() => setUnsharing(null)}
        help={help}
        onCloseHelp={() => setHelp(false)}
      />
    </OpenFileContext.Provider>
  );
});

/**
 * False for a view's first paint, true from the next frame on (as a transition). What a view
 * shows beside the conversation mounts then: the view that opens when a turn starts (or a
 * session is switched to) lays out and paints its conversation first, and the side panel's tabs
 * (React Aria's collection, the steps query) follow in a piece of main-thread work of their own.
 */
function useAfterFirstPaint(): boolean {
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => startTransition(() => setReady(true)), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);
  return ready;
}

