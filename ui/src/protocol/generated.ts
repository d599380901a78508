/* Generated from schema/protocol.schema.json (the Rust types in crates/mia-protocol) by `npm run gen:types`. Do not edit. */

/**
 * Whether an agent can be selected as the conversation's agent.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AgentModeView".
 */
export type AgentModeView = "primary" | "subagent" | "all";
/**
 * Where pull requests go.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForgeKind".
 */
export type ForgeKind = "github" | "gitlab";
/**
 * Where a custom slash command file was found (precedence order).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommandSourceView".
 */
export type CommandSourceView = "project" | "claude" | "opencode" | "user";
/**
 * How a file of an attempt differs from the base.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AttemptFileStatus".
 */
export type AttemptFileStatus = "added" | "modified" | "deleted" | "type_changed";
/**
 * How a path compares between two attempts.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "BetweenStatus".
 */
export type BetweenStatus = ("only_a" | "only_b") | "same" | "differ";
/**
 * What a diff request covers.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffScope".
 */
export type DiffScope =
  | {
      scope: "session";
    }
  | {
      message_id: string;
      scope: "message";
    }
  | {
      scope: "step";
      step: string;
    };
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "LineType".
 */
export type LineType = "add" | "delete" | "context";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffStatus".
 */
export type DiffStatus = "added" | "deleted" | "modified";
/**
 * A notification out of the runtime.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Event".
 */
export type Event =
  | {
      session: Session;
      type: "session_updated";
    }
  | {
      message: Message;
      type: "message_stored";
    }
  | {
      agent: string;
      message_id: MessageId;
      model: string;
      session_id: SessionId;
      type: "step_started";
    }
  | {
      message_id: MessageId;
      session_id: SessionId;
      text: string;
      type: "text_delta";
    }
  | {
      message_id: MessageId;
      session_id: SessionId;
      text: string;
      type: "reasoning_delta";
    }
  | {
      call_id: string;
      input: unknown;
      message_id: MessageId;
      session_id: SessionId;
      tool: string;
      type: "tool_call";
    }
  | {
      session_id: SessionId;
      type: "context_usage";
      usage: ContextUsage;
    }
  | {
      call_id: string;
      message_id: MessageId;
      session_id: SessionId;
      text: string;
      type: "tool_output";
    }
  | {
      request: PermissionRequest;
      type: "permission_asked";
    }
  | {
      /**
       * `rule`, `user`, `headless` or `plugin NAME`.
       */
      by: string;
      decision: Resolution;
      reason: string;
      request_id: string;
      /**
       * For a subagent's ask: the top-level session it also showed in.
       */
      root_session_id?: SessionId | null;
      session_id: SessionId;
      type: "permission_resolved";
    }
  | {
      call_id: string;
      duration_ms: number;
      is_error: boolean;
      message_id: MessageId;
      output: string;
      /**
       * Shell commands: how the OS sandbox confined it.
       */
      sandbox?: SandboxNote | null;
      session_id: SessionId;
      tool: string;
      type: "tool_result";
    }
  | {
      call_id: string;
      items: ResultContent[];
      message_id: MessageId;
      session_id: SessionId;
      type: "tool_content";
    }
  | {
      call_id: string;
      files: FileChange[];
      hash?: string | null;
      session_id: SessionId;
      type: "snapshot";
      unavailable?: string | null;
    }
  | {
      attempt: number;
      delay_ms: number;
      reason: string;
      session_id: SessionId;
      type: "retrying";
    }
  | {
      from: string;
      /**
       * True when the switch waits for the running turn to finish.
       */
      queued: boolean;
      session_id: SessionId;
      to: string;
      type: "agent_switched";
    }
  | {
      kind: string;
      message: string;
      retryable: boolean;
      session_id?: SessionId | null;
      type: "error";
    }
  | {
      message: string;
      session_id?: SessionId | null;
      type: "notice";
    }
  | {
      call_id?: string | null;
      run: HookRun;
      session_id: SessionId;
      type: "hook_ran";
    }
  | {
      cost_usd?: number | null;
      end: TurnEnd;
      session_id: SessionId;
      steps: number;
      type: "turn_finished";
      usage: TokenUsage;
    }
  | {
      agent: string;
      call_id: string;
      session_id: SessionId;
      type: "subagent_queued";
    }
  | {
      agent: string;
      call_id: string;
      child_session_id: SessionId;
      description: string;
      session_id: SessionId;
      type: "subagent_started";
    }
  | {
      agent: string;
      call_id: string;
      child_session_id: SessionId;
      cost_usd?: number | null;
      duration_ms: number;
      session_id: SessionId;
      status: SubagentStatus;
      steps: number;
      tool_calls: number;
      type: "subagent_finished";
    }
  | {
      session_id: SessionId;
      /**
       * Estimated tokens of the conversation before.
       */
      tokens_before: number;
      trigger: CompactionTrigger;
      type: "compaction_started";
    }
  | {
      compacted: number;
      message_id: MessageId;
      retained: number;
      session_id: SessionId;
      tokens_after: number;
      tokens_before: number;
      trigger: CompactionTrigger;
      type: "compaction_finished";
    }
  | {
      message: string;
      session_id: SessionId;
      trigger: CompactionTrigger;
      type: "compaction_failed";
    }
  | {
      command: string;
      /**
       * The repository's root directory.
       */
      directory: string;
      line: string;
      /**
       * The worktree (or `main` for a check of the main tree).
       */
      name: string;
      stderr: boolean;
      type: "worktree_log";
    };
/**
 * A time-ordered identifier (UUID v7): ids sort in creation order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "MessageId".
 */
export type MessageId = string;
/**
 * A time-ordered identifier (UUID v7): ids sort in creation order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionId".
 */
export type SessionId = string;
/**
 * What a session is doing right now.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionStatus".
 */
export type SessionStatus = "idle" | "busy" | "compacting";
/**
 * The content of one part, tagged by `type`. New variants may be added; a
 * reader that meets a type it does not know keeps it as [`PartContent::Unknown`]
 * so nothing is lost when an older build opens a newer database.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PartContent".
 */
