import type {
  Event,
  FileChange,
  Message,
  Part,
  PartContent,
  PermissionRequest,
  ResultContent,
  SandboxNote,
  ContextUsage,
  Session,
  SessionDetail,
  TokenUsage,
  TurnEnd,
} from "../protocol/generated";
import { asStatus, subagentsOf, type SubagentInfo } from "../lib/subagent";

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
}

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
  };
}

/** A session as loaded from GET /api/sessions/{id} (on open, reconnect and `lagged`). */
export function fromDetail(detail: SessionDetail): SessionState {
  let tools: Record<string, ToolInfo> = {};
  for (const m of detail.messages) tools = mergeParts(tools, m, false);
  return {
    ...emptySession(detail.session.id),
    session: detail.session,
    agent: detail.agent,
    queuedAgent: detail.queued_agent ?? null,
    running: detail.running ?? false,
    messages: detail.messages,
    tools,
    permissions: detail.pending_permissions ?? [],
    subagents: subagentsOf(detail.messages),
    context: detail.context ?? null,
  };
}

/**
 * A reload while a turn runs (reconnect, `lagged`) keeps the drafts being streamed that the
 * stored messages do not contain yet, and what the events taught about tool calls.
 */
export function reloaded(detail: SessionDetail, previous: SessionState): SessionState {
  const loaded = fromDetail(detail);
  if (previous.id !== loaded.id) return loaded;
  // A failure notice stays until dismissed (a reload after it must not hide what to do); a
  // running compaction's details stay while the session still says it is compacting.
  const was = previous.compaction;
  const compaction =
    was?.state === "failed" || (was?.state === "running" && loaded.session?.status === "compacting") ? was : null;
  // What the events said about delegations stays (a running one has no stored result yet); a
  // stored result says how it ended. A subagent's ask (not in the parent's pending list) stays
  // while the session runs.
  const subagents = mergeSubagents(previous.subagents, loaded.subagents);
  const foreign = loaded.running
    ? previous.permissions.filter((p) => p.session_id !== loaded.id && !loaded.permissions.some((x) => x.id === p.id))
    : [];
  const next = {
    ...loaded,
    replies: previous.replies,
    compaction,
    subagents,
    permissions: foreign.length ? [...loaded.permissions, ...foreign] : loaded.permissions,
  };
  if (!next.running) return next;
  const stored = new Set(next.messages.map((m) => m.id));
  const live = previous.live.filter((m) => !stored.has(m.id));
  const tools = { ...previous.tools };
  for (const [id, t] of Object.entries(next.tools)) tools[id] = { ...tools[id], ...t };
  return { ...next, live, tools };
}

/** Collects tool calls, results and snapshots of a message's parts into the tool map. */
function mergeParts(tools: Record<string, ToolInfo>, m: Message, copy: boolean): Record<string, ToolInfo> {
  let out = tools;
  const touch = (callId: string, fallback: () => ToolInfo, patch: Partial<ToolInfo>) => {
    if (copy && out === tools) out = { ...tools };
    const prev = out[callId] ?? fallback();
    out[callId] = { ...prev, ...patch };
  };
  for (const p of m.parts) {
    const c = p.content;
    if (c.type === "tool_call") {
      touch(c.call_id, () => ({ callId: c.call_id, tool: c.tool, input: c.input, messageId: m.id }), {
        tool: c.tool,
        input: c.input,
        messageId: m.id,
      });
    } else if (c.type === "tool_result") {
      const patch: Partial<ToolInfo> = { output: c.output, isError: c.is_error ?? false };
      if (c.duration_ms != null) patch.durationMs = c.duration_ms;
      if (c.sandbox) patch.sandbox = c.sandbox;
      // The stored answer to the call's permission ask (or the rule that denied it).
      if (c.permission) {
        const d: Decision = { decision: c.permission.decision, by: c.permission.by, reason: c.permission.reason ?? "" };
        if (c.permission.reply) d.reply = c.permission.reply;
        patch.decision = d;
      }
      touch(c.call_id, () => ({ callId: c.call_id, tool: c.tool, input: null, messageId: m.id }), patch);
    } else if (c.type === "snapshot" && c.tool_call_id) {
      const id = c.tool_call_id;
      const patch: Partial<ToolInfo> = { snapshotUnavailable: c.unavailable ?? null };
      if (c.files) patch.files = c.files;
      touch(id, () => ({ callId: id, tool: "", input: null, messageId: m.id }), patch);
    } else if (c.type === "tool_content") {
      touch(c.call_id, () => ({ callId: c.call_id, tool: "", input: null, messageId: m.id }), { content: c.items });
    }
  }
  return out;
}

