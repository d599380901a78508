import { lazy, startTransition, Suspense, useCallback, useEffect, useEffectEvent, useMemo, useRef, useState } from "react";
import type { AgentInfo, Event as RuntimeEvent, PermissionRequest, ServerInfo, SessionSummary } from "../protocol/generated";
import { errorMessage, makeApi } from "../lib/api";
import { SessionCache } from "../state/liveSessions";
import { createQueryClient, invalidateOnEvents, keys } from "../state/queries";
import { QueryClientProvider, useQuery, useQueryClient } from "@tanstack/react-query";
import { Panel, PanelGroup, PanelResizeHandle, type ImperativePanelHandle } from "react-resizable-panels";
import type { Platform, Transport } from "../transport/types";
import { ServicesProvider, ToastProvider, useServices, useToast } from "./context";
import { ProjectBar } from "./ProjectBar";
import { Sidebar } from "./Sidebar";
import { SessionView } from "./SessionView";
import { DraftView } from "./DraftView";
import { restoreDraft } from "./PromptInput";
import { Settings } from "./Settings";
import { ErrorBoundary } from "./ErrorBoundary";
import { Worktrees } from "./Worktrees";
import { Compare } from "./Compare";
import { SessionCompare } from "./SessionCompare";
import { AgentCreate } from "./AgentCreate";
import { AttentionQueue, isAttentionShortcut, useAttention } from "./Attention";
import { AttentionStore } from "../state/attention";
import { installZoom, zoomStep } from "./zoom";
import { CommandPalette, isPaletteShortcut, type PaletteAction } from "./CommandPalette";
import { modKey, PALETTE_SESSION_COMMANDS, runSessionCommand } from "./commands";
import { setTheme } from "./theme";
import { HelpText } from "./Help";
import { Modal } from "./Modal";

// The fork tree (with its layout library) is loaded the first time it is shown.
const ForkTree = lazy(() => import("./ForkTree").then((m) => ({ default: m.ForkTree })));

const LAST_PROJECT = "mia-code.lastProject";

/**
 * What the center shows: the open session (or a draft), the worktrees, a comparison of two attempts
 * (reached from the worktrees or from the fork tree), the fork tree, or two sessions' changes.
 */
type CenterView =
  | { kind: "sessions" }
  | { kind: "worktrees" }
  | { kind: "compare"; a?: string; b?: string; from?: "worktrees" | "tree" }
  | { kind: "tree"; focus?: string }
  | { kind: "session-compare"; left: string; right: string; from: "tree" | "session" };

/** How long failed reconnects show as "reconnecting…" before the banner says the connection is lost. */
export const LOST_AFTER_MS = 15_000;

export function App({ transport, platform }: { transport: Transport; platform: Platform }) {
  const services = useMemo(() => {
    const api = makeApi(transport);
    return { transport, platform, api, sessions: new SessionCache(api, transport) };
  }, [transport, platform]);
  useEffect(() => () => services.sessions.dispose(), [services]);
  const queryClient = useMemo(() => createQueryClient(), []);
  useEffect(() => invalidateOnEvents(queryClient, transport), [queryClient, transport]);
  useEffect(() => installZoom(), []);
  return (
    <QueryClientProvider client={queryClient}>
      <ServicesProvider value={services}>
        <ToastProvider>
          <Shell />
        </ToastProvider>
      </ServicesProvider>
    </QueryClientProvider>
  );
}

export function DemoBanner() {
  return (
    <div className="demo-banner" data-testid="demo-banner" role="note">
      Scripted demo — answers come from a recorded script, not a real model
    </div>
  );
}