export type PartContent =
  | {
      /**
       * Written by mia-code rather than typed by a person or the model.
       */
      synthetic?: boolean;
      text: string;
      type: "text";
    }
  | {
      /**
       * Provider signature that must accompany the reasoning when it is
       * sent back (Anthropic thinking with tool use).
       */
      signature?: string | null;
      text: string;
      type: "reasoning";
    }
  | {
      call_id: string;
      input: unknown;
      /**
       * Opaque provider data sent back with the call (Gemini `thoughtSignature`).
       */
      signature?: string | null;
      tool: string;
      type: "tool_call";
    }
  | {
      call_id: string;
      duration_ms?: number | null;
      /**
       * The hooks that ran for this call (`PreToolUse`, `PostToolUse`).
       */
      hooks?: HookRun[];
      is_error?: boolean;
      output: string;
      /**
       * How the call's permission ask was answered, or the rule that denied
       * it (absent when a rule allowed it without asking).
       */
      permission?: PermissionNote | null;
      /**
       * Shell commands: how the OS sandbox confined it.
       */
      sandbox?: SandboxNote | null;
      tool: string;
      type: "tool_result";
    }
  | {
      /**
       * Machine-readable class (`rate_limited`, `network`, `auth`, ...).
       */
      kind: string;
      message: string;
      retryable?: boolean;
      type: "error";
    }
  | {
      /**
       * Base64 data, or a `file://` reference for large images.
       */
      data: string;
      media_type: string;
      type: "image";
    }
  | {
      media_type?: string | null;
      path: string;
      type: "file";
    }
  | {
      files?: FileChange[];
      hash: string;
      tool_call_id?: string | null;
      type: "snapshot";
      /**
       * Set when no snapshot could be taken; undo is unavailable for the step.
       */
      unavailable?: string | null;
    }
  | {
      conflicts?: string[];
      /**
       * Snapshot of the state just before the revert (so it can be redone).
       */
      pre_revert_snapshot?: string | null;
      removed: string[];
      restored: string[];
      target_message_id?: MessageId | null;
      type: "revert";
    }
  | {
      call_id: string;
      items: ResultContent[];
      type: "tool_content";
    }
  | {
      /**
       * Number of messages this summary stands for.
       */
      compacted_messages: number;
      summary: string;
      type: "compaction_summary";
    }
  | {
      agent: string;
      description: string;
      session_id: SessionId;
      status: string;
      type: "subagent";
    }
  | {
      perspective: string;
      text: string;
      type: "commentary";
    };
/**
 * How an ask (or a denial) was settled.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Resolution".
 */
export type Resolution = "allow" | "deny";
/**
 * An answer an ask offers (`PermissionRequest::options`), or the one a
 * person gave.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReplyOption".
 */
export type ReplyOption =
  "once" | "session" | "project" | "deny" | "never" | "reject_with_feedback";
/**
 * What the sandbox seems to have blocked.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxBlocked".
 */
export type SandboxBlocked = "write" | "network";
/**
 * What confines commands on this machine.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxMechanism".
 */
export type SandboxMechanism = "bubblewrap" | "landlock+seccomp" | "seatbelt";
/**
 * What a permission rule decides.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionAction".
 */
export type PermissionAction = "allow" | "ask" | "deny";
/**
 * Why a command ran outside the sandbox.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "UnconfinedReason".
 */
export type UnconfinedReason = "config" | "escalated" | "unavailable";
/**
 * How a step changed one file.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "FileChangeKind".
 */
export type FileChangeKind = "added" | "modified" | "deleted";
/**
 * One non-text piece of a tool's result.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ResultContent".
 */
export type ResultContent =
  | {
      data: string;
      media_type: string;
      type: "image";
    }
  | {
      description?: string | null;
      mime_type?: string | null;
      name: string;
      type: "resource_link";
      uri: string;
    }
  | {
      mime_type?: string | null;
      text?: string | null;
      type: "resource";
      uri: string;
    };
/**
 * A time-ordered identifier (UUID v7): ids sort in creation order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PartId".
 */
export type PartId = string;
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Role".
 */
export type Role = "user" | "assistant" | "system";
/**
 * What kind of message this is, beyond its role.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "MessageType".
 */
export type MessageType = "normal" | "compaction_summary" | "revert" | "fork" | "mode_switch";
/**
 * Why a turn ended.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TurnEnd".
 */
export type TurnEnd = ("completed" | "cancelled" | "error" | "step_limit") | "blocked";
/**
 * How a subagent's delegation ended.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SubagentStatus".
 */
export type SubagentStatus = "completed" | "timeout" | "cancelled" | "error";
/**
 * What started a compaction.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CompactionTrigger".
 */
export type CompactionTrigger = "messages" | "tokens" | "manual" | "overflow";
/**
 * Which history operation a preview is for.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "HistoryAction".
 */
export type HistoryAction =
  | {
      action: "undo";
      step?: string | null;
    }
  | {
      action: "revert";
      message_id: string;
    }
  | {
      action: "redo";
    };
/**
 * Where an MCP server is.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "McpState".
 */
export type McpState = ("ready" | "failed" | "disabled") | "exited" | "stopped" | "untrusted";
/**
 * A command into the runtime.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Op".
 */
export type Op =
  | {
      agent?: string | null;
      directory: string;
      model?: string | null;
      title?: string | null;
      type: "create_session";
    }
  | {
      /**
       * Use this primary agent from this message on.
       */
      agent?: string | null;
      /**
       * `provider/model` for this turn.
       */
      model?: string | null;
      session_id: SessionId;
      text: string;
      type: "user_message";
    }
  | {
      reply: PermissionReplyKind;
      request_id: string;
      session_id: SessionId;
      type: "permission_reply";
    }
  | {
      session_id: SessionId;
      type: "cancel";
    }
  | {
      agent: string;
      session_id: SessionId;
      type: "switch_agent";
    }
  | {
      /**
       * Overwrite files changed outside mia-code since (their content is kept as a backup).
       */
      force?: boolean;
      session_id: SessionId;
      step?: string | null;
      type: "undo";
    }
  | {
      force?: boolean;
      message_id: MessageId;
      session_id: SessionId;
      type: "revert";
    }
  | {
      force?: boolean;
      session_id: SessionId;
      type: "redo";
    }
  | {
      archived?: boolean | null;
      session_id: SessionId;
      title?: string | null;
      type: "update_session";
    }
  | {
      session_id: SessionId;
      type: "delete_session";
    }
  | {
      message_id?: MessageId | null;
      session_id: SessionId;
      type: "fork";
      with_files?: boolean;
    }
  | {
      session_id: SessionId;
      type: "promote";
    }
  | {
      /**
       * The agent it is for (default: the session's current agent).
       */
      agent?: string | null;
      model?: string | null;
      session_id: SessionId;
      type: "set_model";
    }
  | {
      session_id: SessionId;
      type: "compact";
    };
/**
 * How a person answered a permission ask.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionReplyKind".
 */
export type PermissionReplyKind =
  | {
      kind: "once";
    }
  | {
      kind: "session";
    }
  | {
      kind: "project";
    }
  | {
      kind: "deny";
    }
  | {
      kind: "never";
    }
  | {
      feedback: string;
      kind: "reject_with_feedback";
    };
/**
 * Where a plugin is.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PluginState".
 */
export type PluginState =
  ("loaded" | "installing" | "failed" | "skipped") | "refused" | "untrusted" | "not loaded";
/**
 * The worktree operation that put an entry in the trash.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TrashOperation".
 */
export type TrashOperation = ("remove" | "reset" | "take" | "promote") | "auto-cleanup";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ChecksState".
 */
export type ChecksState = ("pending" | "success" | "failure") | "none";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewDecision".
 */
export type ReviewDecision = ("approved" | "changes_requested") | "review_required";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PrState".
 */
export type PrState = "open" | "closed" | "merged";
/**
 * What a file will go through if a planned undo/revert/redo is applied.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PreviewAction".
 */
export type PreviewAction = "restore" | "remove";
/**
 * What the review pane shows.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewScope".
 */
export type ReviewScope = "uncommitted" | "branch" | "last_turn";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedPart".
 */
