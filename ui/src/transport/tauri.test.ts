import { describe, expect, it, vi } from "vitest";
import type { Event } from "../protocol/generated";
import { TauriTransport, type ChannelLike, type InvokeFn } from "./tauri";
import { ApiError } from "./types";

class FakeChannel<T> implements ChannelLike<T> {
  static last: FakeChannel<unknown> | null = null;
  onmessage: (m: T) => void = () => undefined;
  constructor() {
    FakeChannel.last = this as FakeChannel<unknown>;
  }
}

function fakeInvoke(handler: (cmd: string, args?: Record<string, unknown>) => unknown) {
  const calls: [string, Record<string, unknown> | undefined][] = [];
  const fn = vi.fn((cmd: string, args?: Record<string, unknown>) => {
    calls.push([cmd, args]);
    // A handler that throws answers with a rejected promise, as invoke does.
    return new Promise<unknown>((resolve) => resolve(handler(cmd, args)));
  });
  return { invoke: fn as unknown as InvokeFn, calls };
}

describe("TauriTransport", () => {
  it("routes requests through invoke('api') and returns the body", async () => {
    const { invoke, calls } = fakeInvoke(() => ({ status: 200, body: [{ directory: "/p" }] }));
    const t = new TauriTransport(invoke, FakeChannel);
    await expect(t.request("GET", "/api/projects")).resolves.toEqual([{ directory: "/p" }]);
    expect(calls[0]).toEqual(["api", { method: "GET", path: "/api/projects", body: null }]);
    await t.request("PUT", "/api/settings", { model: "a/b" });
    expect(calls[1]).toEqual(["api", { method: "PUT", path: "/api/settings", body: { model: "a/b" } }]);
  });

  it("maps status >= 400 to ApiError with body.error", async () => {
    const summary = {
      applied: false,
      conflicts: [{ path: "a.txt", reason: "changed" }],
      message: "m",
      removed: [],
      restored: [],
    };
    const { invoke } = fakeInvoke(() => ({ status: 409, body: { error: "conflicts", ...summary } }));
    const t = new TauriTransport(invoke, FakeChannel);
    const err = (await t.request("POST", "/api/sessions/s/undo", {}).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(409);
    expect(err.message).toBe("conflicts");
    expect(err.body).toMatchObject({ applied: false });
  });

  it("subscribes with a Channel, dispatches its messages and unsubscribes by id", async () => {
    const { invoke, calls } = fakeInvoke((cmd) => (cmd === "subscribe" ? 7 : null));
    const t = new TauriTransport(invoke, FakeChannel);
    const events: Event[] = [];
    const states: string[] = [];
    const stop = t.subscribe(
      "s1",
      (e) => events.push(e),
      (s) => states.push(s),
    );
    const ch = FakeChannel.last!;
    expect(calls[0]![0]).toBe("subscribe");
    expect(calls[0]![1]).toMatchObject({ session: "s1" });
    expect(calls[0]![1]!.onEvent).toBe(ch);
    const e: Event = { type: "text_delta", session_id: "s1", message_id: "m", text: "x" };
    ch.onmessage({ seq: 4, event: e });
    expect(events).toEqual([e]);
    await vi.waitFor(() => expect(states).toEqual(["open"]));
    // A lagged notice on the channel is a state, not an Event.
    ch.onmessage({ type: "lagged", missed: 3 });
    expect(states).toEqual(["open", "lagged"]);
    expect(events).toHaveLength(1);
    stop();
    await vi.waitFor(() => expect(calls.at(-1)).toEqual(["unsubscribe", { id: 7 }]));
    ch.onmessage({ seq: 5, event: e });
    expect(events).toHaveLength(1);
  });

  it("passes the hello and each Event's number, resumes from the cursor and, when behind, resubscribes from it", async () => {
    let next = 1;
    const { invoke, calls } = fakeInvoke((cmd) => (cmd === "subscribe" ? next++ : null));
    const t = new TauriTransport(invoke, FakeChannel);
    const got: [string, number | undefined][] = [];
    const hellos: unknown[] = [];
    const states: string[] = [];
    const cursor = { epoch: "E", seqs: { s1: 4 } };
    t.subscribe(
      null,
      (e, seq) => got.push([e.type, seq]),
      (s) => states.push(s),
      { resume: () => cursor, onHello: (h) => hellos.push(h) },
    );
    expect(calls[0]![1]).toMatchObject({ session: null, epoch: "E", since: { s1: 4 } });
    const first = FakeChannel.last!;
    first.onmessage({ type: "hello", epoch: "E", reset: "none" });
    expect(hellos).toEqual([{ epoch: "E", reset: "none" }]);
    first.onmessage({ seq: 5, event: { type: "text_delta", session_id: "s1", message_id: "m", text: "x" } });
    expect(got).toEqual([["text_delta", 5]]);
    // Behind: not a reload but a new subscription from where it is (the old one is dropped).
    cursor.seqs.s1 = 5;
    first.onmessage({ type: "lagged", missed: 9 });
    expect(states).not.toContain("lagged");
    await vi.waitFor(() => expect(calls.filter((c) => c[0] === "subscribe")).toHaveLength(2));
    expect(calls.filter((c) => c[0] === "subscribe")[1]![1]).toMatchObject({ epoch: "E", since: { s1: 5 } });
    await vi.waitFor(() => expect(calls).toContainEqual(["unsubscribe", { id: 1 }]));
    // The old channel is deaf from then on.
    first.onmessage({ seq: 6, event: { type: "text_delta", session_id: "s1", message_id: "m", text: "y" } });
    expect(got).toHaveLength(1);
  });

  it("delivers a batch (what arrived within a frame, one message) in order; after a lagged item the rest is the new subscription's", async () => {
    let next = 1;
    const { invoke, calls } = fakeInvoke((cmd) => (cmd === "subscribe" ? next++ : null));
    const t = new TauriTransport(invoke, FakeChannel);
    const got: [string, number | undefined][] = [];
    const hellos: unknown[] = [];
    const cursor = { epoch: "E", seqs: { s1: 1 } };
    t.subscribe(
      null,
      (e, seq) => got.push([e.type === "text_delta" ? e.text : e.type, seq]),
      () => undefined,
      { resume: () => cursor, onHello: (h) => hellos.push(h) },
    );
    const delta = (text: string) => ({ type: "text_delta" as const, session_id: "s1", message_id: "m", text });
    const first = FakeChannel.last!;
    first.onmessage([
      { type: "hello", epoch: "E", reset: "none" },
      { seq: 2, event: delta("a") },
      { seq: 3, event: delta("b") },
    ]);
    expect(hellos).toHaveLength(1);
    expect(got).toEqual([
      ["a", 2],
      ["b", 3],
    ]);
    cursor.seqs.s1 = 3;
    first.onmessage([{ seq: 4, event: delta("c") }, { type: "lagged", missed: 2 }, { seq: 9, event: delta("late") }]);
    expect(got.map((g) => g[0])).toEqual(["a", "b", "c"]);
    await vi.waitFor(() => expect(calls.filter((c) => c[0] === "subscribe")).toHaveLength(2));
  });

  it("retries a refused subscription with backoff", async () => {
    let refuse = true;
    const { invoke, calls } = fakeInvoke((cmd) => {
      if (cmd === "subscribe" && refuse) throw new Error("backend not ready");
      return cmd === "subscribe" ? 3 : null;
    });
    const scheduled: [() => void, number][] = [];
    const t = new TauriTransport(invoke, FakeChannel, (fn, ms) => scheduled.push([fn, ms]));
    const states: string[] = [];
    const stop = t.subscribe(
      null,
      () => undefined,
      (s) => states.push(s),
    );
    await vi.waitFor(() => expect(states).toEqual(["reconnecting"]));
    expect(scheduled[0]![1]).toBe(500);
    refuse = false;
    scheduled[0]![0]();
    await vi.waitFor(() => expect(states).toEqual(["reconnecting", "open"]));
    expect(calls.filter((c) => c[0] === "subscribe")).toHaveLength(2);
    stop();
    await vi.waitFor(() => expect(calls.at(-1)).toEqual(["unsubscribe", { id: 3 }]));
  });

  it("reconnect() retries a refused subscription at once; the backoff's later run does nothing", async () => {
    let refuse = true;
    const { invoke, calls } = fakeInvoke((cmd) => {
      if (cmd === "subscribe" && refuse) throw new Error("backend not ready");
      return cmd === "subscribe" ? 4 : null;
    });
    const scheduled: (() => void)[] = [];
    const t = new TauriTransport(invoke, FakeChannel, (fn) => scheduled.push(fn));
    const states: string[] = [];
    t.subscribe(
      null,
      () => undefined,
      (s) => states.push(s),
    );
    await vi.waitFor(() => expect(states).toEqual(["reconnecting"]));
    refuse = false;
    t.reconnect();
    await vi.waitFor(() => expect(states).toEqual(["reconnecting", "open"]));
    scheduled[0]!();
    await Promise.resolve();
    expect(calls.filter((c) => c[0] === "subscribe")).toHaveLength(2);
  });
});