function draft(id: string, sessionId: string, now: number, agent?: string, model?: string): Message {
  const metadata: Message["metadata"] = {};
  if (agent) metadata.agent = agent;
  if (model) metadata.model = model;
  return { id, session_id: sessionId, role: "assistant", type: "normal", created_at: now, metadata, parts: [] };
}

function part(messageId: string, index: number, content: PartContent, now: number): Part {
  return { id: `${messageId}:${index}`, message_id: messageId, index, created_at: now, content };
}

/** Appends streamed text to the last part of the same kind, or starts a new part. */
function appendDelta(m: Message, kind: "text" | "reasoning", text: string, now: number): Message {
  const last = m.parts[m.parts.length - 1];
  const parts = m.parts.slice();
  if (last && last.content.type === kind) {
    parts[parts.length - 1] = { ...last, content: { ...last.content, text: last.content.text + text } };
  } else {
    parts.push(part(m.id, parts.length, { type: kind, text }, now));
  }
  return { ...m, parts };
}

function setTool(s: SessionState, callId: string, patch: Partial<ToolInfo>, base: () => ToolInfo): SessionState {
  const prev = s.tools[callId] ?? base();
  return { ...s, tools: { ...s.tools, [callId]: { ...prev, ...patch } } };
}

/** Which tool card a resolved permission belongs to. */
function cardForPermission(s: SessionState, requestId: string, request?: PermissionRequest): string | null {
  if (s.tools[requestId]) return requestId;
  const linked = request?.call_id;
  if (linked && s.tools[linked]) return linked;
  if (!request) return null;
  // No link: the latest call of that tool that has no result and no decision yet.
  const candidates = Object.values(s.tools).filter((t) => t.tool === request.tool && t.output === undefined && !t.decision);
  return candidates.length ? candidates[candidates.length - 1]!.callId : null;
}

/**
 * The pure reducer: one Event into one session's state. Deltas copy only the
 * streaming draft (never the stored message list).
 */
