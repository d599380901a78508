import { describe, expect, it } from "vitest";
import type { Event, HookRun, Message, SessionDetail } from "../protocol/generated";
import { applyEvent, emptySession, reloaded, type SessionState } from "./session";

const S = "sess-h";

function run(events: Event[], start: SessionState = emptySession(S)): SessionState {
  return events.reduce((s, e) => applyEvent(s, e, 1000), start);
}

const pre: HookRun = { event: "PreToolUse", command: "./check.sh", exit_code: 0, duration_ms: 12, outcome: null };
const post: HookRun = { event: "PostToolUse", command: "./fmt.sh", exit_code: 0, duration_ms: 30, outcome: null };
const blocked: HookRun = {
  event: "PreToolUse",
  command: "./guard.sh",
  exit_code: 2,
  duration_ms: 8,
  outcome: "block",
  message: "rm -rf is not allowed",
};

const hook = (r: HookRun, call_id?: string, session_id = S): Event => ({ type: "hook_ran", session_id, run: r, ...(call_id ? { call_id } : {}) });

function stored(id: string, parts: Message["parts"][number]["content"][]): Message {
  return {
    id,
    session_id: S,
    role: "assistant",
    type: "normal",
    created_at: 1,
    metadata: {},
    parts: parts.map((content, index) => ({ id: `${id}-p${index}`, message_id: id, index, created_at: 1, content })),
  };
}

const step: Event = { type: "step_started", session_id: S, message_id: "m1", agent: "build", model: "mock/m" };
const call = (id: string): Event => ({ type: "tool_call", session_id: S, message_id: "m1", call_id: id, tool: "bash", input: { command: "ls" } });
const result = (id: string): Event => ({
  type: "tool_result",
  session_id: S,
  message_id: "m1",
  call_id: id,
  tool: "bash",
  output: "ok",
  is_error: false,
  duration_ms: 40,
});

describe("hook runs", () => {
  it("a run with a call id goes on that call's card before its result, in order", () => {
    const s = run([step, call("c1"), call("c2"), hook(pre, "c2"), hook(blocked, "c1"), hook(post, "c2"), result("c2")]);
    expect(s.tools.c1!.hooks).toEqual([blocked]);
    expect(s.tools.c2!.hooks).toEqual([pre, post]);
    expect(s.tools.c2!.output).toBe("ok");
    expect(s.hookNotes).toEqual([]);
  });

  it("a run heard before its call has a card waits on it", () => {
    const s = run([step, hook(pre, "c1"), call("c1")]);
    expect(s.tools.c1).toMatchObject({ tool: "bash", messageId: "m1", hooks: [pre] });
  });

  it("the stored result's list wins, without duplicates", () => {
    let s = run([step, call("c1"), hook(pre, "c1"), hook(post, "c1"), result("c1")]);
    const message = stored("m1", [
      { type: "tool_call", call_id: "c1", tool: "bash", input: { command: "ls" } },
      { type: "tool_result", call_id: "c1", tool: "bash", output: "ok", hooks: [pre, post] },
    ]);
    s = applyEvent(s, { type: "message_stored", message }, 1000);
    expect(s.tools.c1!.hooks).toEqual([pre, post]);
    // The same run heard again (a replayed event) is not added twice.
    s = applyEvent(s, hook(post, "c1"), 1000);
    expect(s.tools.c1!.hooks).toEqual([pre, post]);
    // What the store says replaces what was heard (it may say more, or less).
    const again = stored("m1", [{ type: "tool_result", call_id: "c1", tool: "bash", output: "ok", hooks: [blocked] }]);
    s = applyEvent(s, { type: "message_stored", message: again }, 1000);
    expect(s.tools.c1!.hooks).toEqual([blocked]);
  });

  it("a stored result without hooks keeps what was heard", () => {
    let s = run([step, call("c1"), hook(pre, "c1")]);
    const message = stored("m1", [{ type: "tool_result", call_id: "c1", tool: "bash", output: "ok" }]);
    s = applyEvent(s, { type: "message_stored", message }, 1000);
    expect(s.tools.c1!.hooks).toEqual([pre]);
  });

  it("a run of no call is a line after the row it arrived after; another session's is ignored", () => {
    const start: HookRun = { event: "SessionStart", command: "./hello.sh", exit_code: 0, duration_ms: 5, outcome: null };
    const stop: HookRun = { event: "Stop", command: "./done.sh", exit_code: 0, duration_ms: 3, outcome: "stop" };
    const s = run([hook(start), step, call("c1"), hook(stop), hook(stop, undefined, "other")]);
    expect(s.hookNotes).toEqual([
      { run: start, after: null },
      { run: stop, after: "m1" },
    ]);
    expect(Object.keys(s.tools)).toEqual(["c1"]);
  });

  it("a reload keeps the lines heard (they are not stored)", () => {
    const stop: HookRun = { event: "Stop", command: "./done.sh", exit_code: 0, duration_ms: 3, outcome: null };
    const s = run([step, hook(stop)]);
    const detail = { session: { id: S }, agent: "build", messages: [] } as unknown as SessionDetail;
    expect(reloaded(detail, s).hookNotes).toEqual([{ run: stop, after: "m1" }]);
  });
});