function Shell() {
  const services = useServices();
  const { api, transport, platform } = services;
  const toast = useToast();
  const [info, setInfo] = useState<ServerInfo | null>(null);
  const [project, setProject] = useState<string | null>(null);

  const [showArchived, setShowArchived] = useState(false);
  const [currentId, setCurrentId] = useState<string | null>(null);

  const [settings, setSettings] = useState(false);
  /** The agent generator (`/agent create`, Settings' agents): an optional first description and the creating agent. */
  const [agentCreate, setAgentCreate] = useState<{ description?: string; creator?: string } | null>(null);
  const createAgent = useCallback((description?: string, creator?: string) => setAgentCreate({ description, creator }), []);
  const [view, setView] = useState<CenterView>({ kind: "sessions" });
  const showWorktrees = useCallback(() => setView({ kind: "worktrees" }), []);
  const showCompare = useCallback((a?: string, b?: string) => setView({ kind: "compare", a, b }), []);
  /** A message to scroll to when its session opens (a fork point, from the fork tree or a fork marker). */
  const [highlight, setHighlight] = useState<{ session: string; message: string } | null>(null);
  const openSession = useCallback((id: string, messageId?: string) => {
    setView({ kind: "sessions" });
    setHighlight(messageId ? { session: id, message: messageId } : null);
    setCurrentId(id);
  }, []);
  const showTree = useCallback((focus?: string) => setView({ kind: "tree", focus }), []);
  const compareSessions = useCallback(
    (left: string, right: string, from: "tree" | "session" = "tree") =>
      setView({ kind: "session-compare", left, right, from }),
    [],
  );

  useEffect(() => {
    api.info().then(
      (i) => {
        setInfo(i);
        let last: string | null = null;
        try {
          last = localStorage.getItem(LAST_PROJECT);
        } catch {
          /* no storage */
        }
        setProject(i.project ?? last);
      },
      (e: unknown) => toast(errorMessage(e)),
    );
  }, [api, toast]);

  // The desktop app launched again with `--project DIR` while running.
  useEffect(() => {
    const onOpen = (e: Event) => {
      const dir = (e as CustomEvent<unknown>).detail;
      if (typeof dir === "string" && dir) setProject(dir);
    };
    window.addEventListener("mia-open-project", onOpen);
    return () => window.removeEventListener("mia-open-project", onOpen);
  }, []);

  // The project's sessions and agents: cached, made stale by Events (state/queries.ts).
  const queryClient = useQueryClient();
  const sessionsQuery = useQuery({
    queryKey: keys.sessions(project ?? "", showArchived),
    queryFn: () => api.sessions(project ?? "", showArchived),
    enabled: project !== null,
    // A turn this window does not hear (run by another process, e.g. `mia-code run`) shows
    // only in the store: while any session is busy, the list is read again every few seconds
    // (not while the window is hidden), so its "running" ends when that turn does.
    refetchInterval: (q) => ((q.state.data ?? []).some((x) => x.status === "busy") ? BUSY_POLL_MS : false),
  });
  const sessions = sessionsQuery.data ?? NO_SESSIONS;
  const agentsQuery = useQuery({
    queryKey: keys.agents(project ?? ""),
    queryFn: () => api.agents(project ?? ""),
    enabled: project !== null,
  });
  const agents = agentsQuery.data ?? NO_AGENTS;
  const failed = sessionsQuery.error ?? agentsQuery.error;
  useEffect(() => {
    if (failed) toast(errorMessage(failed));
  }, [failed, toast]);
  const refreshSessions = useCallback(
    (): Promise<void> =>
      project ? queryClient.invalidateQueries({ queryKey: keys.sessionsOf(project) }) : Promise.resolve(),
    [project, queryClient],
  );
  // A project opened: its first session (not a subagent's, opened from its parent) is selected
  // once its list is there.
  const selectedFor = useRef<string | null>(null);
  useEffect(() => {
    if (!project || !sessionsQuery.isSuccess || selectedFor.current === project) return;
    selectedFor.current = project;
    setCurrentId(sessionsQuery.data.find((s) => !s.archived_at && !s.spawned_by)?.id ?? null);
  }, [project, sessionsQuery.isSuccess, sessionsQuery.data]);

  // Session titles by id: a new function only when a title changes (not with every list read,
  // which would render the open session's view again for nothing).
  const titleList = useMemo(() => JSON.stringify(sessions.map((s) => [s.id, s.title || s.slug])), [sessions]);
  const sessionTitle = useMemo(() => {
    const titles = new Map(JSON.parse(titleList) as [string, string][]);
    return (id: string) => titles.get(id);
  }, [titleList]);

  // Every session of the project, live: the asks waiting anywhere and which sessions run. The
  // server's list (filtered by project) is the truth; events say when to read it again.
  const attention = useMemo(() => new AttentionStore(), []);
  const live = useAttention(attention);
  const [queueOpen, setQueueOpen] = useState(false);
  /**
   * The window's stream to the runtime: open; reconnecting (with backoff); or lost, after
   * LOST_AFTER_MS of failed retries (still retrying, and the user can retry now).
   */
  const [connection, setConnection] = useState<"open" | "reconnecting" | "lost">("open");
  useEffect(() => {
    if (connection !== "reconnecting") return;
    const t = setTimeout(() => setConnection("lost"), LOST_AFTER_MS);
    return () => clearTimeout(t);
  }, [connection]);
  const retryNow = () => {
    setConnection("reconnecting");
    transport.reconnect?.();
  };
  // A new ask in another session: tell the OS (the platform shows it only when this window is in
  // the background or unfocused; the open session's own asks are told by its view).
  const notifyFresh = useEffectEvent((asks: PermissionRequest[], before: Set<string>) => {
    const fresh = asks.filter(
      (a) => !before.has(a.id) && a.session_id !== currentId && a.root_session_id !== currentId,
    );
    const a = fresh[0];
    if (!a) return;
    const where = sessionTitle(a.root_session_id ?? a.session_id) ?? "another session";
    // Clicked: that session opens, with its ask.
    platform.notify("mia-code needs you", `${a.agent} asks to use ${a.tool} in ${where}`, () =>
      openSession(a.root_session_id ?? a.session_id),
    );
  });
  // The runtime's notices (a plugin installing, skipped offline, disabled for a session): a neutral
  // toast that goes away by itself; one of another session names it.
  const showNotice = useEffectEvent((e: Extract<RuntimeEvent, { type: "notice" }>) => {
    const other = e.session_id && e.session_id !== currentId ? sessionTitle(e.session_id) : undefined;
    toast(other ? `${e.message} (in “${other}”)` : e.message, "notice");
  });
  useEffect(() => {
    if (!project) return;
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const seed = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        const before = new Set(attention.getState().asks.map((a) => a.id));
        api.asks(project).then(
          (asks) => {
            if (!alive) return;
            const list = Array.isArray(asks) ? asks : [];
            attention.seed(list);
            notifyFresh(list, before);
          },
          () => undefined,
        );
      }, 30);
    };
    attention.seed([]);
    seed();
    const stop = transport.subscribe(
      null,
      (e) => {
        if (e.type === "permission_asked") seed();
        else if (e.type === "notice") showNotice(e);
        else attention.apply(e);
      },
      (st) => {
        if (st === "open" || st === "lagged") seed();
        if (st === "open" || st === "resumed") setConnection("open");
        else if (st === "reconnecting") setConnection((c) => (c === "lost" ? c : "reconnecting"));
      },
    );
    return () => {
      alive = false;
      if (timer) clearTimeout(timer);
      stop();
    };
  }, [api, attention, project, transport]);
  const elsewhere = useMemo(() => AttentionStore.elsewhere(live.asks, currentId), [live.asks, currentId]);
  // What the open session finishes is read; opening one reads what it finished.
  useEffect(() => {
    attention.setOpen(view.kind === "sessions" ? currentId : null);
  }, [attention, currentId, view.kind]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isAttentionShortcut(e) && elsewhere.length > 0) {
        e.preventDefault();
        setQueueOpen(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [elsewhere.length]);
  const closeQueue = useCallback(() => setQueueOpen(false), []);

  // Ctrl/Cmd+K: every action of this view, with its shortcut.
  const [palette, setPalette] = useState(false);
  // Ctrl/Cmd+B hides or shows the sidebar (its size is kept; dragging its edge resizes it).
  const sidebarRef = useRef<ImperativePanelHandle>(null);
  const toggleSidebar = useCallback(() => {
    const p = sidebarRef.current;
    if (!p) return;
    if (p.isCollapsed()) p.expand();
    else p.collapse();
  }, []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "b") {
        e.preventDefault();
        toggleSidebar();
      }
    };
    // The palette's "Hide or show the sidebar".
    const onToggle = () => toggleSidebar();
    window.addEventListener("keydown", onKey);
    window.addEventListener(TOGGLE_SIDEBAR, onToggle);
    return () => {
      window.removeEventListener("keydown", onKey);
      window.removeEventListener(TOGGLE_SIDEBAR, onToggle);
    };
  }, [toggleSidebar]);
  /** `?` outside a text field: the keyboard shortcuts. */
  const [shortcuts, setShortcuts] = useState(false);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // An open permission ask keeps the keyboard.
      if (document.querySelector("[data-testid='permission-dialog']")) return;
      if (e.key === "?" && !e.ctrlKey && !e.metaKey && !e.altKey) {
        const t = e.target as HTMLElement | null;
        const typing = t?.closest?.("input, textarea, select, [contenteditable='true']");
        if (typing || document.querySelector("[role='dialog']")) return;
        e.preventDefault();
        setShortcuts(true);
        return;
      }
      if (!isPaletteShortcut(e)) return;
      e.preventDefault();
      setPalette((p) => !p);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // Sessions started elsewhere (the CLI, another window) appear when this window is focused again.
  useEffect(() => {
    const onFocus = () => void refreshSessions();
    window.addEventListener("focus", onFocus);
    return () => window.removeEventListener("focus", onFocus);
  }, [refreshSessions]);

  const openProject = (dir: string) => {
    try {
      localStorage.setItem(LAST_PROJECT, dir);
    } catch {
      /* no storage */
    }
    setCurrentId(null);
    setView({ kind: "sessions" });
    setProject(dir);
  };

  /** A new session starts as a draft: it is created with the first message (and the agent chosen for it). */
  const newSession = useCallback(() => {
    setCurrentId(null);
    setView({ kind: "sessions" });
    requestAnimationFrame(() => document.querySelector<HTMLTextAreaElement>("[data-testid='prompt-input']")?.focus());
  }, []);

  // The open session's view is a memo: what it is given does not change with each render here.
  const sessionsChanged = useCallback(() => void refreshSessions(), [refreshSessions]);
  const compareAttempts = useCallback(() => showCompare(), [showCompare]);
  const compareWithParent = useCallback((left: string, right: string) => compareSessions(left, right, "session"), [compareSessions]);

  const archive = async (s: SessionSummary, archived: boolean) => {
    try {
      await api.updateSession(s.id, { archived });
      if (archived && s.id === currentId && !showArchived) setCurrentId(null);
      await refreshSessions();
    } catch (e) {
      toast(errorMessage(e));
    }
  };

  const remove = async (s: SessionSummary) => {
    try {
      await api.deleteSession(s.id);
      if (s.id === currentId) setCurrentId(null);
      if (project) {
        queryClient.setQueryData<SessionSummary[]>(keys.sessions(project, showArchived), (list) =>
          list?.filter((x) => x.id !== s.id),
        );
      }
    } catch (e) {
      toast(errorMessage(e));
    }
  };

  /**
   * The first message of a session that does not exist yet: the session is created, listened to
   * and sent its message, then shown, so its view mounts once, on a session already running
   * (not mounted empty, then made to send, then told it runs: three renders in the turn's first
   * 100 ms). The view is mounted as a transition: React renders it in slices between the stream's
   * events. A message that could not be sent is back in the session's input.
   */
  const startWith = async (text: string, agent: string | null): Promise<boolean> => {
    if (!project) return false;
    let id: string;
    try {
      id = (await api.createSession(project, agent ?? undefined)).id;
    } catch (e) {
      toast(errorMessage(e));
      return false;
    }
    const live = services.sessions.get(id, (e) => toast(errorMessage(e)));
    if (!(await live.start(text))) restoreDraft(id, text);
    startTransition(() => setCurrentId(id));
    void refreshSessions();
    return true;
  };

  return (
    <div className="app">
      {info?.demo && <DemoBanner />}
      {connection === "reconnecting" && (
        <div className="connection-banner" data-testid="connection-banner" data-state="reconnecting" role="status" aria-live="polite">
          Lost the connection to mia-code — reconnecting… (what you see may be out of date until it is back)
          <button type="button" className="btn small" data-testid="connection-reload" onClick={() => window.location.reload()}>
            Reload
          </button>
        </div>
      )}
      {connection === "lost" && (
        <div className="connection-banner connection-lost" data-testid="connection-banner" data-state="lost" role="alert">
          The connection to mia-code is lost. It keeps retrying every few seconds; until it is back, what you see may be out
          of date and what you send may fail.
          <button type="button" className="btn small" data-testid="connection-retry" onClick={retryNow}>
            Retry now
          </button>
          <button type="button" className="btn small" data-testid="connection-reload" onClick={() => window.location.reload()}>
            Reload
          </button>
        </div>
      )}
      <PanelGroup direction="horizontal" autoSaveId="mia-code.layout" className="app-body">
        <Panel
          id="sidebar"
          order={1}
          ref={sidebarRef}
          defaultSize={22}
          minSize={14}
          maxSize={40}
          collapsible
          collapsedSize={0}
          className="left-panel"
        >
          <aside className="left">
            <ProjectBar
              project={project}
              onOpen={openProject}
              onSettings={() => setSettings(true)}
              onWorktrees={showWorktrees}
              worktreesOpen={view.kind === "worktrees" || (view.kind === "compare" && view.from !== "tree")}
            />
            {project && (
              <Sidebar
                sessions={sessions}
                loading={sessionsQuery.isPending}
                error={sessionsQuery.error ? errorMessage(sessionsQuery.error) : null}
                onRetry={() => void sessionsQuery.refetch()}
                asks={live.asks}
                running={live.running}
              finished={live.finished}
                waitingElsewhere={elsewhere.length}
                onOpenQueue={() => setQueueOpen(true)}
                currentId={currentId}
                showArchived={showArchived}
                onShowArchived={setShowArchived}
                onOpen={openSession}
                onNew={newSession}
                onArchive={(s, a) => void archive(s, a)}
                onDelete={remove}
                onForkTree={() => showTree(currentId ?? undefined)}
              />
            )}
          </aside>
        </Panel>
        <PanelResizeHandle className="resize-handle" aria-label="Resize the sidebar (Enter hides or shows it)" />
        <Panel id="center" order={2} defaultSize={78} minSize={45}>
          <main className="center">
            {!project && (
              <div className="empty-state">
                <h1>mia-code</h1>
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
                  backLabel={view.from === "tree" ? "← Fork tree" : undefined}
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
                  backLabel={view.from === "session" ? "← Session" : "← Fork tree"}
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
                hideAsks={queueOpen}
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
              />
            )}
          </main>
        </Panel>
      </PanelGroup>
      {shortcuts && (
        <Modal title="Keyboard shortcuts" onClose={() => setShortcuts(false)} testId="shortcuts">
          <ul className="help">
            <li>
              <kbd>Ctrl/Cmd</kbd>+<kbd>K</kbd> command palette · <kbd>?</kbd> this sheet
            </li>
            <li>
              <kbd>Ctrl/Cmd</kbd>+<kbd>Shift</kbd>+<kbd>A</kbd> answer the asks waiting in other sessions
            </li>
            <li>
              <kbd>Esc</kbd> in the input stops a running turn (twice with a draft) · <kbd>Enter</kbd> during a turn
              queues a follow-up
            </li>
            <li>
              <kbd>Ctrl/Cmd</kbd>+<kbd>F</kbd> search this session (<kbd>Enter</kbd> next, <kbd>Shift</kbd>+<kbd>Enter</kbd>{" "}
              previous, <kbd>Esc</kbd> close)
            </li>
            <li>
              <kbd>Ctrl/Cmd</kbd>+<kbd>+</kbd> / <kbd>−</kbd> / <kbd>0</kbd> zoom
            </li>
            <li>
              <kbd>Ctrl/Cmd</kbd>+<kbd>B</kbd> hide or show the sidebar; drag a panel's edge to resize it (or focus
              the edge: arrow keys, <kbd>Enter</kbd> hides or shows)
            </li>
          </ul>
          <HelpText />
        </Modal>
      )}
      {palette && (
        <CommandPalette
          onClose={() => setPalette(false)}
          actions={paletteActions({
            project: project !== null,
            waiting: elsewhere.length,
            newSession,
            settings: () => setSettings(true),
            worktrees: showWorktrees,
            compare: () => showCompare(),
            tree: () => showTree(currentId ?? undefined),
            queue: () => setQueueOpen(true),
            shortcuts: () => setShortcuts(true),
            sidebar: () => window.dispatchEvent(new Event(TOGGLE_SIDEBAR)),
            search: currentId ? () => window.dispatchEvent(new Event("mia-transcript-search")) : null,
            session: project && view.kind === "sessions" && currentId ? { running: live.running.get(currentId) === true } : null,
          })}
        />
      )}
      {queueOpen && (
        <ErrorBoundary label="The attention queue">
          <AttentionQueue asks={elsewhere} sessionTitle={sessionTitle} onClose={closeQueue} />
        </ErrorBoundary>
      )}
      {settings && (
        <ErrorBoundary label="Settings">
          <Settings
            directory={project}
            onClose={() => setSettings(false)}
            onCreateAgent={project ? () => createAgent() : undefined}
            onOpenSession={(id) => {
              setSettings(false);
              openSession(id);
            }}
          />
        </ErrorBoundary>
      )}
      {agentCreate && project && (
        <ErrorBoundary label="The agent generator">
          <AgentCreate
            directory={project}
            agent={agentCreate.creator}
            initialDescription={agentCreate.description}
            onClose={() => setAgentCreate(null)}
            onSaved={(p) => {
              // Usable at once: Tab's agents, the @ list and Settings' agents load again.
              void queryClient.invalidateQueries({ queryKey: keys.agents(project) });
              void queryClient.invalidateQueries({ queryKey: ["settings"] });
              toast(`Agent ${p.key} saved`, "info");
            }}
          />
        </ErrorBoundary>
      )}
    </div>
  );
}