export function applyEvent(s: SessionState, e: Event, now: number = Date.now()): SessionState {
  switch (e.type) {
    case "session_updated": {
      if (e.session.id !== s.id) return s;
      // Back to busy/idle: a compaction this window thought was running is over.
      const over = e.session.status !== "compacting" && s.compaction?.state === "running";
      return over ? { ...s, session: e.session, compaction: null } : { ...s, session: e.session };
    }
    case "compaction_started":
      if (e.session_id !== s.id) return s;
      return { ...s, compaction: { state: "running", trigger: e.trigger, tokensBefore: e.tokens_before } };
    case "compaction_finished":
      if (e.session_id !== s.id) return s;
      return s.compaction === null ? s : { ...s, compaction: null };
    case "compaction_failed":
      if (e.session_id !== s.id) return s;
      return { ...s, compaction: { state: "failed", trigger: e.trigger, message: e.message } };
    case "step_started": {
      if (e.session_id !== s.id) return s;
      const exists = s.live.some((m) => m.id === e.message_id);
      const live = exists ? s.live : [...s.live, draft(e.message_id, s.id, now, e.agent, e.model)];
      return { ...s, running: true, retrying: null, error: null, live };
    }
    case "text_delta":
    case "reasoning_delta": {
      if (e.session_id !== s.id) return s;
      const kind = e.type === "text_delta" ? "text" : "reasoning";
      const i = s.live.findIndex((m) => m.id === e.message_id);
      const live = s.live.slice();
      if (i >= 0) live[i] = appendDelta(live[i]!, kind, e.text, now);
      else if (s.messages.some((m) => m.id === e.message_id))
        return s; // already stored: the stored form wins
      else live.push(appendDelta(draft(e.message_id, s.id, now), kind, e.text, now));
      return { ...s, live, running: true };
    }
    case "tool_call": {
      if (e.session_id !== s.id) return s;
      let next = setTool(s, e.call_id, { tool: e.tool, input: e.input, messageId: e.message_id, startedAt: now }, () => ({
        callId: e.call_id,
        tool: e.tool,
        input: e.input,
        messageId: e.message_id,
      }));
      next = ensureToolPart(next, e.message_id, e.call_id, e.tool, e.input, now);
      return next;
    }
    case "context_usage": {
      if (e.session_id !== s.id) return s;
      return { ...s, context: e.usage };
    }
    case "tool_output": {
      if (e.session_id !== s.id) return s;
      const prev = s.tools[e.call_id];
      // Late output of a call that has its result already changes nothing.
      if (prev?.output !== undefined) return s;
      let live = (prev?.live ?? "") + e.text;
      if (live.length > LIVE_KEEP_CHARS) live = live.slice(live.length - LIVE_KEEP_CHARS);
      return setTool(s, e.call_id, { live }, () => ({
        callId: e.call_id,
        tool: "",
        input: null,
        messageId: e.message_id,
      }));
    }
    case "tool_result": {
      if (e.session_id !== s.id) return s;
      const patch: Partial<ToolInfo> = { output: e.output, isError: e.is_error, durationMs: e.duration_ms, live: undefined };
      if (e.sandbox) patch.sandbox = e.sandbox;
      return setTool(s, e.call_id, patch, () => ({
        callId: e.call_id,
        tool: e.tool,
        input: null,
        messageId: e.message_id,
      }));
    }
    case "tool_content": {
      if (e.session_id !== s.id) return s;
      return setTool(s, e.call_id, { content: e.items }, () => ({
        callId: e.call_id,
        tool: "",
        input: null,
        messageId: e.message_id,
      }));
    }
    case "snapshot": {
      if (e.session_id !== s.id) return s;
      return setTool(s, e.call_id, { files: e.files, snapshotUnavailable: e.unavailable ?? null }, () => ({
        callId: e.call_id,
        tool: "",
        input: null,
        messageId: "",
      }));
    }
    case "permission_asked": {
      // A subagent's ask shows in the session the delegation started from too.
      const mine = e.request.session_id === s.id || e.request.root_session_id === s.id;
      if (!mine || s.permissions.some((p) => p.id === e.request.id)) return s;
      return { ...s, permissions: [...s.permissions, e.request] };
    }
    case "permission_resolved": {
      if (e.session_id !== s.id) {
        // A subagent's ask shown here was answered (here or in its own session).
        if (!s.permissions.some((p) => p.id === e.request_id)) return s;
        return { ...s, permissions: s.permissions.filter((p) => p.id !== e.request_id) };
      }
      const request = s.permissions.find((p) => p.id === e.request_id);
      const permissions = s.permissions.filter((p) => p.id !== e.request_id);
      const card = cardForPermission(s, e.request_id, request);
      const next = { ...s, permissions };
      if (!card) return next;
      const decision: Decision = { decision: e.decision, by: e.by, reason: e.reason };
      const reply = s.replies[e.request_id];
      if (reply && e.by === "user") decision.reply = reply;
      return setTool(next, card, { decision }, () => s.tools[card]!);
    }
    case "message_stored": {
      const m = e.message;
      if (m.session_id !== s.id) return s;
      const live = s.live.filter((d) => d.id !== m.id);
      const at = s.messages.findIndex((x) => x.id === m.id);
      let messages: Message[];
      if (at >= 0) {
        messages = s.messages.slice();
        messages[at] = m;
      } else {
        messages = [...s.messages, m];
      }
      const stored = subagentsOf([m]);
      const subagents = Object.keys(stored).length ? mergeSubagents(s.subagents, stored) : s.subagents;
      return { ...s, live, messages, tools: mergeParts(s.tools, m, true), subagents };
    }
    case "agent_switched": {
      if (e.session_id !== s.id) return s;
      return e.queued ? { ...s, queuedAgent: e.to } : { ...s, agent: e.to, queuedAgent: null };
    }
    case "subagent_queued": {
      if (e.session_id !== s.id) return s;
      const prev = s.subagents[e.call_id];
      const info: SubagentInfo = { ...prev, callId: e.call_id, agent: e.agent, status: "queued" };
      return { ...s, subagents: { ...s.subagents, [e.call_id]: info } };
    }
    case "subagent_started": {
      if (e.session_id !== s.id) return s;
      const prev = s.subagents[e.call_id];
      const info: SubagentInfo = {
        ...prev,
        callId: e.call_id,
        agent: e.agent,
        status: "running",
        childId: e.child_session_id,
        description: e.description,
      };
      return { ...s, subagents: { ...s.subagents, [e.call_id]: info } };
    }
    case "subagent_finished": {
      if (e.session_id !== s.id) return s;
      const prev = s.subagents[e.call_id];
      const info: SubagentInfo = {
        ...prev,
        callId: e.call_id,
        agent: e.agent,
        status: asStatus(e.status),
        childId: e.child_session_id,
        durationMs: e.duration_ms,
        steps: e.steps,
        toolCalls: e.tool_calls,
        costUsd: e.cost_usd ?? null,
      };
      // Its asks are over (answered, or the child stopped).
      const permissions = s.permissions.filter((p) => p.session_id !== e.child_session_id);
      return {
        ...s,
        subagents: { ...s.subagents, [e.call_id]: info },
        permissions: permissions.length === s.permissions.length ? s.permissions : permissions,
      };
    }
    case "retrying":
      if (e.session_id !== s.id) return s;
      return { ...s, retrying: { attempt: e.attempt, delayMs: e.delay_ms, reason: e.reason } };
    case "error":
      if (e.session_id && e.session_id !== s.id) return s;
      return { ...s, error: { kind: e.kind, message: e.message, retryable: e.retryable }, retrying: null };
    case "turn_finished": {
      if (e.session_id !== s.id) return s;
      // Drafts that were never stored (cut off) stay visible as they are.
      const messages = s.live.length ? [...s.messages, ...s.live] : s.messages;
      return {
        ...s,
        running: false,
        retrying: null,
        messages,
        live: [],
        agent: s.queuedAgent ?? s.agent,
        queuedAgent: null,
        permissions: [],
        lastTurn: { usage: e.usage, costUsd: e.cost_usd ?? null, end: e.end, steps: e.steps },
        compaction: s.compaction?.state === "running" ? null : s.compaction,
      };
    }
    default:
      return s;
  }
}

