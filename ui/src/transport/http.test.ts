import { describe, expect, it, vi } from "vitest";
import type { Event } from "../protocol/generated";
import { HttpTransport, takeToken, type EventSourceLike } from "./http";
import { ApiError } from "./types";

class FakeEventSource implements EventSourceLike {
  static instances: FakeEventSource[] = [];
  listeners = new Map<string, ((e: MessageEvent) => void)[]>();
  onerror: ((e: globalThis.Event) => void) | null = null;
  onopen: ((e: globalThis.Event) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }
  addEventListener(type: string, l: (e: MessageEvent) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), l]);
  }
  close() {
    this.closed = true;
  }
  emit(type: string, data: unknown, lastEventId = "") {
    const e = new MessageEvent(type, { data: typeof data === "string" ? data : JSON.stringify(data), lastEventId });
    for (const l of this.listeners.get(type) ?? []) l(e);
  }
}

function jsonResponse(status: number, body: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), { status });
}

describe("HttpTransport.request", () => {
  it("sends the bearer token and JSON body to the same origin", async () => {
    const fetch = vi.fn(() => Promise.resolve(jsonResponse(200, { id: "s1" })));
    const t = new HttpTransport({ token: "tok123", fetch });
    const answer = await t.request<{ id: string }>("POST", "/api/sessions", { directory: "/p" });
    expect(answer).toEqual({ id: "s1" });
    expect(fetch).toHaveBeenCalledTimes(1);
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/sessions");
    expect(init.method).toBe("POST");
    expect((init.headers as Record<string, string>).Authorization).toBe("Bearer tok123");
    expect(init.body).toBe(JSON.stringify({ directory: "/p" }));
  });

  it("maps non-2xx answers to ApiError with the server's error text", async () => {
    const fetch = vi.fn(() => Promise.resolve(jsonResponse(409, { error: "a turn is running in this session" })));
    const t = new HttpTransport({ token: "t", fetch });
    const err = await t.request("DELETE", "/api/sessions/x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect((err as ApiError).message).toBe("a turn is running in this session");
  });

  it("resolves an empty 204 answer", async () => {
    const fetch = vi.fn(() => Promise.resolve(new Response(null, { status: 204 })));
    const t = new HttpTransport({ token: "t", fetch });
    await expect(t.request("DELETE", "/api/approvals/1")).resolves.toBeUndefined();
  });

  it("reports a network failure as ApiError status 0", async () => {
    const fetch = vi.fn(() => Promise.reject(new TypeError("Failed to fetch")));
    const t = new HttpTransport({ token: "t", fetch });
    await expect(t.request("GET", "/api/info")).rejects.toMatchObject({ status: 0 });
  });
});

describe("HttpTransport.subscribe", () => {
  it("opens the SSE URL with session and token, dispatches named events", () => {
    FakeEventSource.instances = [];
    const t = new HttpTransport({ token: "tok", EventSource: FakeEventSource, schedule: () => 0 });
    const events: Event[] = [];
    const states: string[] = [];
    const stop = t.subscribe(
      "sess-1",
      (e) => events.push(e),
      (s) => states.push(s),
    );
    const es = FakeEventSource.instances[0]!;
    expect(es.url).toBe("/api/events?session=sess-1&token=tok");
    es.onopen?.(new globalThis.Event("open"));
    const delta: Event = { type: "text_delta", session_id: "sess-1", message_id: "m1", text: "hi" };
    es.emit("text_delta", delta);
    es.emit("turn_finished", {
      type: "turn_finished",
      session_id: "sess-1",
      end: "completed",
      steps: 1,
      usage: { input: 1, output: 2 },
    });
    expect(events.map((e) => e.type)).toEqual(["text_delta", "turn_finished"]);
    expect(events[0]).toEqual(delta);
    expect(states).toEqual(["open"]);
    stop();
    expect(es.closed).toBe(true);
  });

  it("listens to every Event type, compaction events included", () => {
    FakeEventSource.instances = [];
    const t = new HttpTransport({ token: "tok", EventSource: FakeEventSource, schedule: () => 0 });
    const events: Event[] = [];
    t.subscribe("s", (e) => events.push(e));
    const es = FakeEventSource.instances[0]!;
    for (const name of ["compaction_started", "compaction_finished", "compaction_failed", "worktree_log", "session_updated"])
      expect(es.listeners.has(name)).toBe(true);
    es.emit("compaction_failed", { type: "compaction_failed", session_id: "s", trigger: "manual", message: "why" });
    expect(events).toEqual([{ type: "compaction_failed", session_id: "s", trigger: "manual", message: "why" }]);
  });

  it("reconnects with backoff after an error and reports lagged", () => {
    FakeEventSource.instances = [];
    const scheduled: [() => void, number][] = [];
    const t = new HttpTransport({
      token: "tok",
      EventSource: FakeEventSource,
      schedule: (fn, ms) => scheduled.push([fn, ms]),
    });
    const states: string[] = [];
    const events: Event[] = [];
    const stop = t.subscribe(
      null,
      (e) => events.push(e),
      (s) => states.push(s),
    );
    const first = FakeEventSource.instances[0]!;
    expect(first.url).toBe("/api/events?token=tok");
    first.onerror?.(new globalThis.Event("error"));
    expect(first.closed).toBe(true);
    expect(states).toEqual(["reconnecting"]);
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]![1]).toBe(500);
    scheduled[0]![0]();
    const second = FakeEventSource.instances[1]!;
    second.onerror?.(new globalThis.Event("error"));
    expect(scheduled[1]![1]).toBe(1000);
    scheduled[1]![0]();
    const third = FakeEventSource.instances[2]!;
    third.onopen?.(new globalThis.Event("open"));
    third.emit("lagged", "12");
    expect(states).toEqual(["reconnecting", "reconnecting", "open", "lagged"]);
    expect(events).toEqual([]);
    stop();
    expect(third.closed).toBe(true);
    // An error after unsubscribing schedules nothing.
    third.onerror?.(new globalThis.Event("error"));
    expect(scheduled).toHaveLength(2);
  });
});

