//! Wire and domain types shared by every mia-code crate.
//!
//! This crate holds data only: no I/O, no async runtime. Everything here is
//! `serde`-serialisable and is what the store persists, the runtime emits and
//! the UI renders.

mod diff;
mod event;
mod ids;
mod message;
mod permission;
mod review;
mod session;
mod share;
mod view;
mod worktree;

pub use diff::{DiffLine, DiffStats, DiffStatus, FileDiff, Hunk, LineType};
pub use event::{
    CommandSegment, CompactionTrigger, Event, Op, PermissionReplyKind, PermissionRequest,
    RevertConflict, RevertSummary, SubagentStatus, TurnEnd,
};
pub use ids::{IdParseError, MessageId, PartId, SessionId, now_ms};
pub use message::{
    CONTENT_VERSION, FileChange, FileChangeKind, Message, MessageMetadata, MessageType,
    NetworkHost, NewMessage, Part, PartContent, PermissionNote, ResultContent, Role,
    SandboxBlocked, SandboxMechanism, SandboxModeView, SandboxNote, TokenUsage, UnconfinedReason,
};
pub use permission::{AuditRecord, PermissionAction, PermissionRule, ReplyOption, Resolution};
pub use review::{
    BranchStatus, ChecksState, ChecksView, CommitResult, Draft, ForgeKind, HunkList, HunkReverted,
    HunkView, NewReviewComment, PrState, PullRequestLink, PullRequestView, PushResult,
    ReviewComment, ReviewDecision, ReviewDiff, ReviewList, ReviewScope,
};
pub use session::{ForkInfo, Session, SessionStatus, SpawnInfo};
pub use share::{
    Redaction, RedactionPlace, SHARE_PAYLOAD_VERSION, SharePayload, SharePreview, ShareRecord,
    ShareRequest, SharedDiff, SharedMessage, SharedMessageMeta, SharedPart, SharedSession,
};
pub use view::{
    AgentInfo, AgentModeView, AgentProposal, ApprovalView, CommandInfo, CommandList,
    CommandSourceView, CompactResult, ContextUsage, CostLine, CostView, DiffScope, DiffView,
    ForkFiles, ForkResult, ForkTreeNode, HistoryAction, HookRun, LeftAlone, McpServerView,
    McpState, ModelChoice, PermissionsView, PluginState, PluginView, PreviewAction, PreviewFile,
    ProjectSummary, ProposedRule, ProviderInfo, RevertPreview, RuleView, SandboxEffect,
    SandboxView, ServerInfo, SessionChanges, SessionCompare, SessionDetail, SessionSummary,
    SettingsUpdate, SettingsView, StepKindView, TimelineStep, TrustUpdate, TrustView,
};
pub use worktree::{
    AttemptFile, AttemptFileStatus, AttemptStats, AttemptUsage, AttemptView, BetweenStatus,
    BetweenView, ComparisonView, PromotedView, ScriptView, TrashOperation, TrashView,
    WorktreeCreated, WorktreeFileDiff, WorktreeSessionRef, WorktreeState, WorktreeView,
};

/// Every type a front end sends or receives, as one JSON Schema document
/// (`schema/protocol.schema.json`; the UI's TypeScript types are generated
/// from it by `npm run gen:types` in `ui/`).
pub fn protocol_schema() -> serde_json::Value {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Protocol {
        op: Op,
        event: Event,
        session: Session,
        session_summary: SessionSummary,
        session_detail: SessionDetail,
        project_summary: ProjectSummary,
        message: Message,
        permission_request: PermissionRequest,
        permission_reply_kind: PermissionReplyKind,
        revert_summary: RevertSummary,
        timeline_step: TimelineStep,
        history_action: HistoryAction,
        revert_preview: RevertPreview,
        diff_scope: DiffScope,
        diff_view: DiffView,
        agent_info: AgentInfo,
        settings_view: SettingsView,
        settings_update: SettingsUpdate,
        permissions_view: PermissionsView,
        approval_view: ApprovalView,
        worktree_view: WorktreeView,
        worktree_created: WorktreeCreated,
        comparison_view: ComparisonView,
        worktree_file_diff: WorktreeFileDiff,
        promoted_view: PromotedView,
        server_info: ServerInfo,
        fork_result: ForkResult,
        fork_tree_node: ForkTreeNode,
        session_compare: SessionCompare,
        compact_result: CompactResult,
        cost_view: CostView,
        agent_proposal: AgentProposal,
        model_choice: ModelChoice,
        share_preview: SharePreview,
        share_request: ShareRequest,
        share_record: ShareRecord,
        mcp_server_view: McpServerView,
        plugin_view: PluginView,
        hunk_list: HunkList,
        hunk_reverted: HunkReverted,
        review_list: ReviewList,
        new_review_comment: NewReviewComment,
        review_diff: ReviewDiff,
        commit_result: CommitResult,
        draft: Draft,
        push_result: PushResult,
        pull_request_view: PullRequestView,
        branch_status: BranchStatus,
        command_list: CommandList,
        hook_run: HookRun,
        trust_view: TrustView,
        trust_update: TrustUpdate,
    }
    serde_json::to_value(schemars::schema_for!(Protocol)).unwrap_or_default()
}
