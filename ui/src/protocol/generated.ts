/* Generated from schema/protocol.schema.json (the Rust types in crates/mia-protocol) by `npm run gen:types`. Do not edit. */

/**
 * A command into the runtime.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Op".
 */
export type Op =
  | {
      type: "create_session";
      directory: string;
      title?: string | null;
      agent?: string | null;
      model?: string | null;
    }
  | {
      type: "user_message";
      session_id: SessionId;
      text: string;
      /**
       * Use this primary agent from this message on.
       */
      agent?: string | null;
      /**
       * `provider/model` for this turn.
       */
      model?: string | null;
    }
  | {
      type: "permission_reply";
      session_id: SessionId;
      request_id: string;
      reply: PermissionReplyKind;
    }
  | {
      type: "cancel";
      session_id: SessionId;
    }
  | {
      type: "switch_agent";
      session_id: SessionId;
      agent: string;
    }
  | {
      type: "undo";
      session_id: SessionId;
      step?: string | null;
      /**
       * Overwrite files changed outside mia-code since (their content is kept as a backup).
       */
      force?: boolean;
    }
  | {
      type: "revert";
      session_id: SessionId;
      message_id: MessageId;
      force?: boolean;
    }
  | {
      type: "redo";
      session_id: SessionId;
      force?: boolean;
    }
  | {
      type: "update_session";
      session_id: SessionId;
      title?: string | null;
      archived?: boolean | null;
    }
  | {
      type: "delete_session";
      session_id: SessionId;
    }
  | {
      type: "fork";
      session_id: SessionId;
      message_id?: MessageId | null;
      with_files?: boolean;
    }
  | {
      type: "promote";
      session_id: SessionId;
    }
  | {
      type: "set_model";
      session_id: SessionId;
      /**
       * The agent it is for (default: the session's current agent).
       */
      agent?: string | null;
      model?: string | null;
    }
  | {
      type: "compact";
      session_id: SessionId;
    };
/**
 * A time-ordered identifier (UUID v7): ids sort in creation order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionId".
 */
export type SessionId = string;
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
      kind: "reject_with_feedback";
      feedback: string;
    };
/**
 * A time-ordered identifier (UUID v7): ids sort in creation order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "MessageId".
 */
export type MessageId = string;
/**
 * A notification out of the runtime.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Event".
 */
export type Event =
  | {
      type: "session_updated";
      session: Session;
    }
  | {
      type: "message_stored";
      message: Message;
    }
  | {
      type: "step_started";
      session_id: SessionId;
      message_id: MessageId;
      agent: string;
      model: string;
    }
  | {
      type: "text_delta";
      session_id: SessionId;
      message_id: MessageId;
      text: string;
    }
  | {
      type: "reasoning_delta";
      session_id: SessionId;
      message_id: MessageId;
      text: string;
    }
  | {
      type: "tool_call";
      session_id: SessionId;
      message_id: MessageId;
      call_id: string;
      tool: string;
      input: unknown;
    }
  | {
      type: "context_usage";
      session_id: SessionId;
      usage: ContextUsage;
    }
  | {
      type: "tool_output";
      session_id: SessionId;
      message_id: MessageId;
      call_id: string;
      text: string;
    }
  | {
      type: "permission_asked";
      request: PermissionRequest;
    }
  | {
      type: "permission_resolved";
      session_id: SessionId;
      request_id: string;
      decision: Resolution;
      /**
       * `rule`, `user`, `headless` or `plugin NAME`.
       */
      by: string;
      reason: string;
      /**
       * For a subagent's ask: the top-level session it also showed in.
       */
      root_session_id?: SessionId | null;
    }
  | {
      type: "tool_result";
      session_id: SessionId;
      message_id: MessageId;
      call_id: string;
      tool: string;
      output: string;
      is_error: boolean;
      duration_ms: number;
      /**
       * Shell commands: how the OS sandbox confined it.
       */
      sandbox?: SandboxNote | null;
    }
  | {
      type: "tool_content";
      session_id: SessionId;
      message_id: MessageId;
      call_id: string;
      items: ResultContent[];
    }
  | {
      type: "snapshot";
      session_id: SessionId;
      call_id: string;
      hash?: string | null;
      files: FileChange[];
      unavailable?: string | null;
    }
  | {
      type: "retrying";
      session_id: SessionId;
      attempt: number;
      delay_ms: number;
      reason: string;
    }
  | {
      type: "agent_switched";
      session_id: SessionId;
      from: string;
      to: string;
      /**
       * True when the switch waits for the running turn to finish.
       */
      queued: boolean;
    }
  | {
      type: "error";
      session_id?: SessionId | null;
      kind: string;
      message: string;
      retryable: boolean;
    }
  | {
      type: "notice";
      session_id?: SessionId | null;
      message: string;
    }
  | {
      type: "hook_ran";
      session_id: SessionId;
      call_id?: string | null;
      run: HookRun;
    }
  | {
      type: "turn_finished";
      session_id: SessionId;
      end: TurnEnd;
      steps: number;
      usage: TokenUsage;
      cost_usd?: number | null;
    }
  | {
      type: "subagent_queued";
      session_id: SessionId;
      call_id: string;
      agent: string;
    }
  | {
      type: "subagent_started";
      session_id: SessionId;
      child_session_id: SessionId;
      call_id: string;
      agent: string;
      description: string;
    }
  | {
      type: "subagent_finished";
      session_id: SessionId;
      child_session_id: SessionId;
      call_id: string;
      agent: string;
      status: SubagentStatus;
      duration_ms: number;
      steps: number;
      tool_calls: number;
      cost_usd?: number | null;
    }
  | {
      type: "compaction_started";
      session_id: SessionId;
      trigger: CompactionTrigger;
      /**
       * Estimated tokens of the conversation before.
       */
      tokens_before: number;
    }
  | {
      type: "compaction_finished";
      session_id: SessionId;
      message_id: MessageId;
      trigger: CompactionTrigger;
      compacted: number;
      retained: number;
      tokens_before: number;
      tokens_after: number;
    }
  | {
      type: "compaction_failed";
      session_id: SessionId;
      trigger: CompactionTrigger;
      message: string;
    }
  | {
      type: "worktree_log";
      /**
       * The repository's root directory.
       */
      directory: string;
      /**
       * The worktree (or `main` for a check of the main tree).
       */
      name: string;
      command: string;
      line: string;
      stderr: boolean;
    };
