import type { Event, Message } from "../protocol/generated";
import { subagentsOf } from "../lib/subagent";
import { mergeParts, mergeSubagents } from "./sessionParts";
import type { SessionState } from "./sessionTypes";

/**
 * The session itself and its turns: its record, compactions, stored messages, the agent
 * switched, retries, errors, the turn's end.
 */
export type LifecycleEvent = Extract<
  Event,
  {
    type:
      | "session_updated"
      | "compaction_started"
      | "compaction_finished"
      | "compaction_failed"
      | "message_stored"
      | "agent_switched"
      | "retrying"
      | "error"
      | "turn_finished";
  }
>;

/** A lifecycle event into the session's state. */
export function applyLifecycleEvent(s: SessionState, e: LifecycleEvent): SessionState {
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
  }
}
