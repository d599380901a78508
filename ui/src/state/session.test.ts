import { describe, expect, it, vi } from "vitest";
import type { Event, Message, PartContent, PermissionRequest, ResultContent, SandboxNote, SessionDetail } from "../protocol/generated";
import {
  applyEvent,
  emptySession,
  LIVE_KEEP_CHARS,
  fromDetail,
  isCompacting,
  reloaded,
  sessionTotals,
  toolsOf,
  userTexts,
  type SessionState,
} from "./session";
import { SessionStore, STREAM_FRAME_MS } from "./store";

const S = "sess-1";

function run(events: Event[], start: SessionState = emptySession(S)): SessionState {
  return events.reduce((s, e) => applyEvent(s, e, 1000), start);
}

function msg(
  id: string,
  role: Message["role"],
  parts: Message["parts"][number]["content"][],
  extra: Partial<Message> = {},
): Message {
  return {
    id,
    session_id: S,
    role,
    type: "normal",
    created_at: 1,
    metadata: {},
    parts: parts.map((content, index) => ({ id: `${id}-p${index}`, message_id: id, index, created_at: 1, content })),
    ...extra,
  };
}

function request(id: string, extra: Partial<PermissionRequest> = {}): PermissionRequest {
  return {
    id,
    session_id: S,
    agent: "build",
    tool: "write",
    permission: "edit",
    target: "a.txt",
    reason: "r",
    input: {},
    options: ["once", "deny"],
    ...extra,
  };
}

const started: Event = { type: "step_started", session_id: S, message_id: "m1", agent: "build", model: "mock/m" };