const TOGGLE_SIDEBAR = "mia-toggle-sidebar";
const NO_SESSIONS: SessionSummary[] = [];
const BUSY_POLL_MS = 4000;
const NO_AGENTS: AgentInfo[] = [];

/**
 * What the command palette offers: the window's actions, and with a session on screen the
 * session's (its `/` commands, Stop, the plan/build toggle), each with the key that does it.
 */
function paletteActions(v: {
  project: boolean;
  waiting: number;
  newSession: () => void;
  settings: () => void;
  worktrees: () => void;
  compare: () => void;
  tree: () => void;
  queue: () => void;
  shortcuts: () => void;
  sidebar: () => void;
  /** Search the open session's transcript (null: no session open). */
  search: (() => void) | null;
  /** The session on screen (null: none). */
  session: { running: boolean } | null;
}): PaletteAction[] {
  const mod = modKey();
  const list: PaletteAction[] = [];
  if (v.session) {
    if (v.session.running) list.push({ id: "stop", label: "Stop the running turn", shortcut: "Esc", run: () => runSessionCommand({ kind: "stop" }) });
    list.push({ id: "mode", label: "Switch between plan and build", shortcut: "Tab", run: () => runSessionCommand({ kind: "mode" }) });
  }
  if (v.search) list.push({ id: "search", label: "Search in this session", shortcut: `${mod}+F`, run: v.search });
  if (v.session) {
    for (const c of PALETTE_SESSION_COMMANDS) {
      list.push({
        id: `cmd-${c.name}`,
        label: c.label,
        shortcut: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
        run: () => runSessionCommand({ kind: "command", name: c.name, args: c.args }),
      });
    }
  }
  if (v.project) {
    list.push({ id: "new-session", label: "New session", run: v.newSession });
    if (v.waiting > 0) list.push({ id: "attention", label: `Answer waiting asks (${v.waiting})`, shortcut: `${mod}+Shift+A`, run: v.queue });
    list.push({ id: "worktrees", label: "Worktrees", run: v.worktrees });
    list.push({ id: "compare", label: "Compare attempts", run: v.compare });
    list.push({ id: "fork-tree", label: "Fork tree", run: v.tree });
  }
  list.push({ id: "settings", label: "Settings", run: v.settings });
  list.push({ id: "shortcuts", label: "Keyboard shortcuts", shortcut: "?", run: v.shortcuts });
  list.push({ id: "sidebar", label: "Hide or show the sidebar", shortcut: `${mod}+B`, run: v.sidebar });
  list.push({ id: "zoom-in", label: "Zoom in", shortcut: `${mod}++`, run: () => zoomStep(1) });
  list.push({ id: "zoom-out", label: "Zoom out", shortcut: `${mod}+−`, run: () => zoomStep(-1) });
  list.push({ id: "zoom-reset", label: "Actual size", shortcut: `${mod}+0`, run: () => zoomStep(0) });
  list.push({ id: "theme-system", label: "Theme: follow the system", run: () => setTheme("system") });
  list.push({ id: "theme-light", label: "Theme: light", run: () => setTheme("light") });
  list.push({ id: "theme-dark", label: "Theme: dark", run: () => setTheme("dark") });
  return list;
}
