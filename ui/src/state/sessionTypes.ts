import type {
  ContextUsage,
  FileChange,
  HookRun,
  Message,
  PermissionRequest,
  ResultContent,
  SandboxNote,
  Session,
  TokenUsage,
  TurnEnd,
} from "../protocol/generated";
import type { SubagentInfo } from "../lib/subagent";

/** What the UI knows about one tool call, gathered from events and stored parts. */
export interface ToolInfo {
  callId: string;
  tool: string;
  input: unknown;
  messageId: string;
  startedAt?: number;
  output?: string;
  isError?: boolean;
  durationMs?: number;
  decision?: Decision;
  files?: FileChange[];
  snapshotUnavailable?: string | null;
  /** Shell commands: how the OS sandbox confined it. */
  sandbox?: SandboxNote;
  /** Output of the running call as it comes (cleared by its result, which has the whole output). */
  live?: string;
  /** What the tool returned besides text (an MCP server's images, resource links, resources). */
  content?: ResultContent[];
  /**
   * The hooks that ran for the call (`PreToolUse`, `PostToolUse`): as they ran (`hook_ran`), then
   * as its stored result lists them (which wins).
   */
  hooks?: HookRun[];
}

/**
 * A hook run of no tool call (`Stop`, `UserPromptSubmit`, `SessionStart`, ...), heard live: shown
 * as a line in the transcript where it arrived (after the row `after`; null: before the first).
 * Not stored: a session loaded again has none.
 */
export interface HookNote {
  run: HookRun;
  after: string | null;
}

/** How many session hook lines a session keeps (the latest). */
export const HOOK_NOTES_KEEP = 100;

/** Live output kept per running call: its tail, so a chatty command cannot grow the page without bound. */
export const LIVE_KEEP_CHARS = 64 * 1024;

export interface Decision {
  decision: string;
  by: string;
  reason: string;
  /** The reply this window sent (`once`, `session`, `project`, ...), when it answered. */
  reply?: string;
}

export interface SessionError {
  kind: string;
  message: string;
  retryable: boolean;
}

export interface SessionState {
  id: string;
  session: Session | null;
  /** The primary agent the next message goes to. */
  agent: string;
  /** A switch waiting for the running turn to end. */
  queuedAgent: string | null;
  running: boolean;
  /** Stored messages, in order. Not copied by deltas. */
  messages: Message[];
  /** Assistant drafts being streamed (replaced by message_stored). */
  live: Message[];
  tools: Record<string, ToolInfo>;
  permissions: PermissionRequest[];
  error: SessionError | null;
  retrying: { attempt: number; delayMs: number; reason: string } | null;
  lastTurn: { usage: TokenUsage; costUsd: number | null; end: TurnEnd; steps: number } | null;
  /** Replies sent from this window, by request id (to say "allowed once" rather than "allowed"). */
  replies: Record<string, string>;
  /** A compaction running (compaction_started, or /compact sent) or the last one that failed. */
  compaction: CompactionState | null;
  /** Delegations (`task` calls) by call id: their subagent's session and how it went. */
  subagents: Record<string, SubagentInfo>;
  /** How full the model's context is (the runtime's estimate of the next request). */
  context: ContextUsage | null;
  /** Hook runs of no tool call heard live, in order. */
  hookNotes: HookNote[];
}

export type CompactionState =
  | { state: "running"; trigger: string; tokensBefore?: number }
  | { state: "failed"; trigger: string; message: string };

export function emptySession(id: string): SessionState {
  return {
    id,
    session: null,
    agent: "build",
    queuedAgent: null,
    running: false,
    messages: [],
    live: [],
    tools: {},
    permissions: [],
    error: null,
    retrying: null,
    lastTurn: null,
    context: null,
    replies: {},
    compaction: null,
    subagents: {},
    hookNotes: [],
  };
}
