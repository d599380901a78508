import type { Message, Part, PartContent, PermissionRequest } from "../protocol/generated";
import type { SubagentInfo } from "../lib/subagent";
import type { Decision, SessionState, ToolInfo } from "./sessionTypes";

// The pieces the reducer builds a session's state with: drafts and their parts, the tool map
// (from events and from stored parts), delegations merged with what is stored.

/** Collects tool calls, results and snapshots of a message's parts into the tool map. */
export function mergeParts(tools: Record<string, ToolInfo>, m: Message, copy: boolean): Record<string, ToolInfo> {
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
      // The hooks that ran for it, as stored: they replace what was heard live.
      if (c.hooks) patch.hooks = c.hooks;
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

/** An assistant draft being streamed (a step started, or its first delta came). */
export function draft(id: string, sessionId: string, now: number, agent?: string, model?: string): Message {
  const metadata: Message["metadata"] = {};
  if (agent) metadata.agent = agent;
  if (model) metadata.model = model;
  return { id, session_id: sessionId, role: "assistant", type: "normal", created_at: now, metadata, parts: [] };
}

function part(messageId: string, index: number, content: PartContent, now: number): Part {
  return { id: `${messageId}:${index}`, message_id: messageId, index, created_at: now, content };
}

/** Appends streamed text to the last part of the same kind, or starts a new part. */
export function appendDelta(m: Message, kind: "text" | "reasoning", text: string, now: number): Message {
  const last = m.parts[m.parts.length - 1];
  const parts = m.parts.slice();
  if (last && last.content.type === kind) {
    parts[parts.length - 1] = { ...last, content: { ...last.content, text: last.content.text + text } };
  } else {
    parts.push(part(m.id, parts.length, { type: kind, text }, now));
  }
  return { ...m, parts };
}

export function setTool(s: SessionState, callId: string, patch: Partial<ToolInfo>, base: () => ToolInfo): SessionState {
  const prev = s.tools[callId] ?? base();
  return { ...s, tools: { ...s.tools, [callId]: { ...prev, ...patch } } };
}

/** Which tool card a resolved permission belongs to. */
export function cardForPermission(s: SessionState, requestId: string, request?: PermissionRequest): string | null {
  if (s.tools[requestId]) return requestId;
  const linked = request?.call_id;
  if (linked && s.tools[linked]) return linked;
  if (!request) return null;
  // No link: the latest call of that tool that has no result and no decision yet.
  const candidates = Object.values(s.tools).filter((t) => t.tool === request.tool && t.output === undefined && !t.decision);
  return candidates.length ? candidates[candidates.length - 1]!.callId : null;
}

/** Stored results win for how a delegation ended; what events knew (the description) stays. */
export function mergeSubagents(
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
export function ensureToolPart(
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
