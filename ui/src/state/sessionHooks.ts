import type { Event, HookRun } from "../protocol/generated";
import { setTool } from "./sessionParts";
import { HOOK_NOTES_KEEP, type SessionState } from "./sessionTypes";

export type HookEvent = Extract<Event, { type: "hook_ran" }>;

const sameRun = (a: HookRun, b: HookRun) =>
  a.event === b.event &&
  a.command === b.command &&
  (a.exit_code ?? null) === (b.exit_code ?? null) &&
  a.duration_ms === b.duration_ms &&
  (a.outcome ?? null) === (b.outcome ?? null) &&
  (a.message ?? "") === (b.message ?? "");

/**
 * A hook run into the session's state: one of a tool call goes on its card (before the result
 * comes; the stored result's list replaces these, see mergeParts), once; one of no call
 * (`Stop`, `UserPromptSubmit`, ...) is a line after the transcript's last row.
 */
export function applyHookEvent(s: SessionState, e: HookEvent): SessionState {
  if (e.session_id !== s.id) return s;
  const callId = e.call_id;
  if (callId) {
    const hooks = s.tools[callId]?.hooks ?? [];
    // Already there (the stored result listed it, or the event came twice).
    if (hooks.some((h) => sameRun(h, e.run))) return s;
    return setTool(s, callId, { hooks: [...hooks, e.run] }, () => ({ callId, tool: "", input: null, messageId: "" }));
  }
  const last = s.live.at(-1) ?? s.messages.at(-1);
  const notes = [...s.hookNotes, { run: e.run, after: last?.id ?? null }];
  return { ...s, hookNotes: notes.length > HOOK_NOTES_KEEP ? notes.slice(-HOOK_NOTES_KEEP) : notes };
}
