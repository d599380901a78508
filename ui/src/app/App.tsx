import { startTransition, useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { ServerInfo, SessionSummary } from "../protocol/generated";
import { errorMessage, makeApi } from "../lib/api";
import { SessionCache } from "../state/liveSessions";
import { createQueryClient, invalidateOnEvents, keys } from "../state/queries";
import { QueryClientProvider, useQueryClient } from "@tanstack/react-query";
import { Panel, PanelGroup, PanelResizeHandle, type ImperativePanelHandle } from "react-resizable-panels";
import type { Platform, Transport } from "../transport/types";
import { ServicesProvider, ToastProvider, useClearToastsOn, useServices, useToast } from "./context";
import { ProjectBar } from "./ProjectBar";
import { Sidebar } from "./Sidebar";
import { restoreDraft } from "./PromptInput";
import { Settings } from "./Settings";
import { ErrorBoundary } from "./ErrorBoundary";
import { AgentCreate } from "./AgentCreate";
import { AttentionQueue } from "./Attention";
import { installZoom } from "./zoom";
import { CommandPalette } from "./CommandPalette";
import { Center, type CenterView } from "./shell/Center";
import { ConnectionBanner } from "./shell/ConnectionBanner";
import { paletteActions, TOGGLE_SIDEBAR } from "./shell/paletteActions";
import { ShortcutsSheet } from "./shell/ShortcutsSheet";
import { useShellKeys } from "./shell/useShellKeys";
import { useProjectLists } from "./shell/useProjectLists";
import { useWindowAttention } from "./shell/useWindowAttention";

export { LOST_AFTER_MS } from "./shell/useWindowAttention";

const LAST_PROJECT = "mia-code.lastProject";

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
  const { api } = services;
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
  useClearToastsOn(`${project ?? ""}|${view.kind}|${currentId ?? ""}`);
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
  const { sessionsQuery, sessions, agents, refreshSessions, sessionTitle } = useProjectLists(project, showArchived);
  // A project opened: its first session (not a subagent's, opened from its parent) is selected
  // once its list is there.
  const selectedFor = useRef<string | null>(null);
  useEffect(() => {
    if (!project || !sessionsQuery.isSuccess || selectedFor.current === project) return;
    selectedFor.current = project;
    setCurrentId(sessionsQuery.data.find((s) => !s.archived_at && !s.spawned_by)?.id ?? null);
  }, [project, sessionsQuery.isSuccess, sessionsQuery.data]);

  // Every session of the project, live (asks, running, finished), and the window's stream.
  const { live, elsewhere, connection, retryNow } = useWindowAttention({
    project,
    currentId,
    sessionOpen: view.kind === "sessions",
    sessionTitle,
    openSession,
  });
  const [queueOpen, setQueueOpen] = useState(false);
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
  /** `?` outside a text field: the keyboard shortcuts. */
  const [shortcuts, setShortcuts] = useState(false);
  useShellKeys({ waiting: elsewhere.length, setQueueOpen, toggleSidebar, setShortcuts, setPalette });

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
      <ConnectionBanner connection={connection} onRetry={retryNow} />
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
          <Center
            project={project}
            view={view}
            setView={setView}
            currentId={currentId}
            agents={agents}
            sessions={sessions}
            highlight={highlight}
            hideAsks={queueOpen}
            openSession={openSession}
            newSession={newSession}
            sessionsChanged={sessionsChanged}
            showWorktrees={showWorktrees}
            showCompare={showCompare}
            compareAttempts={compareAttempts}
            showTree={showTree}
            compareSessions={compareSessions}
            compareWithParent={compareWithParent}
            sessionTitle={sessionTitle}
            createAgent={createAgent}
            startWith={startWith}
          />
        </Panel>
      </PanelGroup>
      {shortcuts && <ShortcutsSheet onClose={() => setShortcuts(false)} />}
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