export type SharedPart =
  | {
      content: string;
      type: "text";
    }
  | {
      content: string;
      type: "reasoning";
    }
  | {
      args: unknown;
      call_id: string;
      name: string;
      type: "tool_call";
    }
  | {
      call_id: string;
      duration_ms?: number | null;
      is_error?: boolean;
      name: string;
      /**
       * The result was left out (`includeToolResults: false` or excluded
       * in the preview); `output` is empty then.
       */
      omitted?: boolean;
      output: string;
      type: "tool_result";
    }
  | {
      message: string;
      type: "error";
    }
  | {
      content: string;
      type: "summary";
    };
/**
 * Where in the payload a redaction was made.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RedactionPlace".
 */
export type RedactionPlace =
  | {
      in: "title";
    }
  | {
      in: "message";
      message_id: string;
      part: number;
    }
  | {
      file: string;
      in: "diff";
    };
/**
 * What kind of entry a timeline step is.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "StepKindView".
 */
export type StepKindView = "tool" | "revert" | "redo";
/**
 * What happens to shell commands.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxEffect".
 */
export type SandboxEffect = "sandboxed" | "ask" | "unconfined";
/**
 * How the OS sandbox confines commands.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxModeView".
 */
export type SandboxModeView = "workspace-write" | "read-only" | "off";
/**
 * Whether a worktree is as mia-code made it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeState".
 */
export type WorktreeState = "ok" | "branch-changed" | "missing";

export interface Protocol {
  agent_info: AgentInfo;
  agent_proposal: AgentProposal;
  approval_view: ApprovalView;
  branch_status: BranchStatus;
  command_list: CommandList;
  commit_result: CommitResult;
  compact_result: CompactResult;
  comparison_view: ComparisonView;
  cost_view: CostView;
  diff_scope: DiffScope;
  diff_view: DiffView;
  draft: Draft;
  event: Event;
  fork_result: ForkResult;
  fork_tree_node: ForkTreeNode;
  history_action: HistoryAction;
  hook_run: HookRun;
  hunk_list: HunkList;
  hunk_reverted: HunkReverted;
  mcp_server_view: McpServerView;
  message: Message;
  model_choice: ModelChoice;
  new_review_comment: NewReviewComment;
  op: Op;
  permission_reply_kind: PermissionReplyKind;
  permission_request: PermissionRequest;
  permissions_view: PermissionsView;
  plugin_view: PluginView;
  project_summary: ProjectSummary;
  promoted_view: PromotedView;
  pull_request_view: PullRequestView;
  push_result: PushResult;
  revert_preview: RevertPreview;
  revert_summary: RevertSummary;
  review_diff: ReviewDiff;
  review_list: ReviewList;
  server_info: ServerInfo;
  session: Session;
  session_compare: SessionCompare;
  session_detail: SessionDetail;
  session_summary: SessionSummary;
  settings_update: SettingsUpdate;
  settings_view: SettingsView;
  share_preview: SharePreview;
  share_record: ShareRecord;
  share_request: ShareRequest;
  timeline_step: TimelineStep;
  trust_update: TrustUpdate;
  trust_view: TrustView;
  worktree_created: WorktreeCreated;
  worktree_file_diff: WorktreeFileDiff;
  worktree_view: WorktreeView;
}
/**
 * An agent as the UI lists it (mode toggle, settings).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AgentInfo".
 */
export interface AgentInfo {
  builtin: boolean;
  description: string;
  mode: AgentModeView;
  /**
   * `provider/model` configured for it, if any.
   */
  model?: string | null;
  name: string;
  /**
   * Cannot write or edit (plan-like).
   */
  read_only: boolean;
  /**
   * The config file that defines or changes it (`built-in` when none does).
   */
  source?: string;
  /**
   * Seconds a delegation to it may run.
   */
  timeout_secs?: number;
}
/**
 * A generated agent definition, validated, before it is saved (spec 013).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AgentProposal".
 */
export interface AgentProposal {
  /**
   * After a refinement: the fields it changed.
   */
  changed?: string[];
  description: string;
  key: string;
  /**
   * `primary`, `subagent` or `all`.
   */
  mode: string;
  model?: string | null;
  model_reason?: string;
  name: string;
  /**
   * What validation changed (a taken key renamed, an allow tightened to ask, ...).
   */
  notes?: string[];
  permissions: ProposedRule[];
  prompt: string;
}
/**
 * One permission rule of a generated agent, with why.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ProposedRule".
 */
export interface ProposedRule {
  /**
   * `allow`, `ask` or `deny`.
   */
  action: string;
  pattern?: string | null;
  permission: string;
  reason?: string;
}
/**
 * An "always for this project" approval.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ApprovalView".
 */
export interface ApprovalView {
  agent?: string | null;
  created_at: number;
  id: number;
  pattern: string;
  permission: string;
}
/**
 * Where the checkout's branch stands (`GET /api/git/status`): what the
 * commit, push and pull request buttons need.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "BranchStatus".
 */
export interface BranchStatus {
  /**
   * Commits it has that its upstream lacks, and the reverse.
   */
  ahead: number;
  behind: number;
  /**
   * `None`: a detached `HEAD`.
   */
  branch?: string | null;
  /**
   * The pull request recorded for the branch (`pr create`), if any.
   */
  pull_request?: PullRequestLink | null;
  remotes: string[];
  /**
   * Files with staged changes, and with unstaged ones (untracked included).
   */
  staged: number;
  unstaged: number;
  /**
   * `remote/branch` it tracks.
   */
  upstream?: string | null;
}
/**
 * A pull request as recorded for a branch (no network needed to show it).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PullRequestLink".
 */
export interface PullRequestLink {
  number: number;
  provider: ForgeKind;
  url: string;
}
/**
 * `{"commands": [...]}`.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommandList".
 */
export interface CommandList {
  commands: CommandInfo[];
}
/**
 * A custom slash command (`mia-code commands list --json`, `GET /api/commands`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommandInfo".
 */
export interface CommandInfo {
  argument_hint?: string | null;
  description?: string | null;
  /**
   * Why the file is not used (a YAML error, an unknown key, a built-in's
   * name, a name taken by a file that wins); `null` when it is usable.
   */
  error?: string | null;
  /**
   * Without the slash: `review`, `git:commit`.
   */
  name: string;
  path: string;
  source: CommandSourceView;
}
/**
 * A commit made (`mia-code commit`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommitResult".
 */
export interface CommitResult {
  branch: string;
  commit: string;
  /**
   * What `git commit` printed (hooks included).
   */
  output: string;
  /**
   * Its first line.
   */
  summary: string;
}
/**
 * What a compaction did (`mia-code compact --json`, `POST /api/sessions/{id}/compact`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CompactResult".
 */
export interface CompactResult {
  /**
   * Messages archived (replaced by the summary in the model's context).
   */
  compacted: number;
  /**
   * The summary message.
   */
  message_id: string;
  /**
   * Messages kept verbatim after the summary.
   */
  retained: number;
  tokens_after: number;
  /**
   * Estimated tokens of the conversation before and after.
   */
  tokens_before: number;
}
/**
 * `worktree compare A B`.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ComparisonView".
 */