describe("HttpTransport retry now", () => {
  it("reconnect() runs a lost stream's scheduled retry at once, and the schedule's later run does nothing", () => {
    FakeEventSource.instances = [];
    const scheduled: (() => void)[] = [];
    const t = new HttpTransport({ token: "tok", EventSource: FakeEventSource, schedule: (fn) => scheduled.push(fn) });
    const stop = t.subscribe(null, () => undefined);
    // Nothing lost: nothing to retry.
    t.reconnect();
    expect(FakeEventSource.instances).toHaveLength(1);
    FakeEventSource.instances[0]!.onerror?.(new globalThis.Event("error"));
    t.reconnect();
    expect(FakeEventSource.instances).toHaveLength(2);
    // The backoff's timer fires later: no second connection.
    scheduled[0]!();
    expect(FakeEventSource.instances).toHaveLength(2);
    // Unsubscribed while waiting: retrying now connects nothing.
    FakeEventSource.instances[1]!.onerror?.(new globalThis.Event("error"));
    stop();
    t.reconnect();
    scheduled[1]!();
    expect(FakeEventSource.instances).toHaveLength(2);
  });
});

describe("HttpTransport resuming", () => {
  it("asks for what it missed on every connect, passes each Event's number and resumes when behind", () => {
    FakeEventSource.instances = [];
    const scheduled: (() => void)[] = [];
    const t = new HttpTransport({ token: "tok", EventSource: FakeEventSource, schedule: (fn) => scheduled.push(fn) });
    let cursor: { epoch: string; seqs: Record<string, number> } | null = null;
    const got: [string, number | undefined][] = [];
    const hellos: unknown[] = [];
    const states: string[] = [];
    t.subscribe(
      null,
      (e, seq) => got.push([e.type, seq]),
      (s) => states.push(s),
      { resume: () => cursor, onHello: (h) => hellos.push(h) },
    );
    const first = FakeEventSource.instances[0]!;
    expect(first.url).toBe("/api/events?token=tok");
    first.emit("hello", { epoch: "E1", reset: "all" });
    expect(hellos).toEqual([{ epoch: "E1", reset: "all" }]);
    first.emit("text_delta", { type: "text_delta", session_id: "s1", message_id: "m", text: "a" }, "7");
    // No id (an Event of no session) is no number.
    first.emit("worktree_log", { type: "worktree_log", directory: "/r", name: "w", command: "c", line: "l", stderr: false }, "");
    expect(got).toEqual([
      ["text_delta", 7],
      ["worktree_log", undefined],
    ]);
    cursor = { epoch: "E1", seqs: { s1: 7, s2: 3 } };
    first.onerror?.(new globalThis.Event("error"));
    scheduled[0]!();
    const second = FakeEventSource.instances[1]!;
    const url = new URL(second.url, "http://x");
    expect(url.searchParams.get("epoch")).toBe("E1");
    expect(url.searchParams.get("since")).toBe("s1:7,s2:3");
    // Behind: reconnects at once from the cursor, no reload state.
    second.emit("lagged", "40");
    expect(second.closed).toBe(true);
    expect(FakeEventSource.instances).toHaveLength(3);
    expect(FakeEventSource.instances[2]!.url).toContain("since=s1%3A7%2Cs2%3A3");
    expect(states).toEqual(["reconnecting"]);
  });
});

describe("takeToken", () => {
  it("moves #token= to sessionStorage and removes it from the URL", () => {
    history.replaceState(null, "", "/app?x=1#token=secret42");
    sessionStorage.clear();
    expect(takeToken()).toBe("secret42");
    expect(sessionStorage.getItem("mia-code.token")).toBe("secret42");
    expect(window.location.hash).toBe("");
    expect(window.location.search).toBe("?x=1");
    // Next start (reload) finds it in sessionStorage.
    expect(takeToken()).toBe("secret42");
  });
  it("returns null when there is no token anywhere", () => {
    history.replaceState(null, "", "/");
    sessionStorage.clear();
    expect(takeToken()).toBeNull();
  });
});