describe("applyEvent", () => {
  it("step_started creates a streaming assistant draft with agent and model", () => {
    const s = run([started]);
    expect(s.running).toBe(true);
    expect(s.live).toHaveLength(1);
    expect(s.live[0]).toMatchObject({ id: "m1", role: "assistant", metadata: { agent: "build", model: "mock/m" }, parts: [] });
  });

  it("text and reasoning deltas append to the draft, not to the stored list", () => {
    const base = run([{ type: "message_stored", message: msg("u1", "user", [{ type: "text", text: "hi" }]) }, started]);
    const s = run(
      [
        { type: "reasoning_delta", session_id: S, message_id: "m1", text: "think " },
        { type: "reasoning_delta", session_id: S, message_id: "m1", text: "more" },
        { type: "text_delta", session_id: S, message_id: "m1", text: "Hel" },
        { type: "text_delta", session_id: S, message_id: "m1", text: "lo" },
      ],
      base,
    );
    expect(s.messages).toBe(base.messages);
    const parts = s.live[0]!.parts.map((p) => p.content);
    expect(parts).toEqual([
      { type: "reasoning", text: "think more" },
      { type: "text", text: "Hello" },
    ]);
  });

  it("a delta for an unknown message starts a draft for it", () => {
    const s = run([{ type: "text_delta", session_id: S, message_id: "mx", text: "orphan" }]);
    expect(s.live).toHaveLength(1);
    expect(s.live[0]!.id).toBe("mx");
    expect(s.live[0]!.parts[0]!.content).toEqual({ type: "text", text: "orphan" });
  });

  it("ignores events of another session", () => {
    const s0 = emptySession(S);
    const s = applyEvent(s0, { type: "text_delta", session_id: "other", message_id: "m", text: "x" });
    expect(s).toBe(s0);
  });

  it("message_stored replaces the streaming draft with the stored message (same id)", () => {
    const streamed = run([started, { type: "text_delta", session_id: S, message_id: "m1", text: "partial" }]);
    const stored = msg(
      "m1",
      "assistant",
      [
        { type: "text", text: "final" },
        { type: "commentary", perspective: "mia", text: "note" },
      ],
      {
        metadata: { tokens: { input: 10, output: 5 }, cost_usd: 0.01 },
      },
    );
    const s = applyEvent(streamed, { type: "message_stored", message: stored });
    expect(s.live).toEqual([]);
    expect(s.messages).toEqual([stored]);
    // And a second store of the same id replaces in place, a new id appends.
    const revert = msg("r1", "system", [{ type: "revert", removed: [], restored: ["a.txt"] }], { type: "revert" });
    const s2 = run(
      [
        { type: "message_stored", message: { ...stored, parts: [] } },
        { type: "message_stored", message: revert },
      ],
      s,
    );
    expect(s2.messages.map((m) => m.id)).toEqual(["m1", "r1"]);
    expect(s2.messages[0]!.parts).toEqual([]);
  });

  it("tool_call, permission, tool_result and snapshot fill one tool card", () => {
    const stored = msg("m1", "assistant", [{ type: "tool_call", call_id: "c1", tool: "write", input: { path: "a.txt" } }]);
    let s = run([started, { type: "message_stored", message: stored }]);
    s = applyEvent(
      s,
      { type: "tool_call", session_id: S, message_id: "m1", call_id: "c1", tool: "write", input: { path: "a.txt" } },
      5000,
    );
    expect(s.tools.c1).toMatchObject({ tool: "write", input: { path: "a.txt" }, startedAt: 5000, messageId: "m1" });
    // The stored message already lists the call: no duplicate part.
    expect(s.messages[0]!.parts).toHaveLength(1);

    const req = { ...request("perm-1"), call_id: "c1" };
    s = applyEvent(s, { type: "permission_asked", request: req });
    expect(s.permissions.map((p) => p.id)).toEqual(["perm-1"]);
    s = applyEvent(s, { type: "permission_asked", request: req });
    expect(s.permissions).toHaveLength(1);
    s = applyEvent(s, {
      type: "permission_resolved",
      session_id: S,
      request_id: "perm-1",
      decision: "allow",
      by: "user",
      reason: "",
    });
    expect(s.permissions).toEqual([]);
    expect(s.tools.c1!.decision).toEqual({ decision: "allow", by: "user", reason: "" });
    // A reply sent from this window says which one it was.
    let t = applyEvent(
      { ...s, replies: { "perm-2": "once" } },
      { type: "permission_asked", request: { ...request("perm-2"), call_id: "c1" } },
    );
    t = applyEvent(t, {
      type: "permission_resolved",
      session_id: S,
      request_id: "perm-2",
      decision: "allow",
      by: "user",
      reason: "",
    });
    expect(t.tools.c1!.decision).toEqual({ decision: "allow", by: "user", reason: "", reply: "once" });

    s = applyEvent(s, {
      type: "tool_result",
      session_id: S,
      message_id: "m1",
      call_id: "c1",
      tool: "write",
      output: "wrote a.txt",
      is_error: false,
      duration_ms: 12,
    });
    expect(s.tools.c1).toMatchObject({ output: "wrote a.txt", isError: false, durationMs: 12 });
    s = applyEvent(s, {
      type: "snapshot",
      session_id: S,
      call_id: "c1",
      hash: "h",
      files: [{ path: "a.txt", kind: "modified", additions: 2, deletions: 1 }],
    });
    expect(s.tools.c1!.files).toEqual([{ path: "a.txt", kind: "modified", additions: 2, deletions: 1 }]);
  });

  it("a shell command's sandbox note lands on its card, live and from the store", () => {
    let s = run([started, { type: "tool_call", session_id: S, message_id: "m1", call_id: "b1", tool: "bash", input: { command: "ls" } }]);
    const note: SandboxNote = { mode: "workspace-write", network: "deny", mechanism: "landlock+seccomp", blocked: "write" };
    s = applyEvent(s, {
      type: "tool_result",
      session_id: S,
      message_id: "m1",
      call_id: "b1",
      tool: "bash",
      output: "Permission denied",
      is_error: false,
      duration_ms: 3,
      sandbox: note,
    });
    expect(s.tools.b1!.sandbox).toEqual(note);
    const stored = msg("m2", "user", [
      { type: "tool_result", call_id: "b2", tool: "bash", output: "ok", sandbox: { mode: "off", unconfined: "escalated" } },
    ]);
    const t = run([started, { type: "message_stored", message: stored }]);
    expect(t.tools.b2!.sandbox).toEqual({ mode: "off", unconfined: "escalated" });
  });

  it("a running command's output accumulates live until its result replaces it", () => {
    let s = run([started, { type: "tool_call", session_id: S, message_id: "m1", call_id: "b1", tool: "bash", input: { command: "make" } }]);
    const out = (text: string): Event => ({ type: "tool_output", session_id: S, message_id: "m1", call_id: "b1", text });
    s = applyEvent(s, out("compiling a\n"));
    s = applyEvent(s, out("compiling b\n"));
    expect(s.tools.b1!.live).toBe("compiling a\ncompiling b\n");
    // Another session's output is not ours.
    expect(applyEvent(s, { ...out("x"), session_id: "other" } as Event)).toBe(s);
    s = applyEvent(s, {
      type: "tool_result",
      session_id: S,
      message_id: "m1",
      call_id: "b1",
      tool: "bash",
      output: "compiling a\ncompiling b\ndone",
      is_error: false,
      duration_ms: 30,
    });
    expect(s.tools.b1!.live).toBeUndefined();
    expect(s.tools.b1!.output).toContain("done");
    // Output arriving after the result (a late batch) changes nothing.
    expect(applyEvent(s, out("late\n"))).toBe(s);
  });

  it("live output keeps only its tail", () => {
    let s = run([started, { type: "tool_call", session_id: S, message_id: "m1", call_id: "b1", tool: "bash", input: { command: "yes" } }]);
    const chunk = "y\n".repeat(20_000);
    for (let i = 0; i < 3; i++) s = applyEvent(s, { type: "tool_output", session_id: S, message_id: "m1", call_id: "b1", text: chunk + String(i) });
    expect(s.tools.b1!.live!.length).toBe(LIVE_KEEP_CHARS);
    expect(s.tools.b1!.live!.endsWith("2")).toBe(true);
  });

  it("a tool_call for a message without that part adds it to the draft", () => {
    const s = run([
      started,
      { type: "tool_call", session_id: S, message_id: "m1", call_id: "c9", tool: "bash", input: { command: "ls" } },
    ]);
    expect(s.live[0]!.parts.map((p) => p.content)).toEqual([
      { type: "tool_call", call_id: "c9", tool: "bash", input: { command: "ls" } },
    ]);
  });

  it("a denial by rule (request id = call id) lands on the card", () => {
    let s = run([started, { type: "tool_call", session_id: S, message_id: "m1", call_id: "c2", tool: "edit", input: {} }]);
    s = applyEvent(s, {
      type: "permission_resolved",
      session_id: S,
      request_id: "c2",
      decision: "deny",
      by: "rule",
      reason: "deny edit (plan agent)",
    });
    expect(s.tools.c2!.decision).toEqual({ decision: "deny", by: "rule", reason: "deny edit (plan agent)" });
  });

  it("a resolved ask without call_id goes to the latest unfinished call of that tool", () => {
    let s = run([started, { type: "tool_call", session_id: S, message_id: "m1", call_id: "c3", tool: "write", input: {} }]);
    s = run(
      [
        { type: "permission_asked", request: request("perm-2") },
        { type: "permission_resolved", session_id: S, request_id: "perm-2", decision: "deny", by: "user", reason: "no" },
      ],
      s,
    );
    expect(s.tools.c3!.decision).toMatchObject({ decision: "deny", by: "user" });
  });

  it("agent_switched: queued keeps the agent and records the queue; unqueued switches", () => {
    let s = { ...emptySession(S), agent: "build" };
    s = applyEvent(s, { type: "agent_switched", session_id: S, from: "build", to: "plan", queued: true });
    expect(s).toMatchObject({ agent: "build", queuedAgent: "plan" });
    s = applyEvent(s, { type: "agent_switched", session_id: S, from: "build", to: "plan", queued: false });
    expect(s).toMatchObject({ agent: "plan", queuedAgent: null });
  });

  it("error records the banner; retrying is shown until the next event", () => {
    let s = run([started, { type: "retrying", session_id: S, attempt: 2, delay_ms: 1000, reason: "rate limited" }]);
    expect(s.retrying).toEqual({ attempt: 2, delayMs: 1000, reason: "rate limited" });
    s = applyEvent(s, { type: "error", session_id: S, kind: "network", message: "connection reset", retryable: true });
    expect(s.error).toEqual({ kind: "network", message: "connection reset", retryable: true });
    expect(s.retrying).toBeNull();
  });

  it("turn_finished clears running, applies a queued switch, keeps unstored drafts and records usage", () => {
    let s = run([
      started,
      { type: "text_delta", session_id: S, message_id: "m1", text: "cut" },
      { type: "agent_switched", session_id: S, from: "build", to: "plan", queued: true },
    ]);
    s = applyEvent(s, {
      type: "turn_finished",
      session_id: S,
      end: "cancelled",
      steps: 1,
      usage: { input: 3, output: 4 },
      cost_usd: 0.5,
    });
    expect(s.running).toBe(false);
    expect(s.agent).toBe("plan");
    expect(s.queuedAgent).toBeNull();
    expect(s.live).toEqual([]);
    expect(s.messages.map((m) => m.id)).toEqual(["m1"]);
    expect(s.lastTurn).toEqual({ usage: { input: 3, output: 4 }, costUsd: 0.5, end: "cancelled", steps: 1 });
  });

  it("session_updated updates the session record", () => {
    const session = {
      id: S,
      title: "New title",
      slug: "new-title",
      directory: "/p",
      project_id: "x",
      status: "busy" as const,
      created_at: 1,
      updated_at: 2,
      version: "0.1",
    };
    const s = applyEvent(emptySession(S), { type: "session_updated", session });
    expect(s.session?.title).toBe("New title");
  });
});

