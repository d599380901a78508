import type {
  BranchStatus,
  CommandList,
  CommitResult,
  Draft,
  HunkList,
  HunkReverted,
  HunkView,
  NewReviewComment,
  PullRequestView,
  PushResult,
  ReviewComment,
  ReviewDiff,
  ReviewList,
  ReviewScope,
  AgentInfo,
  AgentProposal,
  ApprovalView,
  CompactResult,
  ComparisonView,
  CostView,
  DiffView,
  ForkResult,
  ForkTreeNode,
  HistoryAction,
  McpServerView,
  ModelChoice,
  PermissionReplyKind,
  PermissionRequest,
  PermissionsView,
  PluginView,
  ProjectSummary,
  PromotedView,
  RevertPreview,
  RevertSummary,
  ServerInfo,
  Session,
  SessionCompare,
  SessionDetail,
  SessionSummary,
  SettingsUpdate,
  SettingsView,
  SharePreview,
  ShareRecord,
  ShareRequest,
  TimelineStep,
  TrashView,
  TrustUpdate,
  TrustView,
  WorktreeCreated,
  WorktreeFileDiff,
  WorktreeView,
} from "../protocol/generated";
import { ApiError, type Transport } from "../transport/types";

const q = (params: Record<string, string | undefined>) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) p.set(k, v);
  return p.toString();
};
const enc = encodeURIComponent;

