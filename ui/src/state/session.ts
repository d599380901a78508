import type { Event, SessionDetail } from "../protocol/generated";
import { subagentsOf } from "../lib/subagent";
import { applyAskEvent } from "./sessionAsks";
import { applyHookEvent } from "./sessionHooks";
import { applyLifecycleEvent } from "./sessionLifecycle";
import { mergeParts, mergeSubagents } from "./sessionParts";
import { applyStreamEvent } from "./sessionStream";
import { emptySession, type SessionState, type ToolInfo } from "./sessionTypes";

// A session's state and the pure reducer of Events into it. The pieces: its types
// (sessionTypes), what the reducer builds with (sessionParts), one reducer per kind of event
// (sessionStream, sessionAsks, sessionLifecycle) and what views read (sessionSelectors).

export * from "./sessionTypes";
export * from "./sessionSelectors";

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
    // (not stored: what this window heard)
    hookNotes: previous.hookNotes,
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

/**
 * The pure reducer: one Event into one session's state. Deltas copy only the
 * streaming draft (never the stored message list).
 */
export function applyEvent(s: SessionState, e: Event, now: number = Date.now()): SessionState {
  switch (e.type) {
    case "step_started":
    case "text_delta":
    case "reasoning_delta":
    case "tool_call":
    case "context_usage":
    case "tool_output":
    case "tool_result":
    case "tool_content":
    case "snapshot":
      return applyStreamEvent(s, e, now);
    case "permission_asked":
    case "permission_resolved":
    case "subagent_queued":
    case "subagent_started":
    case "subagent_finished":
      return applyAskEvent(s, e);
    case "session_updated":
    case "compaction_started":
    case "compaction_finished":
    case "compaction_failed":
    case "message_stored":
    case "agent_switched":
    case "retrying":
    case "error":
    case "turn_finished":
      return applyLifecycleEvent(s, e);
    case "hook_ran":
      return applyHookEvent(s, e);
    default:
      return s;
  }
}