describe("fromDetail", () => {
  it("loads messages, pending asks, running, queued agent and tool info", () => {
    const detail: SessionDetail = {
      session: {
        id: S,
        title: "t",
        slug: "t",
        directory: "/p",
        project_id: "x",
        status: "busy",
        created_at: 1,
        updated_at: 2,
        version: "0.1",
      },
      agent: "plan",
      queued_agent: "build",
      running: true,
      pending_permissions: [request("perm-9")],
      messages: [
        msg("u1", "user", [{ type: "text", text: "do it" }]),
        msg(
          "m1",
          "assistant",
          [
            { type: "tool_call", call_id: "c1", tool: "write", input: { path: "a" } },
            { type: "snapshot", hash: "h", tool_call_id: "c1", files: [{ path: "a", kind: "added", additions: 3 }] },
            {
              type: "tool_result",
              call_id: "c1",
              tool: "write",
              output: "ok",
              duration_ms: 7,
              permission: { decision: "allow", by: "user", reply: "session" },
            },
          ],
          { metadata: { tokens: { input: 100, output: 20 }, cost_usd: 0.02 } },
        ),
      ],
    };
    const s = fromDetail(detail);
    expect(s).toMatchObject({ agent: "plan", queuedAgent: "build", running: true });
    expect(s.permissions.map((p) => p.id)).toEqual(["perm-9"]);
    expect(s.tools.c1).toMatchObject({
      tool: "write",
      output: "ok",
      durationMs: 7,
      files: [{ path: "a", kind: "added", additions: 3 }],
      // The stored answer survives a reload.
      decision: { decision: "allow", by: "user", reply: "session", reason: "" },
    });
    expect(sessionTotals(s.messages)).toEqual({ input: 100, output: 20, cost: 0.02, priced: true });
    expect(userTexts(s.messages)).toEqual(["do it"]);
  });
});