/**
 * What a session is doing right now.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionStatus".
 */
export type SessionStatus = "idle" | "busy" | "compacting";
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
 * A time-ordered identifier (UUID v7): ids sort in creation order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PartId".
 */
export type PartId = string;
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
      type: "text";
      text: string;
      /**
       * Written by mia-code rather than typed by a person or the model.
       */
      synthetic?: boolean;
    }
  | {
      type: "reasoning";
      text: string;
      /**
       * Provider signature that must accompany the reasoning when it is
       * sent back (Anthropic thinking with tool use).
       */
      signature?: string | null;
    }
  | {
      type: "tool_call";
      call_id: string;
      tool: string;
      input: unknown;
      /**
       * Opaque provider data sent back with the call (Gemini `thoughtSignature`).
       */
      signature?: string | null;
    }
  | {
      type: "tool_result";
      call_id: string;
      tool: string;
      output: string;
      is_error?: boolean;
      duration_ms?: number | null;
      /**
       * How the call's permission ask was answered, or the rule that denied
       * it (absent when a rule allowed it without asking).
       */
      permission?: PermissionNote | null;
      /**
       * Shell commands: how the OS sandbox confined it.
       */
      sandbox?: SandboxNote | null;
      /**
       * The hooks that ran for this call (`PreToolUse`, `PostToolUse`).
       */
      hooks?: HookRun[];
    }
  | {
      type: "error";
      /**
       * Machine-readable class (`rate_limited`, `network`, `auth`, ...).
       */
      kind: string;
      message: string;
      retryable?: boolean;
    }
  | {
      type: "image";
      media_type: string;
      /**
       * Base64 data, or a `file://` reference for large images.
       */
      data: string;
    }
  | {
      type: "file";
      path: string;
      media_type?: string | null;
    }
  | {
      type: "snapshot";
      hash: string;
      tool_call_id?: string | null;
      files?: FileChange[];
      /**
       * Set when no snapshot could be taken; undo is unavailable for the step.
       */
      unavailable?: string | null;
    }
  | {
      type: "revert";
      target_message_id?: MessageId | null;
      restored: string[];
      removed: string[];
      conflicts?: string[];
      /**
       * Snapshot of the state just before the revert (so it can be redone).
       */
      pre_revert_snapshot?: string | null;
    }
  | {
      type: "tool_content";
      call_id: string;
      items: ResultContent[];
    }
  | {
      type: "compaction_summary";
      summary: string;
      /**
       * Number of messages this summary stands for.
       */
      compacted_messages: number;
    }
  | {
      type: "subagent";
      session_id: SessionId;
      agent: string;
      description: string;
      status: string;
    }
  | {
      type: "commentary";
      perspective: string;
      text: string;
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
 * What a permission rule decides.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionAction".
 */
export type PermissionAction = "allow" | "ask" | "deny";
/**
 * What confines commands on this machine.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxMechanism".
 */
export type SandboxMechanism = "bubblewrap" | "landlock+seccomp" | "seatbelt";
/**
 * Why a command ran outside the sandbox.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "UnconfinedReason".
 */
export type UnconfinedReason = "config" | "escalated" | "unavailable";
/**
 * What the sandbox seems to have blocked.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxBlocked".
 */
export type SandboxBlocked = "write" | "network";
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
      type: "image";
      media_type: string;
      data: string;
    }
  | {
      type: "resource_link";
      uri: string;
      name: string;
      description?: string | null;
      mime_type?: string | null;
    }
  | {
      type: "resource";
      uri: string;
      mime_type?: string | null;
      text?: string | null;
    };
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffStatus".
 */
export type DiffStatus = "added" | "deleted" | "modified";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "LineType".
 */
export type LineType = "add" | "delete" | "context";
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
 * What kind of entry a timeline step is.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "StepKindView".
 */
export type StepKindView = "tool" | "revert" | "redo";
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
 * What a file will go through if a planned undo/revert/redo is applied.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PreviewAction".
 */
export type PreviewAction = "restore" | "remove";
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
      scope: "message";
      message_id: string;
    }
  | {
      scope: "step";
      step: string;
    };
/**
 * Whether an agent can be selected as the conversation's agent.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AgentModeView".
 */
export type AgentModeView = "primary" | "subagent" | "all";
/**
 * The worktree operation that put an entry in the trash.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TrashOperation".
 */
export type TrashOperation = ("remove" | "reset" | "take" | "promote") | "auto-cleanup";
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
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedPart".
 */
export type SharedPart =
  | {
      type: "text";
      content: string;
    }
  | {
      type: "reasoning";
      content: string;
    }
  | {
      type: "tool_call";
      call_id: string;
      name: string;
      args: unknown;
    }
  | {
      type: "tool_result";
      call_id: string;
      name: string;
      output: string;
      is_error?: boolean;
      duration_ms?: number | null;
      /**
       * The result was left out (`includeToolResults: false` or excluded
       * in the preview); `output` is empty then.
       */
      omitted?: boolean;
    }
  | {
      type: "error";
      message: string;
    }
  | {
      type: "summary";
      content: string;
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
      in: "diff";
      file: string;
    };
/**
 * Where an MCP server is.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "McpState".
 */
export type McpState = ("ready" | "failed" | "disabled") | "exited" | "stopped" | "untrusted";
/**
 * Where a plugin is.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PluginState".
 */
export type PluginState =
  ("loaded" | "installing" | "failed" | "skipped") | "refused" | "untrusted" | "not loaded";
/**
 * What the review pane shows.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewScope".
 */
export type ReviewScope = "uncommitted" | "branch" | "last_turn";
/**
 * Where pull requests go.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForgeKind".
 */
export type ForgeKind = "github" | "gitlab";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PrState".
 */
export type PrState = "open" | "closed" | "merged";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewDecision".
 */
export type ReviewDecision = ("approved" | "changes_requested") | "review_required";
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ChecksState".
 */
export type ChecksState = ("pending" | "success" | "failure") | "none";
/**
 * Where a custom slash command file was found (precedence order).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommandSourceView".
 */
