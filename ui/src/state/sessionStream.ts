import type { Event } from "../protocol/generated";
import { appendDelta, draft, ensureToolPart, setTool } from "./sessionParts";
import { LIVE_KEEP_CHARS, type SessionState, type ToolInfo } from "./sessionTypes";

/** The events of a turn as it streams: drafts and their text, tool calls and what they return. */
export type StreamEvent = Extract<
  Event,
  {
    type:
      | "step_started"
      | "text_delta"
      | "reasoning_delta"
      | "tool_call"
      | "context_usage"
      | "tool_output"
      | "tool_result"
      | "tool_content"
      | "snapshot";
  }
>;

/** A streamed event into the session's state. Deltas copy only the streaming draft (never the stored message list). */
export function applyStreamEvent(s: SessionState, e: StreamEvent, now: number): SessionState {
  switch (e.type) {
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
  }
}