describe("reloaded", () => {
  const base = (over: Partial<SessionDetail>): SessionDetail => ({
    session: {
      id: S,
      title: "t",
      slug: "t",
      directory: "/p",
      project_id: "x",
      status: "busy",
      created_at: 1,
      updated_at: 2,
      version: "0.1",
    },
    agent: "build",
    messages: [],
    ...over,
  });
  it("keeps the streaming draft when the reloaded session is still running", () => {
    const streaming = run([started, { type: "text_delta", session_id: S, message_id: "m1", text: "so far" }]);
    const s = reloaded(base({ running: true, messages: [msg("u1", "user", [{ type: "text", text: "q" }])] }), streaming);
    expect(s.messages.map((m) => m.id)).toEqual(["u1"]);
    expect(s.live.map((m) => m.id)).toEqual(["m1"]);
  });
  it("drops drafts that are stored or when nothing runs", () => {
    const streaming = run([started, { type: "text_delta", session_id: S, message_id: "m1", text: "so far" }]);
    expect(reloaded(base({ running: false }), streaming).live).toEqual([]);
    const stored = reloaded(
      base({ running: true, messages: [msg("m1", "assistant", [{ type: "text", text: "done" }])] }),
      streaming,
    );
    expect(stored.live).toEqual([]);
    expect(stored.messages[0]!.parts[0]!.content).toEqual({ type: "text", text: "done" });
  });
});