export type CommandSourceView = "project" | "claude" | "opencode" | "user";
/**
 * How the OS sandbox confines commands.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxModeView".
 */
export type SandboxModeView = "workspace-write" | "read-only" | "off";
/**
 * What happens to shell commands.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxEffect".
 */
export type SandboxEffect = "sandboxed" | "ask" | "unconfined";
/**
 * Whether a worktree is as mia-code made it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeState".
 */
export type WorktreeState = "ok" | "branch-changed" | "missing";

export interface Protocol {
  op: Op;
  event: Event;
  session: Session;
  session_summary: SessionSummary;
  session_detail: SessionDetail;
  project_summary: ProjectSummary;
  message: Message;
  permission_request: PermissionRequest;
  permission_reply_kind: PermissionReplyKind;
  revert_summary: RevertSummary;
  timeline_step: TimelineStep;
  history_action: HistoryAction;
  revert_preview: RevertPreview;
  diff_scope: DiffScope;
  diff_view: DiffView;
  agent_info: AgentInfo;
  settings_view: SettingsView;
  settings_update: SettingsUpdate;
  permissions_view: PermissionsView;
  approval_view: ApprovalView;
  worktree_view: WorktreeView;
  worktree_created: WorktreeCreated;
  comparison_view: ComparisonView;
  worktree_file_diff: WorktreeFileDiff;
  promoted_view: PromotedView;
  server_info: ServerInfo;
  fork_result: ForkResult;
  fork_tree_node: ForkTreeNode;
  session_compare: SessionCompare;
  compact_result: CompactResult;
  cost_view: CostView;
  agent_proposal: AgentProposal;
  model_choice: ModelChoice;
  share_preview: SharePreview;
  share_request: ShareRequest;
  share_record: ShareRecord;
  mcp_server_view: McpServerView;
  plugin_view: PluginView;
  hunk_list: HunkList;
  hunk_reverted: HunkReverted;
  review_list: ReviewList;
  new_review_comment: NewReviewComment;
  review_diff: ReviewDiff;
  commit_result: CommitResult;
  draft: Draft;
  push_result: PushResult;
  pull_request_view: PullRequestView;
  branch_status: BranchStatus;
  command_list: CommandList;
  hook_run: HookRun;
  trust_view: TrustView;
  trust_update: TrustUpdate;
}
/**
 * One conversation.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Session".
 */
export interface Session {
  id: SessionId;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  parent_id?: SessionId | null;
  fork?: ForkInfo | null;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  title: string;
  /**
   * mia-code version that created the session.
   */
  version: string;
  status: SessionStatus;
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  created_at: number;
  updated_at: number;
  archived_at?: number | null;
}
/**
 * Where a forked session came from (spec 020).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkInfo".
 */
export interface ForkInfo {
  source_session_id: SessionId;
  source_message_id: MessageId;
  forked_at: number;
  fork_depth: number;
}
/**
 * Who started a subagent's session (spec 015): the parent session and its
 * `task` call. Not a fork: a spawned session is not in the fork tree.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SpawnInfo".
 */
export interface SpawnInfo {
  session_id: SessionId;
  call_id: string;
  /**
   * The parent's agent at the time.
   */
  agent: string;
}
/**
 * One stored message with its parts in order.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Message".
 */
export interface Message {
  id: MessageId;
  session_id: SessionId;
  role: Role;
  type: MessageType;
  metadata: MessageMetadata;
  created_at: number;
  /**
   * Set when a compaction summary replaced this message in the model's
   * context; the message itself is kept (spec 019: nothing is lost).
   */
  compacted_by?: MessageId | null;
  parts: Part[];
}
/**
 * Free-form but typed message metadata: model, tokens, cost, timing.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "MessageMetadata".
 */
export interface MessageMetadata {
  agent?: string | null;
  model?: string | null;
  tokens?: TokenUsage | null;
  /**
   * Cost in US dollars; absent when the model's price is unknown.
   */
  cost_usd?: number | null;
  duration_ms?: number | null;
  /**
   * Why the model stopped (`end_turn`, `tool_use`, `max_tokens`, `cancelled`, ...).
   */
  finish?: string | null;
  [k: string]: unknown | undefined;
}
/**
 * Token counts reported by a provider for one assistant message.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TokenUsage".
 */
export interface TokenUsage {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}
/**
 * One stored content unit of a message.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Part".
 */
export interface Part {
  id: PartId;
  message_id: MessageId;
  index: number;
  created_at: number;
  content: PartContent;
}
/**
 * The permission decision recorded with a tool result (what the tool card shows).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionNote".
 */
export interface PermissionNote {
  decision: Resolution;
  /**
   * `user`, `rule`, `headless` or `plugin NAME`.
   */
  by: string;
  /**
   * The answer a person gave.
   */
  reply?: ReplyOption | null;
  /**
   * The denial message or the feedback given.
   */
  reason?: string;
}
/**
 * How a shell command was confined by the OS sandbox (what the tool card shows).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SandboxNote".
 */
export interface SandboxNote {
  /**
   * How it was confined (`off`: it ran unconfined).
   */
  mode: "workspace-write" | "read-only" | "off";
  /**
   * Its network (absent when unconfined).
   */
  network?: PermissionAction | null;
  /**
   * Absent when unconfined.
   */
  mechanism?: SandboxMechanism | null;
  /**
   * Why it ran unconfined.
   */
  unconfined?: UnconfinedReason | null;
  /**
   * What the sandbox seems to have blocked.
   */
  blocked?: SandboxBlocked | null;
  /**
   * False when the mechanism was the weaker fallback (Landlock).
   */
  full?: boolean | null;
  /**
   * What the mechanism could not hold (the fallback's list).
   */
  limits?: string[];
  /**
   * The hosts the command's connections went to through the proxy.
   */
  hosts?: NetworkHost[];
}
/**
 * One host a sandboxed command connected to (or was refused).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "NetworkHost".
 */
export interface NetworkHost {
  host: string;
  port: number;
  allowed: boolean;
  /**
   * What allowed it (`registry`, `rule or answer`) or why it was refused.
   */
  reason: string;
  /**
   * The program that connected, when known.
   */
  program?: string | null;
}
/**
 * One run of a hook, as its tool card and the log show it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "HookRun".
 */
