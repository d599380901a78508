import type { Event } from "../protocol/generated";
import { asStatus, type SubagentInfo } from "../lib/subagent";
import { cardForPermission, setTool } from "./sessionParts";
import type { Decision, SessionState } from "./sessionTypes";

/** Permission asks (this session's and its subagents') and delegations to subagents. */
export type AskEvent = Extract<
  Event,
  { type: "permission_asked" | "permission_resolved" | "subagent_queued" | "subagent_started" | "subagent_finished" }
>;

/** An ask or a delegation's progress into the session's state. */
export function applyAskEvent(s: SessionState, e: AskEvent): SessionState {
  switch (e.type) {
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
  }
}