export interface ComparisonView {
  a: AttemptView;
  b: AttemptView;
  base: string;
  between: BetweenView[];
}
/**
 * One side of a comparison.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AttemptView".
 */
export interface AttemptView {
  /**
   * The last run of `worktree.checkCommand` there.
   */
  check?: ScriptView | null;
  files: AttemptFile[];
  /**
   * A worktree name, or `main`.
   */
  name: string;
  path: string;
  stats: AttemptStats;
  usage: AttemptUsage;
}
/**
 * How a start or check script ended.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ScriptView".
 */
export interface ScriptView {
  cancelled: boolean;
  command: string;
  duration_ms: number;
  /**
   * `null`: killed (cancelled or timed out).
   */
  exit_code?: number | null;
  /**
   * The last 64 KiB of its output.
   */
  output: string;
}
/**
 * One changed file of an attempt against the base.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AttemptFile".
 */
export interface AttemptFile {
  additions: number;
  binary: boolean;
  deletions: number;
  /**
   * Its hunks against the base (ids for `worktree take --hunk`); listed
   * when asked for (`worktree compare --json`, `?hunks=true`).
   */
  hunks?: HunkView[];
  path: string;
  status: AttemptFileStatus;
}
/**
 * One hunk of a file (`mia-code hunk list --json`, `GET /api/hunks`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "HunkView".
 */
