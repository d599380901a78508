import { memo, startTransition, useCallback, useEffect, useEffectEvent, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { keys } from "../state/queries";
import type { AgentInfo, Event, PermissionReplyKind, RevertSummary, ShareRecord } from "../protocol/generated";
import { PermissionDialog } from "../components/permission/PermissionDialog";
import { isCompacting, sessionTotals, userTexts } from "../state/session";
import { useSessionState } from "../state/store";
import { LOAD_FAILED } from "../state/liveSessions";
import { useDelegations } from "./useDelegations";
import { useTranscriptSearch, type SearchState } from "./useTranscriptSearch";
import { Panel, PanelGroup, PanelResizeHandle } from "react-resizable-panels";
import { errorMessage } from "../lib/api";
import { formatCost, formatTokens, toolTarget } from "../lib/format";
import { compactingDetail, compactResultText } from "../lib/compaction";
import { useServices, useToast } from "./context";
import { Conversation } from "./Conversation";
import type { MessageActions } from "./MessageView";
import { PromptInput, restoreDraft } from "./PromptInput";
import { AgentPicker, ModeBadge, primaryAgents, toggleTarget } from "./ModeBadge";
import { RightPanel, type PanelTab } from "./RightPanel";
import { Modal } from "./Modal";
import { LoadedDiff } from "./DiffSlot";
import { HelpText } from "./Help";
import { useLocalFlag } from "./useLocalFlag";
import { ErrorBoundary } from "./ErrorBoundary";
import { EditableTitle } from "./EditableTitle";
import { ContextMeter } from "./ContextMeter";
import { OpenFileContext } from "./openFile";
import { TranscriptSearch } from "./TranscriptSearch";
import { ModelPicker, modelHint } from "./ModelPicker";
import { ShareDialog, UnshareConfirm } from "./ShareDialog";
import { SESSION_COMMAND, type SessionCommand } from "./commands";

const filesCache = new Map<string, Promise<string[]>>();

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

type DiffTarget = { title: string; scope: "session" | { message: string } | { step: string } } | null;

/** A memo: the shell renders with every list read and stream status; this view renders with its session. */
export const SessionView = memo(function SessionView(props: SessionViewProps) {
  const { sessionId, directory, agents } = props;
  const { api, transport, platform, sessions } = useServices();
  const toast = useToast();
  // The session, kept live outside React (switching back shows it at once, as it is now), and
  // what its compaction markers show (open summaries and archives).
  const live = useMemo(() => sessions.get(sessionId, (e) => toast(errorMessage(e))), [sessions, sessionId, toast]);
  const { store, markers } = live;
  const listedAt = useRef(props.listedUpdatedAt);
  listedAt.current = props.listedUpdatedAt;
  useEffect(() => {
    sessions.show(live, listedAt.current);
    return () => sessions.hide(live);
  }, [sessions, live]);
  const state = useSessionState(store);
  const sideReady = useAfterFirstPaint();
  const [hideCommentary, setHideCommentary] = useLocalFlag("mia-code.hideCommentary", false);
  const [panel, setPanel] = useState<PanelTab | null>("changes");
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
  /** `/share` and the header's Share: the preview and share dialog. */
  const [sharing, setSharing] = useState(false);
  /** `/unshare`: the share about to be revoked (asked first). */
  const [unsharing, setUnsharing] = useState<ShareRecord | null>(null);
  const [inputKey, setInputKey] = useState(0);
  /** Transcript search (Ctrl/Cmd+F): the query and which match is current. */
  const [search, setSearch] = useState<SearchState>(null);
  const propsRef = useRef(props);
  propsRef.current = props;

  const load = useCallback(() => live.load(), [live]);

  // What this view does on the session's events (the store applies them on its own; the
  // session list is made stale by the same events in state/queries.ts).
  useEffect(() => {
    const sideEffects = (e: Event) => {
      switch (e.type) {
        case "permission_asked":
          platform.notify("mia-code needs permission", `${e.request.tool} ${e.request.target}`);
          break;
        case "turn_finished":
          if (e.session_id !== sessionId) break;
          // The agent may have created or removed files: @-completion lists them afresh.
          filesCache.clear();
          platform.notify("mia-code", `Turn finished (${e.end})`);
          setTimelineKey((k) => k + 1);
          break;
        case "snapshot":
        case "message_stored":
        case "subagent_finished":
          setTimelineKey((k) => k + 1);
          break;
        case "compaction_finished":
          // The messages it replaced left the session's list: load it as the store has it now.
          setTimelineKey((k) => k + 1);
          void live.load();
          break;
        default:
      }
    };
    return transport.subscribe(sessionId, sideEffects);
  }, [live, platform, sessionId, transport]);

  const children = useDelegations(sessionId, directory, store, state);

  // The parent's title for the fork marker, when the caller does not know it.
  const parentId = state.session?.fork?.source_session_id ?? state.session?.spawned_by?.session_id ?? null;
  const [fetchedParent, setFetchedParent] = useState<{ id: string; title: string } | null>(null);
  useEffect(() => {
    if (!parentId || propsRef.current.sessionTitle?.(parentId)) return;
    let alive = true;
    api
      .session(parentId)
      .then((d) => alive && setFetchedParent({ id: parentId, title: d.session.title || d.session.slug }))
      .catch(() => undefined);
    return () => {
      alive = false;
    };
  }, [api, parentId]);

  const fork = useCallback(
    async (messageId: string | null, withFiles: boolean) => {
      try {
        const r = await api.fork(sessionId, messageId, withFiles);
        toast(
          r.files ? `Forked with files into worktree ${r.files.worktree}: ${r.title}` : `Forked: ${r.title}`,
          "info",
        );
        if (r.files && r.files.left_out.length > 0) toast(`Not carried over: ${r.files.left_out.join("; ")}`, "info");
        propsRef.current.onSessionsChanged();
        propsRef.current.onOpenSession?.(r.id);
      } catch (e) {
        toast(errorMessage(e));
      }
    },
    [api, sessionId, toast],
  );

  const promote = useCallback(async () => {
    const s = store.getState().session;
    if (!s?.parent_id) {
      toast(
        s?.fork
          ? "This session is top-level already (it was promoted)."
          : "Not a fork: /promote makes a fork a top-level session. Fork first (/fork, or Fork from here in a message's ⋯ menu).",
        "info",
      );
      return;
    }
    try {
      const updated = await api.promoteFork(sessionId);
      store.update((x) => ({ ...x, session: updated }));
      toast(`Promoted: “${updated.title}” is a top-level session now`, "info");
      propsRef.current.onSessionsChanged();
    } catch (e) {
      toast(errorMessage(e));
    }
  }, [api, sessionId, store, toast]);

  const compact = useCallback(async () => {
    const s = store.getState();
    if (s.running) {
      toast("A turn is running: /compact works once it has finished (or press Stop first).", "info");
      return;
    }
    if (isCompacting(s)) {
      toast("The conversation is being compacted already.", "info");
      return;
    }
    store.update((x) => ({ ...x, compaction: { state: "running", trigger: "manual" } }));
    try {
      const r = await api.compact(sessionId);
      store.update((x) => (x.compaction?.state === "running" ? { ...x, compaction: null } : x));
      toast(compactResultText(r), "info");
      await load();
      propsRef.current.onSessionsChanged();
    } catch (e) {
      // 400 (nothing to compact, compaction off) and 409 (a turn runs) say what to do.
      store.update((x) => ({ ...x, compaction: { state: "failed", trigger: "manual", message: errorMessage(e) } }));
    }
  }, [api, load, sessionId, store, toast]);

  // `/unshare`: this session's share, if it has one, is revoked once confirmed.
  const unshare = useCallback(async () => {
    try {
      const list = await api.shares();
      const record = (Array.isArray(list) ? list : []).find((r) => r.session_id === sessionId && !r.session_deleted);
      if (record) setUnsharing(record);
      else toast("This session is not shared", "info");
    } catch (e) {
      toast(errorMessage(e));
    }
  }, [api, sessionId, toast]);

  const history = useMemo(() => userTexts(state.messages), [state.messages]);
  const totals = useMemo(() => sessionTotals(state.messages), [state.messages]);

  /** Follow-ups typed while a turn runs: kept (and sent, oldest first, as turns complete) by the live session. */
  const followUps = live.followUps;
  const queued = useSyncExternalStore(followUps.subscribe, followUps.getSnapshot);
  const send = useCallback(
    async (text: string): Promise<boolean> => {
      if (store.getState().running) {
        followUps.add(text);
        return true;
      }
      if (isCompacting(store.getState())) {
        toast("The conversation is being compacted: send your message once it has finished.", "info");
        return false;
      }
      return live.start(text);
    },
    [followUps, live, store, toast],
  );
  const sendQueued = () => void live.sendNext();
  const editQueued = (i: number) => {
    const text = followUps.take(i);
    if (text === undefined) return;
    restoreDraft(sessionId, text);
    setInputKey((k) => k + 1);
  };

  const retry = useCallback(() => {
    if (store.getState().error?.kind === LOAD_FAILED) {
      store.update((s) => ({ ...s, error: null }));
      void live.load();
      return;
    }
    const last = userTexts(store.getState().messages).at(-1);
    if (last) void send(last);
  }, [live, send, store]);

  const switchTo = useCallback(
    async (agent: string) => {
      setPicker(false);
      const s = store.getState();
      if (agent === s.agent && !s.queuedAgent) return;
      const prev = { agent: s.agent, queuedAgent: s.queuedAgent };
      store.update((x) => (x.running ? { ...x, queuedAgent: agent } : { ...x, agent, queuedAgent: null }));
      try {
        await api.switchAgent(sessionId, agent);
      } catch (e) {
        store.update((x) => ({ ...x, ...prev }));
        toast(errorMessage(e));
      }
    },
    [api, sessionId, store, toast],
  );

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

  const reportHistory = useCallback(
    (r: RevertSummary) => {
      if (r.applied) toast(r.message, "info");
      else
        toast(
          r.conflicts.length ? `Nothing changed: ${r.conflicts.map((c) => `${c.path} (${c.reason})`).join(", ")}` : r.message,
        );
      ownChange();
    },
    [toast, ownChange],
  );

  const setModel = useCallback(
    async (model: string | null) => {
      // The server says what is wrong with a reference (400): the caller shows it.
      const updated = await api.setModel(sessionId, model);
      if (updated && typeof updated === "object" && "id" in updated) store.update((x) => ({ ...x, session: updated }));
      else store.update((x) => (x.session ? { ...x, session: { ...x.session, model } } : x));
      toast(model ? `Model for this session: ${model}` : "Model: back to the defaults", "info");
    },
    [api, sessionId, store, toast],
  );

  const onCommand = useCallback(
    (name: string, args?: string) => {
      const run = async (p: Promise<RevertSummary>) => {
        try {
          reportHistory(await p);
        } catch (e) {
          toast(errorMessage(e));
        }
      };
      switch (name) {
        case "undo":
          void run(api.undo(sessionId));
          break;
        case "redo":
          void run(api.redo(sessionId));
          break;
        case "revert":
        case "snapshots":
          setPanel("changes");
          break;
        case "diff":
          setPanel("diff");
          break;
        case "new":
          props.onNewSession();
          break;
        case "plan":
        case "build":
          void switchTo(name);
          break;
        case "help":
          setHelp(true);
          break;
        case "worktrees":
          props.onWorktrees?.();
          break;
        case "compare":
          props.onCompare?.();
          break;
        case "fork":
          void fork(null, false);
          break;
        case "forks":
          props.onForkTree?.(sessionId);
          break;
        case "promote":
          void promote();
          break;
        case "compact":
          void compact();
          break;
        case "cost":
          setPanel("cost");
          break;
        case "history":
          setPanel("history");
          break;
        case "model": {
          const ref = args?.trim();
          if (!ref) setModelPicker(true);
          else
            setModel(ref === "default" ? null : ref).catch((e: unknown) => toast(`/model ${ref}: ${errorMessage(e)}`));
          break;
        }
        case "share":
          setSharing(true);
          break;
        case "unshare":
          void unshare();
          break;
        case "agent": {
          const m = /^create\b\s*([\s\S]*)$/.exec(args?.trim() ?? "create");
          if (m) props.onCreateAgent?.(m[1]?.trim() || undefined, store.getState().agent);
          else toast("Usage: /agent create [what the agent should do]", "info");
          break;
        }
        default:
      }
    },
    [api, compact, fork, promote, props, reportHistory, sessionId, setModel, store, switchTo, toast, unshare],
  );

  const actions: MessageActions = useMemo(
    () => ({
      onDiffStep: (callId) => {
        const info = store.getState().tools[callId];
        setDiff({ title: `Diff: ${info?.tool ?? "step"} ${toolTarget(info?.input)}`.trim(), scope: { step: callId } });
      },
      onDiffMessage: (messageId) => setDiff({ title: "Diff of this message", scope: { message: messageId } }),
      onRetry: retry,
      onFork: (messageId, withFiles) => void fork(messageId, withFiles),
      onOpenSession: (id, messageId) => propsRef.current.onOpenSession?.(id, messageId),
      sessionTitle: (id) => propsRef.current.sessionTitle?.(id) ?? (fetchedParent?.id === id ? fetchedParent.title : undefined),
      loadArchived: async (summaryId) => {
        const d = await api.sessionWithArchive(sessionId);
        return d.messages.filter((m) => m.compacted_by === summaryId);
      },
      markers,
      childSession: (id) => children.store(id),
      loadChild: (id) => children.ensureLoaded(id),
    }),
    [api, children, fetchedParent, fork, markers, retry, sessionId, store],
  );

  const reply = useCallback(
    async (requestId: string, r: PermissionReplyKind) => {
      // A subagent's ask is answered in its own session (the child's id, not this one's).
      const target = store.getState().permissions.find((p) => p.id === requestId)?.session_id ?? sessionId;
      store.update((s) => ({ ...s, replies: { ...s.replies, [requestId]: r.kind } }));
      try {
        await api.reply(target, requestId, r);
      } catch (e) {
        toast(errorMessage(e));
        throw e;
      }
    },
    [api, sessionId, store, toast],
  );

  const stop = useCallback(async () => {
    try {
      await api.cancel(sessionId);
    } catch (e) {
      toast(errorMessage(e));
    }
  }, [api, sessionId, toast]);
  // What the composer is given is stable across a streamed answer's frames, so the composer (a
  // memo) does not render again with every delta.
  const onNotice = useCallback((m: string) => toast(m, "info"), [toast]);
  const onStop = useCallback(() => void stop(), [stop]);

  // The command palette's session actions (a `/` command, Stop, the plan/build toggle).
  const onPaletteCommand = useEffectEvent((cmd: SessionCommand) => {
    if (cmd.kind === "stop") {
      if (store.getState().running) void stop();
    } else if (cmd.kind === "mode") toggleMode();
    else onCommand(cmd.name, cmd.args);
  });
  useEffect(() => {
    const on = (e: globalThis.Event) => onPaletteCommand((e as CustomEvent<SessionCommand>).detail);
    window.addEventListener(SESSION_COMMAND, on);
    return () => window.removeEventListener(SESSION_COMMAND, on);
  }, []);
  // The session's own folder: a worktree session mentions the worktree's files.
  const sessionDir = state.session?.directory || directory;
  const loadFiles = useCallback(() => {
    let p = filesCache.get(sessionDir);
    if (!p) {
      p = api.files(sessionDir);
      filesCache.set(sessionDir, p);
      p.catch(() => filesCache.delete(sessionDir));
    }
    return p;
  }, [api, sessionDir]);

  const title = state.session?.title || state.session?.slug || "New session";
  const compacting = isCompacting(state);
  const running = state.compaction?.state === "running" ? state.compaction : null;
  const failed = state.compaction?.state === "failed" ? state.compaction : null;

  const canRetry = state.error?.kind === LOAD_FAILED || (!state.running && history.length > 0);
  const spawned = state.session?.spawned_by ?? null;
  const fetchedTitle = (id: string) => (fetchedParent?.id === id ? fetchedParent.title : undefined);
  const spawnedTitle =
    (spawned && (props.sessionTitle?.(spawned.session_id) ?? fetchedTitle(spawned.session_id))) || "the parent session";
  const agentModel = agents.find((a) => a.name === state.agent)?.model ?? null;
  const sessionModel = state.session?.model ?? null;
  // /model's pick for the current agent comes first (the runtime's order).
  const picked = state.session?.agent_models?.[state.agent] ?? null;
  const lastModel = useMemo(() => {
    for (let i = state.messages.length - 1; i >= 0; i--) {
      const m = state.messages[i]!.metadata.model;
      if (m) return m;
    }
    return null;
  }, [state.messages]);
  const mentionAgents = useMemo(
    () =>
      agents
        .filter((a) => a.mode === "subagent" || a.mode === "all")
        .map((a) => ({ name: a.name, description: a.description })),
    [agents],
  );
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
  const openSessionLink = useCallback((id: string) => propsRef.current.onOpenSession?.(id), []);
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
  const parent = state.session?.parent_id ?? null;
  const disabledCommands = useMemo(() => {
    const d: Partial<Record<string, string>> = {};
    if (!parent) d.promote = "only a fork can be promoted";
    if (state.running) d.compact = "a turn is running: wait for it to finish";
    else if (compacting) d.compact = "compacting already";
    return d;
  }, [parent, state.running, compacting]);

  return (
    <OpenFileContext.Provider value={openFile}>
      <PanelGroup
        direction="horizontal"
        autoSaveId="mia-code.layout.session"
        className={`session-layout${panel ? " with-panel" : ""}`}
      >
        <Panel id="conversation" order={1} defaultSize={66} minSize={40}>
          <section className="main-col" aria-label="Conversation">
            <header className="conv-header">
              <EditableTitle
                title={title}
                hint={state.session?.slug}
                onRename={async (t) => {
                  try {
                    await api.updateSession(sessionId, { title: t });
                  } catch (e) {
                    toast(errorMessage(e));
                  }
                }}
              />
              {spawned && (
                <span className="subagent-of small" data-testid="subagent-of">
                  ↳ subagent <span className="agent-tag">{state.session?.agent ?? "?"}</span> of{" "}
                  {props.onOpenSession ? (
                    <button
                      type="button"
                      className="link-btn"
                      data-testid="subagent-parent-link"
                      title="Open the session that delegated this task"
                      onClick={() => props.onOpenSession?.(spawned.session_id)}
                    >
                      {spawnedTitle}
                    </button>
                  ) : (
                    <strong>{spawnedTitle}</strong>
                  )}
                </span>
              )}
              <button
                type="button"
                className="session-cost link-btn muted small"
                data-testid="session-cost"
                title="Session total: tokens in / out, cost. Per agent and model, with subagents: /cost"
                onClick={() => setPanel("cost")}
              >
                ↑{formatTokens(totals.input)} ↓{formatTokens(totals.output)}
                {totals.priced ? ` · ${formatCost(totals.cost)}` : ""}
              </button>
              <button
                type="button"
                className={`btn small toggle${hideCommentary ? " on" : ""}`}
                data-testid="toggle-commentary"
                aria-pressed={hideCommentary}
                onClick={() => setHideCommentary(!hideCommentary)}
              >
                {hideCommentary ? "Show commentary" : "Hide commentary"}
              </button>
              {props.onForkTree && (
                <button
                  type="button"
                  className="btn small"
                  data-testid="open-fork-tree"
                  title="This project's sessions and their forks as a tree (/forks)"
                  onClick={() => props.onForkTree?.(sessionId)}
                >
                  Fork tree
                </button>
              )}
              {parent && props.onCompareSessions && (
                <button
                  type="button"
                  className="btn small"
                  data-testid="compare-parent"
                  title="This fork's file changes and its parent's, since the fork point"
                  onClick={() => props.onCompareSessions?.(sessionId, parent)}
                >
                  Compare with parent
                </button>
              )}
              <button
                type="button"
                className="btn small"
                data-testid="share-session"
                title="Publish a redacted copy of this session to the share server: preview first (/share)"
                onClick={() => setSharing(true)}
              >
                Share
              </button>
              <button
                type="button"
                className="btn small"
                onClick={() => setPanel(panel ? null : "changes")}
                aria-pressed={panel !== null}
              >
                {panel ? "Hide panel" : "Changes"}
              </button>
            </header>
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
              <Conversation
                state={state}
                hideCommentary={hideCommentary}
                actions={actions}
                highlight={currentMatch ?? props.highlightMessage ?? null}
              />
            </ErrorBoundary>
            {!state.running && state.lastTurn && state.lastTurn.end !== "completed" && state.lastTurn.end !== "error" && (
              <div className="status-line muted small" role="status" data-testid="turn-end">
                {state.lastTurn.end === "cancelled"
                  ? "Stopped."
                  : state.lastTurn.end === "step_limit"
                    ? `Stopped after ${state.lastTurn.steps} steps (the agent's step limit). Send a message to continue.`
                    : "The turn was blocked (see the last tool result)."}
              </div>
            )}
            {compacting && (
              <div className="status-line compaction-status" role="status" data-testid="compacting">
                <span className="compaction-dot" aria-hidden>
                  ⇊
                </span>{" "}
                Compacting the conversation…
                <span className="muted"> {compactingDetail(running?.trigger, running?.tokensBefore)}</span>
              </div>
            )}
            {failed && (
              <div className="error-banner" role="alert" data-testid="compaction-failed">
                <span>Could not compact the conversation: {failed.message}</span>
                <button
                  type="button"
                  className="icon-btn"
                  aria-label="Dismiss the compaction error"
                  onClick={() => store.update((s) => (s.compaction?.state === "failed" ? { ...s, compaction: null } : s))}
                >
                  ×
                </button>
              </div>
            )}
            {state.retrying && (
              <div className="status-line muted small" role="status">
                Retrying (attempt {state.retrying.attempt}) in {Math.round(state.retrying.delayMs / 1000)} s: {state.retrying.reason}
              </div>
            )}
            {state.error && (
              <div className="error-banner" role="alert" data-testid="error-banner">
                <span>{state.error.message}</span>
                {canRetry && (
                  <button type="button" className="btn small" data-testid="retry" onClick={retry}>
                    Retry
                  </button>
                )}
                <button
                  type="button"
                  className="icon-btn"
                  aria-label="Dismiss error"
                  onClick={() => store.update((s) => ({ ...s, error: null }))}
                >
                  ×
                </button>
              </div>
            )}
            <div className="input-row">
              <div className="input-tools">
                <ModeBadge agent={state.agent} queued={state.queuedAgent} onClick={toggleMode} />
                {picker && (
                  <AgentPicker
                    agents={agents}
                    current={state.agent}
                    onPick={(a) => void switchTo(a)}
                    onClose={() => setPicker(false)}
                  />
                )}
                <span className="model-wrap">
                  <button
                    type="button"
                    className="model-btn small"
                    data-testid="model-button"
                    aria-haspopup="listbox"
                    aria-expanded={modelPicker}
                    title={modelHint(picked, agentModel, sessionModel, state.agent)}
                    onClick={() => setModelPicker(!modelPicker)}
                  >
                    <span className="mono">{picked ?? agentModel ?? sessionModel ?? lastModel ?? "default model"}</span>
                    {!picked && !agentModel && !sessionModel && lastModel && <span className="muted"> (default)</span>}
                    {picked && <span className="muted"> (picked)</span>}
                    {!picked && agentModel && <span className="muted"> ({state.agent}'s)</span>} ▾
                  </button>
                  {modelPicker && (
                    <ModelPicker
                      load={loadModels}
                      current={picked}
                      onPick={async (m) => {
                        await setModel(m);
                        setModelPicker(false);
                      }}
                      onClose={() => setModelPicker(false)}
                    />
                  )}
                </span>
                {state.context && <ContextMeter usage={state.context} />}
                {state.running && (
                  <button type="button" className="btn danger small" data-testid="stop" onClick={() => void stop()}>
                    ■ Stop
                  </button>
                )}
                {state.running && !compacting && <span className="muted small running-dot">working…</span>}
                {compacting && <span className="muted small running-dot">compacting…</span>}
              </div>
              {queued.length > 0 && (
                <ul className="queued-list" data-testid="queued-messages" aria-label="Queued follow-ups">
                  {queued.map((q, i) => (
                    <li key={`${i}:${q}`} className="queued" data-testid="queued-message">
                      <span className="muted small">Queued{state.running ? " (sent when the turn ends)" : ""}:</span>{" "}
                      <span className="queued-text">{q.length > 160 ? `${q.slice(0, 160)}…` : q}</span>
                      {!state.running && i === 0 && (
                        <button type="button" className="link-btn" data-testid="queued-send" onClick={() => sendQueued()}>
                          Send now
                        </button>
                      )}
                      <button type="button" className="link-btn" data-testid="queued-edit" onClick={() => editQueued(i)}>
                        Edit
                      </button>
                      <button
                        type="button"
                        className="link-btn"
                        data-testid="queued-cancel"
                        onClick={() => followUps.take(i)}
                      >
                        Cancel
                      </button>
                    </li>
                  ))}
                </ul>
              )}
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
                mentionAgents={mentionAgents}
              />
            </div>
          </section>
        </Panel>
        {panel && (
          <>
            <PanelResizeHandle className="resize-handle" aria-label="Resize the side panel" />
            <Panel id="side-panel" order={2} defaultSize={34} minSize={22} maxSize={60}>
              <ErrorBoundary label="The side panel">
                {sideReady ? (
                  <RightPanel
                    tab={panel}
                    onTab={setPanel}
                    sessionId={sessionId}
                    refreshKey={timelineKey}
                    busy={state.running}
                    onResult={bumpTimeline}
                    onOpenSession={openSessionLink}
                    sessionTitle={subagentTitle}
                  />
                ) : (
                  <aside className="right-panel" aria-label="Changes and diffs" aria-busy="true" />
                )}
              </ErrorBoundary>
            </Panel>
          </>
        )}
      </PanelGroup>
      <ErrorBoundary label="The permission dialog">
        {!props.hideAsks && <PermissionDialog requests={state.permissions} onReply={reply} />}
      </ErrorBoundary>
      {diff && (
        <Modal title={diff.title} onClose={() => setDiff(null)} wide testId="diff-modal">
          <ErrorBoundary label="The diff">
            <LoadedDiff queryKey={keys.diff(sessionId, diff.scope)} load={() => api.diff(sessionId, diff.scope)} />
          </ErrorBoundary>
        </Modal>
      )}
      {sharing && (
        <ErrorBoundary label="The share dialog">
          <ShareDialog sessionId={sessionId} onClose={() => setSharing(false)} />
        </ErrorBoundary>
      )}
      {unsharing && (
        <UnshareConfirm sessionId={sessionId} record={unsharing} onClose={() => setUnsharing(null)} />
      )}
      {help && (
        <Modal title="Help" onClose={() => setHelp(false)}>
          <HelpText />
        </Modal>
      )}
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