/** Typed calls of docs/api.md over whichever transport was chosen. */
export function makeApi(t: Transport) {
  const s = (id: string) => `/api/sessions/${enc(id)}`;
  const wt = (name: string) => `/api/worktrees/${enc(name)}`;
  /** A 409 on undo/revert/redo carries a RevertSummary with the conflicts: return it. */
  const history = async (path: string, body: unknown): Promise<RevertSummary> => {
    try {
      return await t.request<RevertSummary>("POST", path, body);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && isSummary(e.body)) return e.body;
      throw e;
    }
  };
  return {
    info: () => t.request<ServerInfo>("GET", "/api/info"),
    projects: () => t.request<ProjectSummary[]>("GET", "/api/projects"),
    sessions: (project: string, archived: boolean) =>
      t.request<SessionSummary[]>("GET", `/api/sessions?${q({ project, archived: archived ? "true" : undefined })}`),
    createSession: (directory: string, agent?: string) =>
      t.request<Session>("POST", "/api/sessions", agent ? { directory, agent } : { directory }),
    session: (id: string) => t.request<SessionDetail>("GET", s(id)),
    /** The session with the messages compactions archived (they carry `compacted_by`). */
    sessionWithArchive: (id: string) => t.request<SessionDetail>("GET", `${s(id)}?${q({ archived: "true" })}`),
    /** `/compact`: summarise the older messages now (409 while a turn runs, 400 with what to do). */
    compact: (id: string) => t.request<CompactResult>("POST", `${s(id)}/compact`),
    updateSession: (id: string, body: { title?: string; archived?: boolean }) => t.request<Session>("PATCH", s(id), body),
    deleteSession: (id: string) => t.request<void>("DELETE", s(id)),
    send: (id: string, text: string) => t.request<void>("POST", `${s(id)}/messages`, { text }),
    reply: (id: string, requestId: string, reply: PermissionReplyKind) =>
      t.request<void>("POST", `${s(id)}/permissions/${enc(requestId)}`, { reply }),
    cancel: (id: string) => t.request<void>("POST", `${s(id)}/cancel`),
    switchAgent: (id: string, agent: string) => t.request<void>("POST", `${s(id)}/agent`, { agent }),
    undo: (id: string, step?: string | null, force = false) => history(`${s(id)}/undo`, step ? { step, force } : { force }),
    redo: (id: string, force = false) => history(`${s(id)}/redo`, { force }),
    revert: (id: string, messageId: string, force = false) => history(`${s(id)}/revert`, { message_id: messageId, force }),
    timeline: (id: string) => t.request<TimelineStep[]>("GET", `${s(id)}/timeline`),
    preview: (id: string, action: HistoryAction) => t.request<RevertPreview>("POST", `${s(id)}/preview`, action),
    diff: (id: string, scope: "session" | { message: string } | { step: string }) => {
      const query =
        scope === "session"
          ? q({ scope: "session" })
          : "message" in scope
            ? q({ scope: "message", message_id: scope.message })
            : q({ scope: "step", step: scope.step });
      return t.request<DiffView>("GET", `${s(id)}/diff?${query}`);
    },
    /** Fork at `messageId` (omitted: the last message); `withFiles` gives it its own worktree (git projects). */
    fork: (id: string, messageId: string | null, withFiles: boolean) =>
      t.request<ForkResult>("POST", `${s(id)}/fork`, messageId ? { message_id: messageId, with_files: withFiles } : { with_files: withFiles }),
    /** Makes a fork top-level (its `fork` metadata is kept). */
    promoteFork: (id: string) => t.request<Session>("POST", `${s(id)}/promote`),
    /** The project's sessions (and its worktrees') as fork trees: the roots. */
    forkTree: (project: string, archived: boolean) =>
      t.request<ForkTreeNode[]>("GET", `/api/sessions/tree?${q({ project, archived: archived ? "true" : "false" })}`),
    /** Two sessions' file changes since they diverged. */
    compareSessions: (id: string, other: string) => t.request<SessionCompare>("GET", `${s(id)}/compare?${q({ with: other })}`),
    agents: (directory: string) => t.request<AgentInfo[]>("GET", `/api/agents?${q({ directory })}`),
    /** The project's custom slash commands (the unusable ones too, with why). */
    commands: (directory: string) => t.request<CommandList>("GET", `/api/commands?${q({ directory })}`),
    /** The workspace's trust and its project hooks: how many, and whether they are the approved set (they run). */
    trust: (directory: string) => t.request<TrustView>("GET", `/api/trust?${q({ directory })}`),
    /** Trust the workspace (approving the project's hooks as they are now) or withdraw trust: the new view. */
    setTrust: (directory: string, trusted: boolean) =>
      t.request<TrustView>("POST", "/api/trust", { directory, trusted } satisfies TrustUpdate),
    /** Models to pick from (the catalog's, for configured providers): context window, prices. */
    models: (directory?: string) => t.request<ModelChoice[]>("GET", `/api/models${directory ? `?${q({ directory })}` : ""}`),
    /** `/model`: the session's model from now on; null goes back to the defaults (400 for a bad reference). */
    setModel: (id: string, model: string | null) =>
      t.request<Session | undefined>("POST", `${s(id)}/model`, model ? { model } : {}),
    /** `/cost`: per agent and model, the session's subagents' sessions included. */
    cost: (id: string) => t.request<CostView>("GET", `${s(id)}/cost`),
    /** Generate an agent from a description (`agent`: the one creating it; default the project's default agent). */
    proposeAgent: (directory: string, description: string, agent?: string) =>
      t.request<AgentProposal>("POST", "/api/agents/propose", { directory, description, ...(agent ? { agent } : {}) }),
    /** Change a proposal as asked; the answer's `changed` lists the fields that changed. */
    refineAgent: (directory: string, previous: AgentProposal, refine: string, agent?: string) =>
      t.request<AgentProposal>("POST", "/api/agents/propose", { directory, previous, refine, ...(agent ? { agent } : {}) }),
    /** Save a proposal (checked again by the server; 400/409 with why) as a markdown agent file. */
    saveAgent: (directory: string, proposal: AgentProposal, to: "project" | "global", agent?: string) =>
      t.request<SavedAgent>("POST", "/api/agents/save", { directory, proposal, to, ...(agent ? { agent } : {}) }),
    /** Exactly what sharing would upload (redacted), with what was replaced, the server and mode. */
    sharePreview: (id: string, req: ShareRequest) => t.request<SharePreview>("POST", `${s(id)}/share/preview`, req),
    /** Share the session (or update its existing share with the new payload). */
    share: (id: string, req: ShareRequest) => t.request<ShareRecord>("POST", `${s(id)}/share`, req),
    /** Revoke this session's share. */
    unshare: (id: string) => t.request<void>("DELETE", `${s(id)}/share`),
    /** Every share this machine created, newest first ("My shares"). */
    shares: () => t.request<ShareRecord[]>("GET", "/api/shares"),
    /** Revoke a share by its id (works when the local session was deleted). */
    revokeShare: (shareId: string) => t.request<void>("DELETE", `/api/shares/${enc(shareId)}`),
    files: (directory: string) => t.request<string[]>("GET", `/api/files?${q({ directory })}`),
    openInEditor: (directory: string, path: string, line?: number) =>
      t.request<{ command: string }>("POST", "/api/open", { directory, path, ...(line ? { line } : {}) }),
    settings: (directory?: string) => t.request<SettingsView>("GET", `/api/settings${directory ? `?${q({ directory })}` : ""}`),
    updateSettings: (u: SettingsUpdate) => t.request<SettingsView>("PUT", "/api/settings", u),
    setKey: (provider: string, key: string) => t.request<void>("PUT", `/api/settings/keys/${enc(provider)}`, { key }),
    removeKey: (provider: string) => t.request<void>("DELETE", `/api/settings/keys/${enc(provider)}`),
    permissions: (directory: string, agent: string) =>
      t.request<PermissionsView>("GET", `/api/permissions?${q({ directory, agent })}`),
    /** The project's MCP servers (those that may run are started first: this can take seconds). */
    mcp: (directory: string) => t.request<McpServerView[]>("GET", `/api/mcp?${q({ directory })}`),
    /** The project's plugins (those listed are installed and started first: this can take seconds). */
    plugins: (directory: string) => t.request<PluginView[]>("GET", `/api/plugins?${q({ directory })}`),
    approvals: (directory: string) => t.request<ApprovalView[]>("GET", `/api/approvals?${q({ directory })}`),
    /** Every pending ask of the project's sessions (the attention queue), oldest first. */
    asks: (directory: string) => t.request<PermissionRequest[]>("GET", `/api/asks?${q({ directory })}`),
    revokeApproval: (directory: string, id: number) => t.request<void>("DELETE", `/api/approvals/${id}?${q({ directory })}`),
    worktrees: (directory: string) => t.request<WorktreeView[]>("GET", `/api/worktrees?${q({ directory })}`),
    createWorktree: (directory: string, name?: string, base?: string) =>
      t.request<WorktreeCreated>("POST", "/api/worktrees", { directory, ...(name ? { name } : {}), ...(base ? { base } : {}) }),
    /** A 409 (work would be lost) throws ApiError with the server's message; `force` removes anyway. */
    removeWorktree: (directory: string, name: string, force = false) =>
      t.request<WorktreeView>("DELETE", `${wt(name)}?${q({ directory, force: force ? "true" : "false" })}`),
    /** Back to its base; what it drops is kept in the trash first (`trash`). */
    resetWorktree: (directory: string, name: string) =>
      t.request<{ trash: TrashView | null }>("POST", `${wt(name)}/reset`, { directory }),
    /** What forced worktree operations and resets kept, newest first. */
    worktreeTrash: (directory: string) => t.request<TrashView[]>("GET", `/api/worktrees/trash?${q({ directory })}`),
    /** Bring a trash entry back (its files where they were, or into `into`; its commits as a branch). */
    restoreTrash: (directory: string, id: string, into?: string) =>
      t.request<{ trash: TrashView; into: string }>("POST", `/api/worktrees/trash/${enc(id)}/restore`, {
        directory,
        ...(into ? { into } : {}),
      }),
    /** `a`/`b`: worktree names or `main`; `check` runs worktree.checkCommand in both; `hunks`: each file's hunks (ids for take). */
    compare: (directory: string, a: string, b: string, check = false, hunks = false) =>
      t.request<ComparisonView>(
        "GET",
        `/api/worktrees/compare?${q({ directory, a, b, check: check ? "true" : "false", hunks: hunks ? "true" : undefined })}`,
      ),
    /** One file as A has it ("before") against B's ("after"): the direct A↔B diff. */
    between: (directory: string, a: string, b: string, path: string) =>
      t.request<WorktreeFileDiff>("GET", `/api/worktrees/between?${q({ directory, a, b, path })}`),
    /** Take one hunk (an id from `files[].hunks` of `from`) into `into`. */
    takeHunk: (directory: string, from: string, path: string, into: string, hunk: string) =>
      t.request<{ trash: TrashView | null }>("POST", `${wt(from)}/take`, { directory, path, into, hunk }),
    /** One file of an attempt against `base`, as unified diff text. */
    attemptDiff: (directory: string, name: string, base: string, path: string) =>
      t.request<WorktreeFileDiff>("GET", `${wt(name)}/diff?${q({ directory, base, path })}`),
    /** A 409 (the target's own version would be lost) throws; `force` takes it anyway, keeping a copy (`trash`). */
    take: (directory: string, from: string, path: string, into: string, force = false) =>
      t.request<{ trash: TrashView | null }>("POST", `${wt(from)}/take`, { directory, path, into, force }),
    /** A 409 (ignored files of the base checkout would be overwritten) throws; `force` merges anyway, keeping a copy. */
    promote: (directory: string, name: string, mode: "merge" | "keep_branch", force = false) =>
      t.request<PromotedView>("POST", `${wt(name)}/promote`, { directory, mode, force }),
    // Review comments (per session, kept until sent).
    review: (id: string) => t.request<ReviewList>("GET", `${s(id)}/review`),
    addReviewComment: (id: string, c: NewReviewComment) => t.request<ReviewComment>("POST", `${s(id)}/review`, c),
    deleteReviewComment: (id: string, comment: string) =>
      t.request<ReviewList>("DELETE", `${s(id)}/review/${enc(comment)}`),
    clearReview: (id: string) => t.request<{ cleared: number }>("DELETE", `${s(id)}/review`),
    /** All comments as one user message and a turn (follow its Events); the list is empty after. */
    sendReview: (id: string) => t.request<{ accepted: boolean }>("POST", `${s(id)}/review/send`),
    reviewDiff: (id: string, scope: ReviewScope) => t.request<ReviewDiff>("GET", `${s(id)}/review/diff?${q({ scope })}`),
    // Hunks of a checkout (the project or a worktree folder). A stale id: 409, nothing changes.
    hunks: (directory: string, staged: boolean) =>
      t.request<HunkList>("GET", `/api/hunks?${q({ directory, staged: staged ? "true" : undefined })}`),
    stageHunk: (directory: string, hunk: string) =>
      t.request<HunkView>("POST", `/api/hunks/${enc(hunk)}/stage?${q({ directory })}`),
    unstageHunk: (directory: string, hunk: string) =>
      t.request<HunkView>("POST", `/api/hunks/${enc(hunk)}/unstage?${q({ directory })}`),
    /** Discards it from the work tree (a snapshot first; with `session`, an undoable step of it). */
    revertHunk: (directory: string, hunk: string, session?: string) =>
      t.request<HunkReverted>("POST", `/api/hunks/${enc(hunk)}/revert?${q({ directory })}`, session ? { session } : {}),
    // Commit, push, pull requests.
    gitStatus: (directory: string) => t.request<BranchStatus>("GET", `/api/git/status?${q({ directory })}`),
    commit: (directory: string, message: string) => t.request<CommitResult>("POST", "/api/git/commit", { directory, message }),
    draftCommit: (directory: string) => t.request<Draft>("POST", "/api/git/commit/draft", { directory }),
    push: (directory: string, remote?: string) =>
      t.request<PushResult>("POST", "/api/git/push", { directory, ...(remote ? { remote } : {}) }),
    draftPullRequest: (directory: string, session?: string) =>
      t.request<Draft>("POST", "/api/git/pr/draft", { directory, ...(session ? { session } : {}) }),
    createPullRequest: (directory: string, pr: { title: string; body: string; base?: string; draft: boolean }) =>
      t.request<PullRequestView>("POST", "/api/git/pr", {
        directory,
        title: pr.title,
        body: pr.body,
        draft: pr.draft,
        ...(pr.base ? { base: pr.base } : {}),
      }),
    /** The branch's pull request with its state, review and checks (404: none). */
    pullRequest: (directory: string) => t.request<PullRequestView>("GET", `/api/git/pr?${q({ directory })}`),
    tryWays: (directory: string, text: string, n: number, agent?: string, model?: string) =>
      t.request<{ attempts: TryAttempt[] }>("POST", "/api/worktrees/try", {
        directory,
        text,
        n,
        ...(agent ? { agent } : {}),
        ...(model ? { model } : {}),
      }),
  };
}

export type Api = ReturnType<typeof makeApi>;

/** What `POST /api/agents/save` answers: the file written and the proposal as saved. */
export interface SavedAgent {
  path: string;
  proposal: AgentProposal;
}

/** One attempt of "Try N ways": its worktree and the session working in it. */
export interface TryAttempt {
  worktree: WorktreeCreated;
  session: Session;
}

function isSummary(v: unknown): v is RevertSummary {
  return !!v && typeof v === "object" && "applied" in v && "conflicts" in v;
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