describe("SessionStore", () => {
  it("applies events at once but notifies once per frame", () => {
    const frames: (() => void)[] = [];
    const store = new SessionStore(S, (cb) => frames.push(cb));
    let calls = 0;
    store.subscribe(() => calls++);
    store.dispatch(started);
    for (let i = 0; i < 50; i++) store.dispatch({ type: "text_delta", session_id: S, message_id: "m1", text: "x" });
    expect(store.getState().live[0]!.parts[0]!.content).toEqual({ type: "text", text: "x".repeat(50) });
    expect(calls).toBe(0);
    expect(frames).toHaveLength(1);
    frames[0]!();
    expect(calls).toBe(1);
  });

  it("draws streamed events at most every STREAM_FRAME_MS, a load at once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "requestAnimationFrame", "performance"] });
    try {
      const store = new SessionStore(S);
      const at: number[] = [];
      store.subscribe(() => at.push(performance.now()));
      const delta = { type: "text_delta" as const, session_id: S, message_id: "m1", text: "x" };
      store.dispatch(started);
      // Deltas every 5 ms for a second: drawn in frames at least STREAM_FRAME_MS apart.
      for (let t = 0; t < 1000; t += 5) {
        store.dispatch(delta);
        await vi.advanceTimersByTimeAsync(5);
      }
      await vi.advanceTimersByTimeAsync(200);
      const gaps = at.slice(1).map((t, i) => t - at[i]!);
      expect(at.length).toBeGreaterThanOrEqual(1000 / (STREAM_FRAME_MS + 20));
      expect(at.length).toBeLessThanOrEqual(1000 / STREAM_FRAME_MS + 2);
      // (the animation frame that follows the wait lands anywhere within one frame of it)
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(STREAM_FRAME_MS - 17);
      // Every delta is in the state the last frame drew.
      expect(store.getState().live[0]!.parts[0]!.content).toEqual({ type: "text", text: "x".repeat(200) });
      // A load (set) is not held back: subscribers hear of it at once.
      const n = at.length;
      store.dispatch(delta);
      store.set(store.getState());
      expect(at.length).toBe(n + 1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("compaction events", () => {
  const session = (status: "idle" | "busy" | "compacting") => ({
    id: S,
    title: "t",
    slug: "t",
    directory: "/p",
    project_id: "x",
    status,
    created_at: 1,
    updated_at: 2,
    version: "0.1",
  });
  const startedC: Event = { type: "compaction_started", session_id: S, trigger: "tokens", tokens_before: 9000 };

  it("started → running with trigger and size; finished → over", () => {
    const s = run([{ type: "session_updated", session: session("compacting") }, startedC]);
    expect(s.compaction).toEqual({ state: "running", trigger: "tokens", tokensBefore: 9000 });
    expect(isCompacting(s)).toBe(true);
    const done = run(
      [
        {
          type: "compaction_finished",
          session_id: S,
          message_id: "c1",
          trigger: "tokens",
          compacted: 4,
          retained: 2,
          tokens_before: 9000,
          tokens_after: 2000,
        },
        { type: "session_updated", session: session("busy") },
      ],
      s,
    );
    expect(done.compaction).toBeNull();
    expect(isCompacting(done)).toBe(false);
  });

  it("the session's status alone says it is compacting (a window opened meanwhile)", () => {
    const s = run([{ type: "session_updated", session: session("compacting") }]);
    expect(s.compaction).toBeNull();
    expect(isCompacting(s)).toBe(true);
  });

  it("failed keeps the message until a new compaction starts; other sessions' events are ignored", () => {
    const failed = run([
      startedC,
      { type: "session_updated", session: session("idle") },
      { type: "compaction_failed", session_id: S, trigger: "tokens", message: "nothing was changed; try /compact" },
      { type: "compaction_failed", session_id: "other", trigger: "manual", message: "not ours" },
      { type: "compaction_started", session_id: "other", trigger: "manual", tokens_before: 1 },
    ]);
    expect(failed.compaction).toEqual({ state: "failed", trigger: "tokens", message: "nothing was changed; try /compact" });
    expect(isCompacting(failed)).toBe(false);
    // A reload does not hide what to do.
    const detail: SessionDetail = { session: session("idle"), agent: "build", messages: [] };
    expect(reloaded(detail, failed).compaction).toEqual(failed.compaction);
    expect(run([startedC], failed).compaction).toMatchObject({ state: "running" });
  });

  it("a reload forgets a running compaction the store says is over", () => {
    const s = run([startedC]);
    const idle: SessionDetail = { session: session("idle"), agent: "build", messages: [] };
    expect(reloaded(idle, s).compaction).toBeNull();
    const still: SessionDetail = { session: session("compacting"), agent: "build", messages: [] };
    expect(reloaded(still, s).compaction).toEqual(s.compaction);
  });

  it("turn_finished ends a running compaction", () => {
    const s = run([
      startedC,
      { type: "turn_finished", session_id: S, end: "completed", steps: 1, usage: { input: 1, output: 1 } },
    ]);
    expect(s.compaction).toBeNull();
  });

  it("toolsOf gathers the tool cards of archived messages", () => {
    const tools = toolsOf([
      msg("a1", "assistant", [{ type: "tool_call", call_id: "t1", tool: "read", input: { path: "a" } }]),
      msg("a2", "user", [{ type: "tool_result", call_id: "t1", tool: "read", output: "text" }]),
    ]);
    expect(tools.t1).toMatchObject({ tool: "read", output: "text", messageId: "a1" });
  });
});

describe("tool_content (MCP images, resource links, resources)", () => {
  const items: ResultContent[] = [
    { type: "image", media_type: "image/png", data: "iVBORw0KGgo=" },
    { type: "resource_link", uri: "https://example.org/doc", name: "doc", description: "The doc" },
    { type: "resource", uri: "file:///notes.txt", mime_type: "text/plain", text: "hello" },
  ];
  const call: Event = {
    type: "tool_call",
    session_id: S,
    message_id: "m1",
    call_id: "x1",
    tool: "mcp__fixture__echo",
    input: { text: "hi" },
  };
  const content = (over: Partial<Extract<Event, { type: "tool_content" }>> = {}): Event => ({
    type: "tool_content",
    session_id: S,
    message_id: "m1",
    call_id: "x1",
    items,
    ...over,
  });
  /** A stored `tool_content` part (next to the call's `tool_result` part). */
  const contentPart = (callId: string, list: ResultContent[]): PartContent => ({
    type: "tool_content",
    call_id: callId,
    items: list,
  });

  it("the live event fills the card's content, and its result keeps it", () => {
    let s = run([started, call]);
    s = applyEvent(s, content());
    expect(s.tools.x1).toMatchObject({ tool: "mcp__fixture__echo", input: { text: "hi" }, content: items });
    s = applyEvent(s, {
      type: "tool_result",
      session_id: S,
      message_id: "m1",
      call_id: "x1",
      tool: "mcp__fixture__echo",
      output: "echo: hi",
      is_error: false,
      duration_ms: 4,
    });
    expect(s.tools.x1).toMatchObject({ output: "echo: hi", durationMs: 4, content: items });
  });

  it("content of a call not seen yet starts its card; another session's is ignored", () => {
    const s = applyEvent(emptySession(S), content({ call_id: "x9", message_id: "m5" }));
    expect(s.tools.x9).toEqual({ callId: "x9", tool: "", input: null, messageId: "m5", content: items });
    const s0 = emptySession(S);
    expect(applyEvent(s0, content({ session_id: "other" }))).toBe(s0);
  });

  it("stored tool_content parts fill the card from history (load, message_stored, archive)", () => {
    const history = [
      msg("a1", "assistant", [{ type: "tool_call", call_id: "x1", tool: "mcp__fixture__picture", input: {} }]),
      msg("t1", "user", [
        { type: "tool_result", call_id: "x1", tool: "mcp__fixture__picture", output: "[image]" },
        contentPart("x1", [items[0]!]),
      ]),
    ];
    const detail: SessionDetail = {
      session: {
        id: S,
        title: "t",
        slug: "t",
        directory: "/p",
        project_id: "x",
        status: "idle",
        created_at: 1,
        updated_at: 2,
        version: "0.1",
      },
      agent: "build",
      messages: history,
    };
    expect(fromDetail(detail).tools.x1).toMatchObject({
      tool: "mcp__fixture__picture",
      output: "[image]",
      messageId: "a1",
      content: [{ type: "image", media_type: "image/png", data: "iVBORw0KGgo=" }],
    });
    const live = run([started, { type: "message_stored", message: history[0]! }, { type: "message_stored", message: history[1]! }]);
    expect(live.tools.x1!.content).toEqual([items[0]]);
    expect(toolsOf(history).x1!.content).toEqual([items[0]]);
  });

  it("a reload while the turn runs keeps content the events brought", () => {
    const s = run([started, call, content()]);
    const detail: SessionDetail = {
      session: {
        id: S,
        title: "t",
        slug: "t",
        directory: "/p",
        project_id: "x",
        status: "busy",
        created_at: 1,
        updated_at: 2,
        version: "0.1",
      },
      agent: "build",
      running: true,
      messages: [msg("m1", "assistant", [{ type: "tool_call", call_id: "x1", tool: "mcp__fixture__echo", input: { text: "hi" } }])],
    };
    expect(reloaded(detail, s).tools.x1!.content).toEqual(items);
  });
});