/** Stored results win for how a delegation ended; what events knew (the description) stays. */
function mergeSubagents(
  prev: Record<string, SubagentInfo>,
  stored: Record<string, SubagentInfo>,
): Record<string, SubagentInfo> {
  const out = { ...prev };
  for (const [id, info] of Object.entries(stored)) {
    const was = prev[id];
    out[id] = { ...was, ...info, description: was?.description ?? info.description, costUsd: was?.costUsd ?? info.costUsd };
  }
  return out;
}

/** Gives a message a tool_call part for a call it does not list yet (so its card has a place). */
function ensureToolPart(
  s: SessionState,
  messageId: string,
  callId: string,
  tool: string,
  input: unknown,
  now: number,
): SessionState {
  const has = (m: Message) => m.parts.some((p) => p.content.type === "tool_call" && p.content.call_id === callId);
  const add = (m: Message): Message => ({
    ...m,
    parts: [...m.parts, part(m.id, m.parts.length, { type: "tool_call", call_id: callId, tool, input }, now)],
  });
  const li = s.live.findIndex((m) => m.id === messageId);
  if (li >= 0) {
    if (has(s.live[li]!)) return s;
    const live = s.live.slice();
    live[li] = add(live[li]!);
    return { ...s, live };
  }
  const mi = s.messages.findIndex((m) => m.id === messageId);
  if (mi >= 0) {
    if (has(s.messages[mi]!)) return s;
    const messages = s.messages.slice();
    messages[mi] = add(messages[mi]!);
    return { ...s, messages };
  }
  return { ...s, live: [...s.live, add(draft(messageId, s.id, now))] };
}

/** A compaction is running: this window saw it start, or the session's status says so. */
export function isCompacting(s: SessionState): boolean {
  return s.compaction?.state === "running" || s.session?.status === "compacting";
}

/** The tool map of messages shown outside the session's list (a compaction's archive). */
export function toolsOf(messages: Message[]): Record<string, ToolInfo> {
  let tools: Record<string, ToolInfo> = {};
  for (const m of messages) tools = mergeParts(tools, m, false);
  return tools;
}

/** Sum of tokens and cost over the session's assistant messages. */
export function sessionTotals(messages: Message[]): { input: number; output: number; cost: number; priced: boolean } {
  let input = 0;
  let output = 0;
  let cost = 0;
  let priced = false;
  for (const m of messages) {
    const t = m.metadata.tokens;
    if (t) {
      input += t.input;
      output += t.output;
    }
    if (typeof m.metadata.cost_usd === "number") {
      cost += m.metadata.cost_usd;
      priced = true;
    }
  }
  return { input, output, cost, priced };
}

/** The text of the latest user message (what Retry and history use). */
export function userTexts(messages: Message[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role !== "user" || m.type !== "normal") continue;
    const text = m.parts.map((p) => (p.content.type === "text" && !p.content.synthetic ? p.content.text : "")).join("");
    if (text) out.push(text);
  }
  return out;
}