export interface HunkView {
  binary?: boolean;
  file: string;
  /**
   * Stable: from the file and the hunk's content (not its line numbers,
   * so staging one hunk does not change the others' ids).
   */
  id: string;
  /**
   * The hunk's lines as a unified diff prints them: `+`, `-` or a space,
   * then the line (`\ No newline at end of file` where git prints it).
   */
  lines: string[];
  new_lines: number;
  new_start: number;
  /**
   * The path a renamed file had.
   */
  old_file?: string | null;
  old_lines: number;
  old_start: number;
  staged: boolean;
  /**
   * Staged, discarded or taken as a whole: a binary file, a mode
   * change, a rename, a new or deleted file.
   */
  whole_file?: boolean;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AttemptStats".
 */
export interface AttemptStats {
  additions: number;
  deletions: number;
  files: number;
}
/**
 * What the sessions working in an attempt used.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AttemptUsage".
 */
export interface AttemptUsage {
  /**
   * Dollars; `null` when a model's price is unknown.
   */
  cost?: number | null;
  /**
   * From the first message to the last, summed over its sessions.
   */
  duration_ms: number;
  input_tokens: number;
  output_tokens: number;
  sessions: number;
  /**
   * Model steps (assistant messages).
   */
  steps: number;
}
/**
 * How a path compares between the two attempts.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "BetweenView".
 */
export interface BetweenView {
  path: string;
  status: BetweenStatus;
}
/**
 * What a session cost: per agent and model, its subagents' sessions included.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CostView".
 */
export interface CostView {
  /**
   * Per agent and model, the session and its subagents together.
   */
  lines: CostLine[];
  session: CostLine1;
  session_id: string;
  /**
   * The subagent sessions counted in `total`.
   */
  subagent_sessions: string[];
  total: CostLine2;
}
/**
 * One (agent, model) line of a session's cost (`mia-code cost`, `/cost`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CostLine".
 */
export interface CostLine {
  agent: string;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  input_tokens: number;
  model: string;
  output_tokens: number;
  requests: number;
}
/**
 * One (agent, model) line of a session's cost (`mia-code cost`, `/cost`).
 */
export interface CostLine1 {
  agent: string;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  input_tokens: number;
  model: string;
  output_tokens: number;
  requests: number;
}
/**
 * One (agent, model) line of a session's cost (`mia-code cost`, `/cost`).
 */
export interface CostLine2 {
  agent: string;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  input_tokens: number;
  model: string;
  output_tokens: number;
  requests: number;
}
/**
 * A diff ready to show (spec 077): files, statistics, the summary line and a patch.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffView".
 */
export interface DiffView {
  files: FileDiff[];
  /**
   * Unified diff that `git apply` accepts.
   */
  patch: string;
  scope: DiffScope;
  stats: DiffStats;
  /**
   * e.g. `3 files changed, 45 insertions(+), 12 deletions(-)`.
   */
  summary: string;
}
/**
 * How one file differs between two snapshots.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "FileDiff".
 */
export interface FileDiff {
  additions: number;
  /**
   * Full content after (empty when deleted or binary).
   */
  after: string;
  /**
   * Full content before (empty when added or binary).
   */
  before: string;
  /**
   * Binary content (NUL byte or not UTF-8): reported, not diffed.
   */
  binary?: boolean;
  deletions: number;
  file: string;
  hunks: Hunk[];
  /**
   * Set when the line endings changed (`LF → CRLF`, `CRLF → mixed`): the
   * hunks then show lines whose visible text did not change.
   */
  lineEndings?: string | null;
  newId?: string | null;
  newMode?: string | null;
  oldId?: string | null;
  /**
   * Git modes (`100644`, `100755`, `120000`).
   */
  oldMode?: string | null;
  status: DiffStatus;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Hunk".
 */
export interface Hunk {
  lines: DiffLine[];
  linesAfter: number;
  linesBefore: number;
  startAfter: number;
  /**
   * 1-based start in the before-version (git's convention: the line
   * before the hunk when it has no before-lines).
   */
  startBefore: number;
}
/**
 * One line of a hunk.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffLine".
 */
export interface DiffLine {
  /**
   * The line without its trailing newline (a `\r` of CRLF is kept).
   */
  content: string;
  /**
   * Line number in the "after" file for additions and context, in the
   * "before" file for deletions (1-based).
   */
  lineNumber: number;
  newLine?: number | null;
  /**
   * The file ends with this line and it has no newline.
   */
  noNewline?: boolean;
  oldLine?: number | null;
  type: LineType;
}
/**
 * Aggregate statistics over a set of [`FileDiff`]s.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffStats".
 */
export interface DiffStats {
  /**
   * additions − deletions.
   */
  estimatedLOCImpact: number;
  filesAdded: number;
  filesChanged: number;
  filesDeleted: number;
  filesModified: number;
  totalAdditions: number;
  totalDeletions: number;
}
/**
 * A drafted message (commit message, or pull request title and body).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Draft".
 */
export interface Draft {
  body?: string;
  title: string;
}
/**
 * One conversation.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Session".
 */
export interface Session {
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  archived_at?: number | null;
  created_at: number;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  fork?: ForkInfo | null;
  id: SessionId;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  parent_id?: SessionId | null;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  status: SessionStatus;
  title: string;
  updated_at: number;
  /**
   * mia-code version that created the session.
   */
  version: string;
}
/**
 * Where a forked session came from (spec 020).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkInfo".
 */
export interface ForkInfo {
  fork_depth: number;
  forked_at: number;
  source_message_id: MessageId;
  source_session_id: SessionId;
}
/**
 * Who started a subagent's session (spec 015): the parent session and its
 * `task` call. Not a fork: a spawned session is not in the fork tree.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SpawnInfo".
 */
export interface SpawnInfo {
  /**
   * The parent's agent at the time.
   */
  agent: string;
  call_id: string;
  session_id: SessionId;
}
/**
 * One stored message with its parts in order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Message".
 */
export interface Message {
  /**
   * Set when a compaction summary replaced this message in the model's
   * context; the message itself is kept (spec 019: nothing is lost).
   */
  compacted_by?: MessageId | null;
  created_at: number;
  id: MessageId;
  metadata: MessageMetadata;
  parts: Part[];
  role: Role;
  session_id: SessionId;
  type: MessageType;
}
/**
 * Free-form but typed message metadata: model, tokens, cost, timing.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "MessageMetadata".
 */
export interface MessageMetadata {
  agent?: string | null;
  /**
   * Cost in US dollars; absent when the model's price is unknown.
   */
  cost_usd?: number | null;
  duration_ms?: number | null;
  /**
   * Why the model stopped (`end_turn`, `tool_use`, `max_tokens`, `cancelled`, ...).
   */
  finish?: string | null;
  model?: string | null;
  tokens?: TokenUsage | null;
  [k: string]: unknown | undefined;
}
/**
 * Token counts reported by a provider for one assistant message.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TokenUsage".
 */
export interface TokenUsage {
  cache_read?: number;
  cache_write?: number;
  input: number;
  output: number;
}
/**
 * One stored content unit of a message.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Part".
 */
export interface Part {
  content: PartContent;
  created_at: number;
  id: PartId;
  index: number;
  message_id: MessageId;
}
/**
 * One run of a hook, as its tool card and the log show it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "HookRun".
 */
export interface HookRun {
  command: string;
  duration_ms: number;
  /**
   * The event (`PreToolUse`, `Stop`, ...).
   */
  event: string;
  /**
   * The exit code; `null` when it was stopped (timeout) or did not start.
   */
  exit_code?: number | null;
  /**
   * Its reason or stderr, shortened.
   */
  message?: string;
  /**
   * What it decided: `block`, `deny`, `ask`, `allow`, `timeout`, `error`; `null` for nothing.
   */
  outcome?: string | null;
}
/**
 * The permission decision recorded with a tool result (what the tool card shows).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionNote".
 */
export interface PermissionNote {
  /**
   * `user`, `rule`, `headless` or `plugin NAME`.
   */
  by: string;
  decision: Resolution;
  /**
   * The denial message or the feedback given.
   */
  reason?: string;
  /**
   * The answer a person gave.
   */
  reply?: ReplyOption | null;
}
/**
 * How a shell command was confined by the OS sandbox (what the tool card shows).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxNote".
 */
export interface SandboxNote {
  /**
   * What the sandbox seems to have blocked.
   */
  blocked?: SandboxBlocked | null;
  /**
   * False when the mechanism was the weaker fallback (Landlock).
   */
  full?: boolean | null;
  /**
   * The hosts the command's connections went to through the proxy.
   */
  hosts?: NetworkHost[];
  /**
   * What the mechanism could not hold (the fallback's list).
   */
  limits?: string[];
  /**
   * Absent when unconfined.
   */
  mechanism?: SandboxMechanism | null;
  /**
   * How it was confined (`off`: it ran unconfined).
   */
  mode: "workspace-write" | "read-only" | "off";
  /**
   * Its network (absent when unconfined).
   */
  network?: PermissionAction | null;
  /**
   * Why it ran unconfined.
   */
  unconfined?: UnconfinedReason | null;
}
/**
 * One host a sandboxed command connected to (or was refused).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "NetworkHost".
 */
export interface NetworkHost {
  allowed: boolean;
  host: string;
  port: number;
  /**
   * The program that connected, when known.
   */
  program?: string | null;
  /**
   * What allowed it (`registry`, `rule or answer`) or why it was refused.
   */
  reason: string;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "FileChange".
 */
export interface FileChange {
  additions?: number;
  deletions?: number;
  kind: FileChangeKind;
  path: string;
}
/**
 * The runtime's estimate of the next request (system prompt, tools and
 * the visible history) against the model's context window.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ContextUsage".
 */
export interface ContextUsage {
  /**
   * Where automatic compaction starts (the window less the reply's room,
   * times `compaction.tokenRatio`).
   */
  budget: number;
  /**
   * False when the system prompt and tools are not counted (the session
   * has not sent a request in this process yet).
   */
  complete: boolean;
  /**
   * `provider/model` the estimate is for.
   */
  model: string;
  /**
   * Estimated tokens of the next request.
   */
  tokens: number;
  /**
   * The model's context window.
   */
  window: number;
}
/**
 * Everything a permission dialog needs.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionRequest".
 */
export interface PermissionRequest {
  agent: string;
  /**
   * The tool call this ask is about (links the dialog to its tool card).
   */
  call_id?: string | null;
  id: string;
  input: unknown;
  /**
   * The rule that produced "ask", e.g. `ask bash (built-in defaults)`; absent when no rule matched.
   */
  matched_rule?: string | null;
  /**
   * Which replies can be offered (e.g. no "session"/"project" for commands with expansions).
   */
  options: ReplyOption[];
  permission: string;
  /**
   * For a write or an edit: the change it would make, against the file
   * as it is now (a new file: all additions). Absent when it cannot be
   * known (the edit does not apply, the file is over 1 MB).
   */
  proposed?: FileDiff | null;
  reason: string;
  /**
   * For a subagent's ask: the top-level session its delegation started
   * from (the ask shows there too; answer it with this request's `session_id`).
   */
  root_session_id?: SessionId | null;
  segments?: CommandSegment[];
  session_id: SessionId;
  /**
   * The path, command or URL being judged, as shown to the user.
   */
  target: string;
  tool: string;
}
/**
 * One judged piece of a shell command, for the permission dialog.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommandSegment".
 */
export interface CommandSegment {
  command: string;
  dangerous?: boolean;
  decision: PermissionAction;
  reason?: string | null;
}
/**
 * A new fork (spec 020): the child session, and for a fork with files the
 * worktree it works in.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkResult".
 */
export interface ForkResult {
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  archived_at?: number | null;
  created_at: number;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  /**
   * Set for a fork with files.
   */
  files?: ForkFiles | null;
  fork?: ForkInfo | null;
  id: SessionId;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  parent_id?: SessionId | null;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  status: SessionStatus;
  title: string;
  updated_at: number;
  /**
   * mia-code version that created the session.
   */
  version: string;
}
/**
 * The workspace of a fork with files: a new worktree holding the project as
 * it was at the fork point.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkFiles".
 */
export interface ForkFiles {
  /**
   * The commit the worktree started from (the parent's HEAD).
   */
  base: string;
  branch: string;
  /**
   * Ignored files copied in because `.worktreeinclude` lists them.
   */
  included: string[];
  /**
   * Files that could not be carried over, each with why (over the
   * snapshot size cap, unreadable; ignored files are never snapshotted).
   */
  left_out: string[];
  path: string;
  /**
   * The snapshot applied over it (the files at the fork point); absent
   * when the session had changed nothing by then (the files are the
   * parent's as they are now).
   */
  snapshot?: string | null;
  worktree: string;
}
/**
 * One session in a project's fork tree (the tree view and `sessions tree --json`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkTreeNode".
 */
export interface ForkTreeNode {
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  archived_at?: number | null;
  children: ForkTreeNode[];
  /**
   * Cost of its own messages (a fork's copied history is not counted again), USD.
   */
  cost_usd: number;
  created_at: number;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  /**
   * Distinct files its own steps changed.
   */
  files_changed: number;
  /**
   * The fork's own first prompt after the fork point, shortened: what
   * tells sibling forks (all titled "… (fork)") apart (forks only).
   */
  first_prompt?: string | null;
  fork?: ForkInfo | null;
  /**
   * The fork point's text, shortened (forks only).
   */
  fork_excerpt?: string | null;
  id: SessionId;
  message_count: number;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  /**
   * True when the fork has its own worktree (a fork with files) rather
   * than its parent's directory.
   */
  own_worktree: boolean;
  parent_id?: SessionId | null;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  status: SessionStatus;
  title: string;
  updated_at: number;
  /**
   * mia-code version that created the session.
   */
  version: string;
  /**
   * The git worktree the session works in (its name), when its directory is one.
   */
  worktree?: string | null;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "HunkList".
 */
export interface HunkList {
  hunks: HunkView[];
}
/**
 * What discarding a hunk did (`hunk revert`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "HunkReverted".
 */
export interface HunkReverted {
  hunk: HunkView;
  /**
   * Without a session: the command that brings the hunk back.
   */
  restore_command?: string | null;
  /**
   * The session the discard was recorded in (undo brings it back).
   */
  session_id?: SessionId | null;
  /**
   * The snapshot taken just before (the file as it was).
   */
  snapshot: string;
}
/**
 * An MCP server of a project: where it is defined, its state and tools.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "McpServerView".
 */
export interface McpServerView {
  error?: string | null;
  name: string;
  /**
   * The server's own name and version.
   */
  server?: string | null;
  /**
   * The config file or `.mcp.json` that defines it.
   */
  source: string;
  state: McpState;
  /**
   * The last lines it wrote to stderr.
   */
  stderr?: string[];
  /**
   * Its tools' names (as the server names them).
   */
  tools?: string[];
  /**
   * `stdio: command args` or `http: url`.
   */
  transport: string;
}
/**
 * A model the user can pick (`GET /api/models`): from the catalog, for the
 * providers that are configured or have a key.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ModelChoice".
 */
export interface ModelChoice {
  context_window: number;
  /**
   * `provider/model`.
   */
  id: string;
  /**
   * US dollars per million input / output tokens.
   */
  input_price: number;
  max_output: number;
  output_price: number;
  provider: string;
  reasoning: boolean;
}
/**
 * A new review comment (`POST /api/sessions/{id}/review`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "NewReviewComment".
 */
export interface NewReviewComment {
  end_line?: number | null;
  file: string;
  line: number;
  text: string;
}
/**
 * The compiled rules of one agent, with lint warnings.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionsView".
 */
export interface PermissionsView {
  agent: string;
  rules: RuleView[];
  trusted: boolean;
  warnings: string[];
}
/**
 * One compiled permission rule, in the order it is checked.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RuleView".
 */
export interface RuleView {
  action: string;
  /**
   * Which layer it comes from (invariant, session, project approval, agent config, ...).
   */
  layer: string;
  pattern?: string | null;
  permission: string;
  /**
   * File and index, or `built-in`.
   */
  source: string;
}
/**
 * A plugin of a project: its entry, state, version, tools and hooks.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PluginView".
 */
export interface PluginView {
  /**
   * As written in the config (`name@range`, `./path`).
   */
  entry: string;
  error?: string | null;
  hooks?: string[];
  name: string;
  /**
   * The config file listing it.
   */
  source: string;
  state: PluginState;
  tools?: string[];
  version?: string | null;
}
/**
 * A project the store knows sessions for.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ProjectSummary".
 */
export interface ProjectSummary {
  directory: string;
  last_used: number;
  project_id: string;
  sessions: number;
}
/**
 * What `promote` did.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PromotedView".
 */
export interface PromotedView {
  branch: string;
  commit?: string | null;
  /**
   * The worktree's uncommitted changes were committed on its branch as this.
   */
  committed?: string | null;
  fast_forward: boolean;
  head: string;
  /**
   * Why auto-cleanup kept the worktree.
   */
  kept?: string | null;
  merged_into?: string | null;
  name: string;
  /**
   * Other worktrees the user may now remove.
   */
  others: string[];
  removed: boolean;
  /**
   * What went to the trash first (`--force`).
   */
  trash?: TrashView | null;
}
/**
 * What a forced worktree operation (or a reset) kept before it dropped it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TrashView".
 */
export interface TrashView {
  created_at: number;
  files: string[];
  id: string;
  operation: TrashOperation;
  /**
   * Commits kept (a bundle), by the ref that held them.
   */
  refs: string[];
  /**
   * Where the files were.
   */
  root: string;
  /**
   * Submodule commits kept: `path@commit`.
   */
  submodule_commits: string[];
  worktree: string;
}
/**
 * A pull request (GitHub) or merge request (GitLab).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PullRequestView".
 */
export interface PullRequestView {
  base: string;
  checks?: ChecksView | null;
  draft: boolean;
  head: string;
  number: number;
  provider: ForgeKind;
  review_decision?: ReviewDecision | null;
  state: PrState;
  title: string;
  url: string;
}
/**
 * The checks of a pull request's head commit.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ChecksView".
 */
export interface ChecksView {
  failed: number;
  passed: number;
  pending: number;
  state: ChecksState;
  total: number;
}
/**
 * A push made (`mia-code push`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PushResult".
 */
export interface PushResult {
  branch: string;
  /**
   * What git printed.
   */
  output: string;
  remote: string;
  /**
   * The branch had no upstream and now tracks `remote/branch`.
   */
  upstream_set: boolean;
}
/**
 * Exactly which files an undo/revert/redo will change, computed without changing anything.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RevertPreview".
 */
export interface RevertPreview {
  action: HistoryAction;
  additions: number;
  deletions: number;
  /**
   * The diff from the current files to the state it restores.
   */
  diff: FileDiff[];
  files: PreviewFile[];
  /**
   * Files that changed while the undone steps ran but not by them, which
   * it leaves as they are, and why.
   */
  left_alone?: LeftAlone[];
  /**
   * Ids of the steps it undoes (for redo: the revert it undoes).
   */
  steps: string[];
  /**
   * Touched files that cannot be restored (never captured).
   */
  unrestorable?: string[];
}
/**
 * One file of a preview.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PreviewFile".
 */
export interface PreviewFile {
  action: PreviewAction;
  /**
   * Set when the file changed outside mia-code since: applying without
   * `force` refuses; with `force` the current content is kept as a backup.
   */
  conflict?: string | null;
  path: string;
  /**
   * How a step changed one file.
   */
  was: "added" | "modified" | "deleted";
}
/**
 * A file an undo leaves as it is, and why.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "LeftAlone".
 */
export interface LeftAlone {
  path: string;
  /**
   * "changed by session X while the step ran", "changed by someone
   * else, not by the command", ...
   */
  reason: string;
}
/**
 * What an undo, revert or redo did.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RevertSummary".
 */
export interface RevertSummary {
  /**
   * False when conflicts stopped it: nothing was changed.
   */
  applied: boolean;
  conflicts: RevertConflict[];
  /**
   * The spec 021 message (also appended to the session when applied).
   */
  message: string;
  removed: string[];
  restored: string[];
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RevertConflict".
 */
export interface RevertConflict {
  /**
   * Where the current content was kept before a forced revert.
   */
  backup?: string | null;
  path: string;
  reason: string;
}
/**
 * The changes of a review scope.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewDiff".
 */
export interface ReviewDiff {
  /**
   * What the changes are against (a commit, or a snapshot for the last
   * turn); empty when there is nothing to compare with.
   */
  base: string;
  files: FileDiff[];
  scope: ReviewScope;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewList".
 */
export interface ReviewList {
  comments: ReviewComment[];
}
/**
 * One review comment on lines of a file, kept for the session until sent.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewComment".
 */
export interface ReviewComment {
  created_at: number;
  /**
   * The last line of the range (`line` for a single line).
   */
  end_line: number;
  /**
   * Relative to the session's directory.
   */
  file: string;
  id: string;
  /**
   * 1-based, in the file as it is in the work tree.
   */
  line: number;
  /**
   * The lines it was written on have changed since (the comment is
   * kept, with the lines as they were).
   */
  outdated: boolean;
  /**
   * The lines as they were when the comment was written.
   */
  quote?: string[];
  text: string;
}
/**
 * About the running backend.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ServerInfo".
 */
export interface ServerInfo {
  /**
   * A scripted demo (mock model): the UI labels itself so.
   */
  demo: boolean;
  home: string;
  /**
   * The project to open first (`mia-code serve --project`, the demo's sample project).
   */
  project?: string | null;
  version: string;
}
/**
 * Two sessions' file changes since the point where they diverged, for the
 * side-by-side comparison (`GET /api/sessions/{id}/compare?with=`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionCompare".
 */
export interface SessionCompare {
  /**
   * Where they diverged: the fork point message in the common ancestor.
   */
  fork_point?: string | null;
  left: SessionChanges;
  right: SessionChanges;
}
/**
 * One side of a [`SessionCompare`].
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionChanges".
 */
export interface SessionChanges {
  /**
   * Each changed file from its state before the session's first change to
   * it (after the fork point) to its state after the last one.
   */
  files: FileDiff[];
  session_id: string;
  stats: DiffStats;
  title: string;
  /**
   * The worktree the session works in, when it has its own: when both
   * sides have one, the worktree comparison screen compares them
   * (uncommitted changes included).
   */
  worktree?: string | null;
}
/**
 * A session opened in a front end: everything needed to draw it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionDetail".
 */
export interface SessionDetail {
  /**
   * The primary agent the next message goes to.
   */
  agent: string;
  /**
   * How full the model's context is (the runtime's estimate).
   */
  context?: ContextUsage | null;
  /**
   * The process that numbered them (the stream's `hello` epoch).
   */
  epoch?: string;
  messages: Message[];
  /**
   * Asks waiting for an answer (oldest first), so a reloaded window shows them.
   */
  pending_permissions?: PermissionRequest[];
  /**
   * An agent switch waiting for the running turn to end.
   */
  queued_agent?: string | null;
  /**
   * A turn is running in this process.
   */
  running?: boolean;
  /**
   * The session's last Event number when it was read (the Events stream's
   * `id`s): Events up to it may already be in this answer.
   */
  seq?: number;
  session: Session;
}
/**
 * A session in a list, with its message count.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionSummary".
 */
export interface SessionSummary {
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  archived_at?: number | null;
  created_at: number;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  fork?: ForkInfo | null;
  id: SessionId;
  message_count: number;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  parent_id?: SessionId | null;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  status: SessionStatus;
  title: string;
  updated_at: number;
  /**
   * mia-code version that created the session.
   */
  version: string;
  /**
   * The git worktree the session works in (its name), when its directory is one.
   */
  worktree?: string | null;
}
/**
 * A change to the global config made from the settings screen.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SettingsUpdate".
 */
export interface SettingsUpdate {
  /**
   * Per-agent `provider/model` (empty string: remove).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  /**
   * `plan`, `build`, ... (empty string: remove the setting).
   */
  default_agent?: string | null;
  /**
   * Default `provider/model` (empty string: remove).
   */
  model?: string | null;
  /**
   * The global config's own permission rules, in check order; they
   * replace its `permissions` (an empty list removes them).
   */
  permissions?: PermissionRule[] | null;
  /**
   * `updates.check` (the desktop app's check at start).
   */
  updates_check?: boolean | null;
}
/**
 * One permission rule as written in config (spec 074):
 * `{"permission": "write", "pattern": "*.lock", "action": "deny"}`.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionRule".
 */
export interface PermissionRule {
  action: PermissionAction;
  /**
   * Glob on paths, or a word pattern for `bash` (`git status *`). Absent: everything.
   */
  pattern?: string | null;
  /**
   * Tool or action id (`read`, `write`, `edit`, `bash`, ...) or `*` for all.
   */
  permission: string;
}
/**
 * The settings screen: what is configured and where it comes from.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SettingsView".
 */
export interface SettingsView {
  agents: AgentInfo[];
  /**
   * Config files that were read, lowest precedence first.
   */
  config_files: string[];
  default_agent: string;
  /**
   * The global config file settings are written to.
   */
  global_config: string;
  model?: string | null;
  providers: ProviderInfo[];
  /**
   * The OS sandbox shell commands run in, on this machine.
   */
  sandbox?: SandboxView | null;
  /**
   * `updates.check`: the desktop app looks for a new version at start.
   */
  updates_check?: boolean;
}
/**
 * A configured provider and where its key comes from (never the key).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ProviderInfo".
 */
export interface ProviderInfo {
  base_url?: string | null;
  id: string;
  /**
   * `config`, `env:NAME`, `keychain`, `file`; absent when no key is found.
   */
  key_source?: string | null;
  /**
   * Wire format: `anthropic`, `openai`, `gemini`.
   */
  kind: string;
  /**
   * Models of the bundled catalog for this provider.
   */
  models?: string[];
}
/**
 * The OS sandbox as configured and as this machine can apply it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxView".
 */
export interface SandboxView {
  available: boolean;
  /**
   * What the mechanism offers, or why there is none.
   */
  detail: string;
  /**
   * What happens to commands.
   */
  effect: "sandboxed" | "ask" | "unconfined";
  /**
   * The environment rule sandboxed commands get.
   */
  env?: string;
  /**
   * The mechanism holds every promise (bubblewrap, Seatbelt); false for
   * the Landlock fallback, under which commands the engine cannot read ask.
   */
  full?: boolean;
  /**
   * What the mechanism cannot hold.
   */
  limits?: string[];
  /**
   * Absent when unavailable.
   */
  mechanism?: SandboxMechanism | null;
  /**
   * `sandbox.mode` as configured (or this OS's default).
   */
  mode: "workspace-write" | "read-only" | "off";
  /**
   * What a permission rule decides.
   */
  network: "allow" | "ask" | "deny";
}
/**
 * What a user sees before sharing: exactly the payload that would be sent.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharePreview".
 */
export interface SharePreview {
  /**
   * Payload size in bytes as it would be sent.
   */
  bytes: number;
  /**
   * The existing share of this session, when there is one.
   */
  existing?: ShareRecord | null;
  /**
   * `disabled`, `ask` or `auto`.
   */
  mode: string;
  payload: SharePayload;
  redactions: Redaction[];
  /**
   * The server it would go to (none configured: sharing needs one).
   */
  server?: string | null;
}
/**
 * A share this machine created ("My shares").
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ShareRecord".
 */
export interface ShareRecord {
  created_at: number;
  expires_at?: number | null;
  /**
   * The server's id of the share.
   */
  id: string;
  /**
   * The server's base URL.
   */
  server: string;
  /**
   * The local session was deleted (the share can still be revoked).
   */
  session_deleted?: boolean;
  /**
   * The local session, while it exists.
   */
  session_id?: string | null;
  session_title: string;
  updated_at: number;
  url: string;
}
/**
 * What is uploaded: the session, its messages and (optionally) its diffs,
 * after redaction.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharePayload".
 */
export interface SharePayload {
  diffs?: SharedDiff[];
  messages?: SharedMessage[];
  session: SharedSession;
  version: string;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedDiff".
 */
export interface SharedDiff {
  additions: number;
  binary?: boolean;
  deletions: number;
  file: string;
  /**
   * Unified diff of the file (empty for a binary file).
   */
  patch: string;
  /**
   * `added`, `modified`, `deleted` or `renamed`.
   */
  status: string;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedMessage".
 */
export interface SharedMessage {
  created_at: number;
  /**
   * The local message id (what the preview's exclusions name).
   */
  id: string;
  metadata?: SharedMessageMeta | null;
  parts: SharedPart[];
  /**
   * `user` or `assistant`.
   */
  role: string;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedMessageMeta".
 */
export interface SharedMessageMeta {
  agent?: string | null;
  duration_ms?: number | null;
  model?: string | null;
  /**
   * Input + output tokens of the message's model call.
   */
  tokens?: number | null;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedSession".
 */
export interface SharedSession {
  agent?: string | null;
  /**
   * Milliseconds since the epoch.
   */
  created_at: number;
  /**
   * The local session's id (so a re-share updates the same share).
   */
  id: string;
  model?: string | null;
  /**
   * The project's directory name (never its full path).
   */
  project: string;
  title: string;
  updated_at?: number | null;
}
/**
 * One replacement made in the payload.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Redaction".
 */
export interface Redaction {
  /**
   * A masked hint of what was replaced (`sk-a…9f`), never the secret itself.
   */
  hint: string;
  /**
   * What was found: `anthropic-api-key`, `aws-secret`, `home-path`, `pattern:<n>`, ...
   */
  kind: string;
  place: RedactionPlace;
  /**
   * The text that now stands in the payload (`[REDACTED:anthropic-api-key]`, `~`).
   */
  replacement: string;
}
/**
 * What the user chose to leave out of a share.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ShareRequest".
 */
export interface ShareRequest {
  /**
   * Message ids left out entirely.
   */
  exclude_messages?: string[];
  /**
   * Tool call ids whose results are left out.
   */
  exclude_tool_results?: string[];
  /**
   * Another server than the configured one.
   */
  server?: string | null;
}
/**
 * One file-changing step of a session (spec 021's `/snapshots`), for the undo timeline.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TimelineStep".
 */
export interface TimelineStep {
  after: string;
  before: string;
  changes: FileChange[];
  created_at: number;
  id: string;
  /**
   * 1-based position in the session's timeline.
   */
  index: number;
  kind: StepKindView;
  message_id: string;
  subagent?: string | null;
  /**
   * Set when a subagent made the step (in its own session, for this
   * session's `task` call): that session and its agent.
   */
  subagent_session_id?: string | null;
  /**
   * The tool that made the change (`write`, `edit`, `bash`), when known.
   */
  tool?: string | null;
  tool_call_id?: string | null;
  /**
   * Paths whose content could not be captured (binary, too large): not restorable.
   */
  uncaptured?: string[];
  /**
   * This step's changes are currently undone.
   */
  undone: boolean;
}
/**
 * `POST /api/trust`: trust a workspace (approving its hooks as they are) or withdraw trust.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TrustUpdate".
 */
export interface TrustUpdate {
  directory: string;
  trusted: boolean;
}
/**
 * A project's workspace trust and its hooks (`GET /api/trust`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TrustView".
 */
export interface TrustView {
  directory: string;
  /**
   * The project's hooks as they are now are the set approved when the
   * workspace was trusted (they run); false when there are none.
   */
  hooks_approved: boolean;
  /**
   * Hook commands the project's config defines.
   */
  project_hooks: number;
  trusted: boolean;
}
/**
 * What `worktree create` made.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeCreated".
 */
export interface WorktreeCreated {
  base: string;
  branch: string;
  head: string;
  /**
   * Ignored files copied in (`.worktreeinclude`).
   */
  included: string[];
  name: string;
  path: string;
  scripts: ScriptView[];
  submodules: boolean;
}
/**
 * One file of an attempt against a base (`GET /api/worktrees/{name}/diff`):
 * the structured diff front ends render, and git's text for `git apply`.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeFileDiff".
 */
export interface WorktreeFileDiff {
  /**
   * `git diff BASE ATTEMPT -- PATH`, as git prints it.
   */
  diff: string;
  /**
   * The same change as files and hunks (empty when the file is on
   * neither side).
   */
  files: FileDiff[];
}
/**
 * One mia-code worktree and its state.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeView".
 */
export interface WorktreeView {
  /**
   * Commits its base branch does not have.
   */
  ahead: number;
  /**
   * The commit it started from.
   */
  base: string;
  /**
   * The branch that commit was the tip of (what `promote` merges into).
   */
  base_ref?: string | null;
  branch: string;
  created_at: number;
  /**
   * Uncommitted changes (paths, at most 200).
   */
  dirty: string[];
  head: string;
  /**
   * Nothing would be lost by removing it.
   */
  merged: boolean;
  name: string;
  path: string;
  /**
   * The branch mia-code made it on (the one its commands act on).
   */
  recorded_branch?: string;
  sessions: WorktreeSessionRef[];
  size_bytes: number;
  /**
   * Whether it is as mia-code made it.
   */
  state?: "ok" | "branch-changed" | "missing";
  /**
   * What removing it put in the trash first (`remove --force`).
   */
  trash?: TrashView | null;
  /**
   * What removing it would lose, said for a person (uncommitted,
   * untracked and ignored files, commits only its branch holds,
   * submodule commits); absent when nothing.
   */
  would_lose?: string | null;
}
/**
 * A session working in a worktree.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeSessionRef".
 */
export interface WorktreeSessionRef {
  id: string;
  status: string;
  title: string;
}