export interface HookRun {
  /**
   * The event (`PreToolUse`, `Stop`, ...).
   */
  event: string;
  command: string;
  /**
   * The exit code; `null` when it was stopped (timeout) or did not start.
   */
  exit_code?: number | null;
  duration_ms: number;
  /**
   * What it decided: `block`, `deny`, `ask`, `allow`, `timeout`, `error`; `null` for nothing.
   */
  outcome?: string | null;
  /**
   * Its reason or stderr, shortened.
   */
  message?: string;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "FileChange".
 */
export interface FileChange {
  path: string;
  kind: FileChangeKind;
  additions?: number;
  deletions?: number;
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
   * Estimated tokens of the next request.
   */
  tokens: number;
  /**
   * The model's context window.
   */
  window: number;
  /**
   * Where automatic compaction starts (the window less the reply's room,
   * times `compaction.tokenRatio`).
   */
  budget: number;
  /**
   * `provider/model` the estimate is for.
   */
  model: string;
  /**
   * False when the system prompt and tools are not counted (the session
   * has not sent a request in this process yet).
   */
  complete: boolean;
}
/**
 * Everything a permission dialog needs.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionRequest".
 */
export interface PermissionRequest {
  id: string;
  session_id: SessionId;
  agent: string;
  tool: string;
  /**
   * The tool call this ask is about (links the dialog to its tool card).
   */
  call_id?: string | null;
  permission: string;
  input: unknown;
  /**
   * The path, command or URL being judged, as shown to the user.
   */
  target: string;
  segments?: CommandSegment[];
  /**
   * The rule that produced "ask", e.g. `ask bash (built-in defaults)`; absent when no rule matched.
   */
  matched_rule?: string | null;
  reason: string;
  /**
   * Which replies can be offered (e.g. no "session"/"project" for commands with expansions).
   */
  options: ReplyOption[];
  /**
   * For a subagent's ask: the top-level session its delegation started
   * from (the ask shows there too; answer it with this request's `session_id`).
   */
  root_session_id?: SessionId | null;
  /**
   * For a write or an edit: the change it would make, against the file
   * as it is now (a new file: all additions). Absent when it cannot be
   * known (the edit does not apply, the file is over 1 MB).
   */
  proposed?: FileDiff | null;
}
/**
 * One judged piece of a shell command, for the permission dialog.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommandSegment".
 */
export interface CommandSegment {
  command: string;
  decision: PermissionAction;
  dangerous?: boolean;
  reason?: string | null;
}
/**
 * How one file differs between two snapshots.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "FileDiff".
 */
export interface FileDiff {
  file: string;
  status: DiffStatus;
  /**
   * Full content before (empty when added or binary).
   */
  before: string;
  /**
   * Full content after (empty when deleted or binary).
   */
  after: string;
  additions: number;
  deletions: number;
  hunks: Hunk[];
  /**
   * Binary content (NUL byte or not UTF-8): reported, not diffed.
   */
  binary?: boolean;
  /**
   * Git modes (`100644`, `100755`, `120000`).
   */
  oldMode?: string | null;
  newMode?: string | null;
  oldId?: string | null;
  newId?: string | null;
  /**
   * Set when the line endings changed (`LF → CRLF`, `CRLF → mixed`): the
   * hunks then show lines whose visible text did not change.
   */
  lineEndings?: string | null;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Hunk".
 */
export interface Hunk {
  /**
   * 1-based start in the before-version (git's convention: the line
   * before the hunk when it has no before-lines).
   */
  startBefore: number;
  startAfter: number;
  linesBefore: number;
  linesAfter: number;
  lines: DiffLine[];
}
/**
 * One line of a hunk.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffLine".
 */
export interface DiffLine {
  type: LineType;
  /**
   * The line without its trailing newline (a `\r` of CRLF is kept).
   */
  content: string;
  /**
   * Line number in the "after" file for additions and context, in the
   * "before" file for deletions (1-based).
   */
  lineNumber: number;
  oldLine?: number | null;
  newLine?: number | null;
  /**
   * The file ends with this line and it has no newline.
   */
  noNewline?: boolean;
}
/**
 * A session in a list, with its message count.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionSummary".
 */
export interface SessionSummary {
  id: SessionId;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  parent_id?: SessionId | null;
  fork?: ForkInfo | null;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  title: string;
  /**
   * mia-code version that created the session.
   */
  version: string;
  status: SessionStatus;
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  created_at: number;
  updated_at: number;
  archived_at?: number | null;
  message_count: number;
  /**
   * The git worktree the session works in (its name), when its directory is one.
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
  session: Session;
  messages: Message[];
  /**
   * Asks waiting for an answer (oldest first), so a reloaded window shows them.
   */
  pending_permissions?: PermissionRequest[];
  /**
   * A turn is running in this process.
   */
  running?: boolean;
  /**
   * An agent switch waiting for the running turn to end.
   */
  queued_agent?: string | null;
  /**
   * The primary agent the next message goes to.
   */
  agent: string;
  /**
   * How full the model's context is (the runtime's estimate).
   */
  context?: ContextUsage | null;
  /**
   * The session's last Event number when it was read (the Events stream's
   * `id`s): Events up to it may already be in this answer.
   */
  seq?: number;
  /**
   * The process that numbered them (the stream's `hello` epoch).
   */
  epoch?: string;
}
/**
 * A project the store knows sessions for.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ProjectSummary".
 */
export interface ProjectSummary {
  directory: string;
  project_id: string;
  sessions: number;
  last_used: number;
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
  /**
   * The spec 021 message (also appended to the session when applied).
   */
  message: string;
  restored: string[];
  removed: string[];
  conflicts: RevertConflict[];
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RevertConflict".
 */
export interface RevertConflict {
  path: string;
  reason: string;
  /**
   * Where the current content was kept before a forced revert.
   */
  backup?: string | null;
}
/**
 * One file-changing step of a session (spec 021's `/snapshots`), for the undo timeline.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TimelineStep".
 */
export interface TimelineStep {
  /**
   * 1-based position in the session's timeline.
   */
  index: number;
  id: string;
  message_id: string;
  tool_call_id?: string | null;
  /**
   * The tool that made the change (`write`, `edit`, `bash`), when known.
   */
  tool?: string | null;
  kind: StepKindView;
  before: string;
  after: string;
  changes: FileChange[];
  /**
   * Paths whose content could not be captured (binary, too large): not restorable.
   */
  uncaptured?: string[];
  /**
   * This step's changes are currently undone.
   */
  undone: boolean;
  created_at: number;
  /**
   * Set when a subagent made the step (in its own session, for this
   * session's `task` call): that session and its agent.
   */
  subagent_session_id?: string | null;
  subagent?: string | null;
}
/**
 * Exactly which files an undo/revert/redo will change, computed without changing anything.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RevertPreview".
 */
export interface RevertPreview {
  action: HistoryAction;
  /**
   * Ids of the steps it undoes (for redo: the revert it undoes).
   */
  steps: string[];
  files: PreviewFile[];
  /**
   * Touched files that cannot be restored (never captured).
   */
  unrestorable?: string[];
  /**
   * Files that changed while the undone steps ran but not by them, which
   * it leaves as they are, and why.
   */
  left_alone?: LeftAlone[];
  additions: number;
  deletions: number;
  /**
   * The diff from the current files to the state it restores.
   */
  diff: FileDiff[];
}
/**
 * One file of a preview.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PreviewFile".
 */
export interface PreviewFile {
  path: string;
  action: PreviewAction;
  /**
   * How a step changed one file.
   */
  was: "added" | "modified" | "deleted";
  /**
   * Set when the file changed outside mia-code since: applying without
   * `force` refuses; with `force` the current content is kept as a backup.
   */
  conflict?: string | null;
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
 * A diff ready to show (spec 077): files, statistics, the summary line and a patch.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffView".
 */
export interface DiffView {
  scope: DiffScope;
  files: FileDiff[];
  stats: DiffStats;
  /**
   * e.g. `3 files changed, 45 insertions(+), 12 deletions(-)`.
   */
  summary: string;
  /**
   * Unified diff that `git apply` accepts.
   */
  patch: string;
}
/**
 * Aggregate statistics over a set of [`FileDiff`]s.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "DiffStats".
 */
export interface DiffStats {
  filesChanged: number;
  filesAdded: number;
  filesDeleted: number;
  filesModified: number;
  totalAdditions: number;
  totalDeletions: number;
  /**
   * additions − deletions.
   */
  estimatedLOCImpact: number;
}
/**
 * An agent as the UI lists it (mode toggle, settings).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AgentInfo".
 */
export interface AgentInfo {
  name: string;
  description: string;
  mode: AgentModeView;
  /**
   * `provider/model` configured for it, if any.
   */
  model?: string | null;
  builtin: boolean;
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
 * The settings screen: what is configured and where it comes from.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SettingsView".
 */
export interface SettingsView {
  providers: ProviderInfo[];
  default_agent: string;
  model?: string | null;
  agents: AgentInfo[];
  /**
   * The global config file settings are written to.
   */
  global_config: string;
  /**
   * Config files that were read, lowest precedence first.
   */
  config_files: string[];
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
  id: string;
  /**
   * Wire format: `anthropic`, `openai`, `gemini`.
   */
  kind: string;
  base_url?: string | null;
  /**
   * `config`, `env:NAME`, `keychain`, `file`; absent when no key is found.
   */
  key_source?: string | null;
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
  /**
   * `sandbox.mode` as configured (or this OS's default).
   */
  mode: "workspace-write" | "read-only" | "off";
  /**
   * Absent when unavailable.
   */
  mechanism?: SandboxMechanism | null;
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
   * The mechanism holds every promise (bubblewrap, Seatbelt); false for
   * the Landlock fallback, under which commands the engine cannot read ask.
   */
  full?: boolean;
  /**
   * What the mechanism cannot hold.
   */
  limits?: string[];
  /**
   * What a permission rule decides.
   */
  network: "allow" | "ask" | "deny";
  /**
   * The environment rule sandboxed commands get.
   */
  env?: string;
}
/**
 * A change to the global config made from the settings screen.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SettingsUpdate".
 */
export interface SettingsUpdate {
  /**
   * `plan`, `build`, ... (empty string: remove the setting).
   */
  default_agent?: string | null;
  /**
   * Default `provider/model` (empty string: remove).
   */
  model?: string | null;
  /**
   * Per-agent `provider/model` (empty string: remove).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  /**
   * `updates.check` (the desktop app's check at start).
   */
  updates_check?: boolean | null;
  /**
   * The global config's own permission rules, in check order; they
   * replace its `permissions` (an empty list removes them).
   */
  permissions?: PermissionRule[] | null;
}
/**
 * One permission rule as written in config (spec 074):
 * `{"permission": "write", "pattern": "*.lock", "action": "deny"}`.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PermissionRule".
 */
export interface PermissionRule {
  /**
   * Tool or action id (`read`, `write`, `edit`, `bash`, ...) or `*` for all.
   */
  permission: string;
  /**
   * Glob on paths, or a word pattern for `bash` (`git status *`). Absent: everything.
   */
  pattern?: string | null;
  action: PermissionAction;
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
  warnings: string[];
  trusted: boolean;
}
/**
 * One compiled permission rule, in the order it is checked.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "RuleView".
 */
export interface RuleView {
  permission: string;
  pattern?: string | null;
  action: string;
  /**
   * Which layer it comes from (invariant, session, project approval, agent config, ...).
   */
  layer: string;
  /**
   * File and index, or `built-in`.
   */
  source: string;
}
/**
 * An "always for this project" approval.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ApprovalView".
 */
export interface ApprovalView {
  id: number;
  permission: string;
  pattern: string;
  agent?: string | null;
  created_at: number;
}
/**
 * One mia-code worktree and its state.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeView".
 */
export interface WorktreeView {
  name: string;
  path: string;
  branch: string;
  /**
   * The commit it started from.
   */
  base: string;
  /**
   * The branch that commit was the tip of (what `promote` merges into).
   */
  base_ref?: string | null;
  head: string;
  created_at: number;
  size_bytes: number;
  /**
   * Uncommitted changes (paths, at most 200).
   */
  dirty: string[];
  /**
   * Commits its base branch does not have.
   */
  ahead: number;
  /**
   * Nothing would be lost by removing it.
   */
  merged: boolean;
  /**
   * What removing it would lose, said for a person (uncommitted,
   * untracked and ignored files, commits only its branch holds,
   * submodule commits); absent when nothing.
   */
  would_lose?: string | null;
  sessions: WorktreeSessionRef[];
  /**
   * Whether it is as mia-code made it.
   */
  state?: "ok" | "branch-changed" | "missing";
  /**
   * The branch mia-code made it on (the one its commands act on).
   */
  recorded_branch?: string;
  /**
   * What removing it put in the trash first (`remove --force`).
   */
  trash?: TrashView | null;
}
/**
 * A session working in a worktree.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeSessionRef".
 */
export interface WorktreeSessionRef {
  id: string;
  title: string;
  status: string;
}
/**
 * What a forced worktree operation (or a reset) kept before it dropped it.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TrashView".
 */
export interface TrashView {
  id: string;
  worktree: string;
  operation: TrashOperation;
  created_at: number;
  /**
   * Where the files were.
   */
  root: string;
  files: string[];
  /**
   * Commits kept (a bundle), by the ref that held them.
   */
  refs: string[];
  /**
   * Submodule commits kept: `path@commit`.
   */
  submodule_commits: string[];
}
/**
 * What `worktree create` made.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "WorktreeCreated".
 */
export interface WorktreeCreated {
  name: string;
  path: string;
  branch: string;
  base: string;
  head: string;
  /**
   * Ignored files copied in (`.worktreeinclude`).
   */
  included: string[];
  submodules: boolean;
  scripts: ScriptView[];
}
/**
 * How a start or check script ended.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ScriptView".
 */
export interface ScriptView {
  command: string;
  /**
   * `null`: killed (cancelled or timed out).
   */
  exit_code?: number | null;
  cancelled: boolean;
  duration_ms: number;
  /**
   * The last 64 KiB of its output.
   */
  output: string;
}
/**
 * `worktree compare A B`.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ComparisonView".
 */
export interface ComparisonView {
  base: string;
  a: AttemptView;
  b: AttemptView;
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
   * A worktree name, or `main`.
   */
  name: string;
  path: string;
  files: AttemptFile[];
  stats: AttemptStats;
  usage: AttemptUsage;
  /**
   * The last run of `worktree.checkCommand` there.
   */
  check?: ScriptView | null;
}
/**
 * One changed file of an attempt against the base.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AttemptFile".
 */
export interface AttemptFile {
  path: string;
  status: AttemptFileStatus;
  additions: number;
  deletions: number;
  binary: boolean;
  /**
   * Its hunks against the base (ids for `worktree take --hunk`); listed
   * when asked for (`worktree compare --json`, `?hunks=true`).
   */
  hunks?: HunkView[];
}
/**
 * One hunk of a file (`mia-code hunk list --json`, `GET /api/hunks`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "HunkView".
 */
export interface HunkView {
  /**
   * Stable: from the file and the hunk's content (not its line numbers,
   * so staging one hunk does not change the others' ids).
   */
  id: string;
  file: string;
  /**
   * The path a renamed file had.
   */
  old_file?: string | null;
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  staged: boolean;
  /**
   * The hunk's lines as a unified diff prints them: `+`, `-` or a space,
   * then the line (`\ No newline at end of file` where git prints it).
   */
  lines: string[];
  binary?: boolean;
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
  files: number;
  additions: number;
  deletions: number;
}
/**
 * What the sessions working in an attempt used.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AttemptUsage".
 */
export interface AttemptUsage {
  sessions: number;
  input_tokens: number;
  output_tokens: number;
  /**
   * Dollars; `null` when a model's price is unknown.
   */
  cost?: number | null;
  /**
   * From the first message to the last, summed over its sessions.
   */
  duration_ms: number;
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
 * What `promote` did.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PromotedView".
 */
export interface PromotedView {
  name: string;
  branch: string;
  head: string;
  merged_into?: string | null;
  commit?: string | null;
  fast_forward: boolean;
  removed: boolean;
  /**
   * Other worktrees the user may now remove.
   */
  others: string[];
  /**
   * The worktree's uncommitted changes were committed on its branch as this.
   */
  committed?: string | null;
  /**
   * Why auto-cleanup kept the worktree.
   */
  kept?: string | null;
  /**
   * What went to the trash first (`--force`).
   */
  trash?: TrashView | null;
}
/**
 * About the running backend.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ServerInfo".
 */
export interface ServerInfo {
  version: string;
  /**
   * A scripted demo (mock model): the UI labels itself so.
   */
  demo: boolean;
  /**
   * The project to open first (`mia-code serve --project`, the demo's sample project).
   */
  project?: string | null;
  home: string;
}
/**
 * A new fork (spec 020): the child session, and for a fork with files the
 * worktree it works in.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkResult".
 */
export interface ForkResult {
  id: SessionId;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  parent_id?: SessionId | null;
  fork?: ForkInfo | null;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  title: string;
  /**
   * mia-code version that created the session.
   */
  version: string;
  status: SessionStatus;
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  created_at: number;
  updated_at: number;
  archived_at?: number | null;
  /**
   * Set for a fork with files.
   */
  files?: ForkFiles | null;
}
/**
 * The workspace of a fork with files: a new worktree holding the project as
 * it was at the fork point.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkFiles".
 */
export interface ForkFiles {
  worktree: string;
  path: string;
  branch: string;
  /**
   * The commit the worktree started from (the parent's HEAD).
   */
  base: string;
  /**
   * The snapshot applied over it (the files at the fork point); absent
   * when the session had changed nothing by then (the files are the
   * parent's as they are now).
   */
  snapshot?: string | null;
  /**
   * Files that could not be carried over, each with why (over the
   * snapshot size cap, unreadable; ignored files are never snapshotted).
   */
  left_out: string[];
  /**
   * Ignored files copied in because `.worktreeinclude` lists them.
   */
  included: string[];
}
/**
 * One session in a project's fork tree (the tree view and `sessions tree --json`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ForkTreeNode".
 */
export interface ForkTreeNode {
  id: SessionId;
  /**
   * Human-readable short identifier, e.g. `fix-auth-bug-3f2a`.
   */
  slug: string;
  /**
   * Stable hash of the canonical project directory.
   */
  project_id: string;
  /**
   * Absolute path of the project root.
   */
  directory: string;
  parent_id?: SessionId | null;
  fork?: ForkInfo | null;
  /**
   * Set for a subagent's session: who spawned it.
   */
  spawned_by?: SpawnInfo | null;
  /**
   * Models picked with `/model` in this session, per agent (`provider/model`).
   */
  agent_models?: {
    [k: string]: string | undefined;
  };
  title: string;
  /**
   * mia-code version that created the session.
   */
  version: string;
  status: SessionStatus;
  /**
   * Active primary agent (plan/build/...), if one was chosen.
   */
  agent?: string | null;
  /**
   * Model reference `provider/model`, if one was chosen.
   */
  model?: string | null;
  created_at: number;
  updated_at: number;
  archived_at?: number | null;
  message_count: number;
  /**
   * The git worktree the session works in (its name), when its directory is one.
   */
  worktree?: string | null;
  /**
   * Distinct files its own steps changed.
   */
  files_changed: number;
  /**
   * Cost of its own messages (a fork's copied history is not counted again), USD.
   */
  cost_usd: number;
  /**
   * The fork point's text, shortened (forks only).
   */
  fork_excerpt?: string | null;
  /**
   * The fork's own first prompt after the fork point, shortened: what
   * tells sibling forks (all titled "… (fork)") apart (forks only).
   */
  first_prompt?: string | null;
  /**
   * True when the fork has its own worktree (a fork with files) rather
   * than its parent's directory.
   */
  own_worktree: boolean;
  children: ForkTreeNode[];
}
/**
 * Two sessions' file changes since the point where they diverged, for the
 * side-by-side comparison (`GET /api/sessions/{id}/compare?with=`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionCompare".
 */
export interface SessionCompare {
  left: SessionChanges;
  right: SessionChanges;
  /**
   * Where they diverged: the fork point message in the common ancestor.
   */
  fork_point?: string | null;
}
/**
 * One side of a [`SessionCompare`].
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SessionChanges".
 */
export interface SessionChanges {
  session_id: string;
  title: string;
  /**
   * The worktree the session works in, when it has its own: when both
   * sides have one, the worktree comparison screen compares them
   * (uncommitted changes included).
   */
  worktree?: string | null;
  /**
   * Each changed file from its state before the session's first change to
   * it (after the fork point) to its state after the last one.
   */
  files: FileDiff[];
  stats: DiffStats;
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
   * Messages kept verbatim after the summary.
   */
  retained: number;
  /**
   * Estimated tokens of the conversation before and after.
   */
  tokens_before: number;
  tokens_after: number;
  /**
   * The summary message.
   */
  message_id: string;
}
/**
 * What a session cost: per agent and model, its subagents' sessions included.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CostView".
 */
export interface CostView {
  session_id: string;
  /**
   * Per agent and model, the session and its subagents together.
   */
  lines: CostLine[];
  session: CostLine1;
  total: CostLine2;
  /**
   * The subagent sessions counted in `total`.
   */
  subagent_sessions: string[];
}
/**
 * One (agent, model) line of a session's cost (`mia-code cost`, `/cost`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CostLine".
 */
export interface CostLine {
  agent: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}
/**
 * One (agent, model) line of a session's cost (`mia-code cost`, `/cost`).
 */
export interface CostLine1 {
  agent: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}
/**
 * One (agent, model) line of a session's cost (`mia-code cost`, `/cost`).
 */
export interface CostLine2 {
  agent: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
}
/**
 * A generated agent definition, validated, before it is saved (spec 013).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "AgentProposal".
 */
export interface AgentProposal {
  key: string;
  name: string;
  description: string;
  /**
   * `primary`, `subagent` or `all`.
   */
  mode: string;
  model?: string | null;
  model_reason?: string;
  prompt: string;
  permissions: ProposedRule[];
  /**
   * What validation changed (a taken key renamed, an allow tightened to ask, ...).
   */
  notes?: string[];
  /**
   * After a refinement: the fields it changed.
   */
  changed?: string[];
}
/**
 * One permission rule of a generated agent, with why.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ProposedRule".
 */
export interface ProposedRule {
  permission: string;
  pattern?: string | null;
  /**
   * `allow`, `ask` or `deny`.
   */
  action: string;
  reason?: string;
}
/**
 * A model the user can pick (`GET /api/models`): from the catalog, for the
 * providers that are configured or have a key.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ModelChoice".
 */
export interface ModelChoice {
  /**
   * `provider/model`.
   */
  id: string;
  provider: string;
  context_window: number;
  max_output: number;
  /**
   * US dollars per million input / output tokens.
   */
  input_price: number;
  output_price: number;
  reasoning: boolean;
}
/**
 * What a user sees before sharing: exactly the payload that would be sent.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharePreview".
 */
export interface SharePreview {
  payload: SharePayload;
  redactions: Redaction[];
  /**
   * The server it would go to (none configured: sharing needs one).
   */
  server?: string | null;
  /**
   * `disabled`, `ask` or `auto`.
   */
  mode: string;
  /**
   * The existing share of this session, when there is one.
   */
  existing?: ShareRecord | null;
  /**
   * Payload size in bytes as it would be sent.
   */
  bytes: number;
}
/**
 * What is uploaded: the session, its messages and (optionally) its diffs,
 * after redaction.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharePayload".
 */
export interface SharePayload {
  version: string;
  session: SharedSession;
  messages?: SharedMessage[];
  diffs?: SharedDiff[];
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedSession".
 */
export interface SharedSession {
  /**
   * The local session's id (so a re-share updates the same share).
   */
  id: string;
  title: string;
  /**
   * The project's directory name (never its full path).
   */
  project: string;
  /**
   * Milliseconds since the epoch.
   */
  created_at: number;
  updated_at?: number | null;
  model?: string | null;
  agent?: string | null;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedMessage".
 */
export interface SharedMessage {
  /**
   * The local message id (what the preview's exclusions name).
   */
  id: string;
  /**
   * `user` or `assistant`.
   */
  role: string;
  parts: SharedPart[];
  metadata?: SharedMessageMeta | null;
  created_at: number;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedMessageMeta".
 */
export interface SharedMessageMeta {
  model?: string | null;
  agent?: string | null;
  /**
   * Input + output tokens of the message's model call.
   */
  tokens?: number | null;
  duration_ms?: number | null;
}
/**
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "SharedDiff".
 */
export interface SharedDiff {
  file: string;
  /**
   * `added`, `modified`, `deleted` or `renamed`.
   */
  status: string;
  additions: number;
  deletions: number;
  /**
   * Unified diff of the file (empty for a binary file).
   */
  patch: string;
  binary?: boolean;
}
/**
 * One replacement made in the payload.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Redaction".
 */
export interface Redaction {
  /**
   * What was found: `anthropic-api-key`, `aws-secret`, `home-path`, `pattern:<n>`, ...
   */
  kind: string;
  place: RedactionPlace;
  /**
   * The text that now stands in the payload (`[REDACTED:anthropic-api-key]`, `~`).
   */
  replacement: string;
  /**
   * A masked hint of what was replaced (`sk-a…9f`), never the secret itself.
   */
  hint: string;
}
/**
 * A share this machine created ("My shares").
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ShareRecord".
 */
export interface ShareRecord {
  /**
   * The server's id of the share.
   */
  id: string;
  url: string;
  /**
   * The server's base URL.
   */
  server: string;
  /**
   * The local session, while it exists.
   */
  session_id?: string | null;
  session_title: string;
  created_at: number;
  updated_at: number;
  expires_at?: number | null;
  /**
   * The local session was deleted (the share can still be revoked).
   */
  session_deleted?: boolean;
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
 * An MCP server of a project: where it is defined, its state and tools.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "McpServerView".
 */
export interface McpServerView {
  name: string;
  /**
   * The config file or `.mcp.json` that defines it.
   */
  source: string;
  /**
   * `stdio: command args` or `http: url`.
   */
  transport: string;
  state: McpState;
  error?: string | null;
  /**
   * The server's own name and version.
   */
  server?: string | null;
  /**
   * Its tools' names (as the server names them).
   */
  tools?: string[];
  /**
   * The last lines it wrote to stderr.
   */
  stderr?: string[];
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
  name: string;
  /**
   * The config file listing it.
   */
  source: string;
  state: PluginState;
  version?: string | null;
  error?: string | null;
  tools?: string[];
  hooks?: string[];
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
   * The snapshot taken just before (the file as it was).
   */
  snapshot: string;
  /**
   * The session the discard was recorded in (undo brings it back).
   */
  session_id?: SessionId | null;
  /**
   * Without a session: the command that brings the hunk back.
   */
  restore_command?: string | null;
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
  id: string;
  /**
   * Relative to the session's directory.
   */
  file: string;
  /**
   * 1-based, in the file as it is in the work tree.
   */
  line: number;
  /**
   * The last line of the range (`line` for a single line).
   */
  end_line: number;
  text: string;
  /**
   * The lines it was written on have changed since (the comment is
   * kept, with the lines as they were).
   */
  outdated: boolean;
  /**
   * The lines as they were when the comment was written.
   */
  quote?: string[];
  created_at: number;
}
/**
 * A new review comment (`POST /api/sessions/{id}/review`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "NewReviewComment".
 */
export interface NewReviewComment {
  file: string;
  line: number;
  end_line?: number | null;
  text: string;
}
/**
 * The changes of a review scope.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ReviewDiff".
 */
export interface ReviewDiff {
  scope: ReviewScope;
  /**
   * What the changes are against (a commit, or a snapshot for the last
   * turn); empty when there is nothing to compare with.
   */
  base: string;
  files: FileDiff[];
}
/**
 * A commit made (`mia-code commit`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "CommitResult".
 */
export interface CommitResult {
  commit: string;
  branch: string;
  /**
   * Its first line.
   */
  summary: string;
  /**
   * What `git commit` printed (hooks included).
   */
  output: string;
}
/**
 * A drafted message (commit message, or pull request title and body).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "Draft".
 */
export interface Draft {
  title: string;
  body?: string;
}
/**
 * A push made (`mia-code push`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PushResult".
 */
export interface PushResult {
  remote: string;
  branch: string;
  /**
   * The branch had no upstream and now tracks `remote/branch`.
   */
  upstream_set: boolean;
  /**
   * What git printed.
   */
  output: string;
}
/**
 * A pull request (GitHub) or merge request (GitLab).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PullRequestView".
 */
export interface PullRequestView {
  provider: ForgeKind;
  number: number;
  url: string;
  state: PrState;
  title: string;
  draft: boolean;
  head: string;
  base: string;
  review_decision?: ReviewDecision | null;
  checks?: ChecksView | null;
}
/**
 * The checks of a pull request's head commit.
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "ChecksView".
 */
export interface ChecksView {
  state: ChecksState;
  total: number;
  passed: number;
  failed: number;
  pending: number;
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
   * `None`: a detached `HEAD`.
   */
  branch?: string | null;
  /**
   * `remote/branch` it tracks.
   */
  upstream?: string | null;
  /**
   * Commits it has that its upstream lacks, and the reverse.
   */
  ahead: number;
  behind: number;
  /**
   * Files with staged changes, and with unstaged ones (untracked included).
   */
  staged: number;
  unstaged: number;
  remotes: string[];
  /**
   * The pull request recorded for the branch (`pr create`), if any.
   */
  pull_request?: PullRequestLink | null;
}
/**
 * A pull request as recorded for a branch (no network needed to show it).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "PullRequestLink".
 */
export interface PullRequestLink {
  provider: ForgeKind;
  number: number;
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
  /**
   * Without the slash: `review`, `git:commit`.
   */
  name: string;
  description?: string | null;
  argument_hint?: string | null;
  source: CommandSourceView;
  path: string;
  /**
   * Why the file is not used (a YAML error, an unknown key, a built-in's
   * name, a name taken by a file that wins); `null` when it is usable.
   */
  error?: string | null;
}
/**
 * A project's workspace trust and its hooks (`GET /api/trust`).
 *
 * This interface was referenced by `Protocol`'s JSON-Schema
 * via the `definition` "TrustView".
 */
export interface TrustView {
  directory: string;
  trusted: boolean;
  /**
   * Hook commands the project's config defines.
   */
  project_hooks: number;
  /**
   * The project's hooks as they are now are the set approved when the
   * workspace was trusted (they run); false when there are none.
   */
  hooks_approved: boolean;
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
