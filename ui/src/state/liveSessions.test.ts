import { describe, expect, it } from "vitest";
import type { Message, SessionDetail } from "../protocol/generated";
import { makeApi } from "../lib/api";
import { fakeTransport } from "../app/testing";
import { LIVE_SESSIONS, SessionCache } from "./liveSessions";

const now = () => new Promise((r) => setTimeout(r, 0));

function detail(id: string, messages: Message[] = []): SessionDetail {
  return {
    session: { id, title: id, slug: id, directory: "/p", project_id: "x", status: "idle", created_at: 1, updated_at: 2, version: "0.1" },
    agent: "build",
    messages,
    running: false,
    seq: 0,
    epoch: "E",
  };
}

const message = (session: string, id: string, text: string): Message => ({
  id,
  session_id: session,
  role: "user",
  type: "normal",
  created_at: 1,
  metadata: {},
  parts: [{ id: `${id}-p`, message_id: id, index: 0, created_at: 1, content: { type: "text", text } }],
});

function setup(max = 8) {
  const loads: string[] = [];
  const fake = fakeTransport((method, path) => {
    const m = /^\/api\/sessions\/([^/?]+)$/.exec(path);
    if (method === "GET" && m) {
      loads.push(m[1]!);
      return detail(m[1]!);
    }
    return undefined;
  });
  const cache = new SessionCache(makeApi(fake.transport), fake.transport, max);
  return { fake, cache, loads };
}

describe("SessionCache", () => {
  it("keeps a session live while another is shown: switching back shows it at once as it is now (then checks it in the background)", async () => {
    const { fake, cache, loads } = setup();
    const a = cache.get("A", () => undefined);
    cache.show(a);
    await a.ready();
    expect(loads).toEqual(["A"]);
    cache.hide(a);
    const b = cache.get("B", () => undefined);
    cache.show(b);
    await b.ready();
    // A message stored in A while B is on screen reaches A's store.
    fake.emit({ type: "message_stored", message: message("A", "m1", "while away") });
    cache.hide(b);
    const again = cache.get("A", () => undefined);
    cache.show(again);
    // Before any answer: the same store, already holding what happened while away.
    expect(again).toBe(a);
    expect(again.store.getState().messages.map((m) => m.id)).toEqual(["m1"]);
    // Then checked in the background against the store (another process may have added to it).
    await now();
    expect(loads).toEqual(["A", "B", "A"]);
  });

  it("switching back loads again only when the session list says it changed since", async () => {
    const { cache, loads } = setup();
    const a = cache.get("A", () => undefined);
    cache.show(a);
    await a.ready();
    cache.hide(a);
    // The list knows the same version (detail's updated_at is 2): nothing to load.
    cache.show(a, 2);
    await now();
    expect(loads).toEqual(["A"]);
    cache.hide(a);
    // Another process continued it: the list's is newer.
    cache.show(a, 99);
    await now();
    expect(loads).toEqual(["A", "A"]);
  });

  it("does not load a session again while a turn of this runtime runs in it (its Events keep it current)", async () => {
    const { fake, cache, loads } = setup();
    const a = cache.get("A", () => undefined);
    cache.show(a);
    await a.ready();
    cache.hide(a);
    fake.emit({ type: "step_started", session_id: "A", message_id: "m2", agent: "build", model: "m" });
    expect(a.store.getState().running).toBe(true);
    // The list read a newer version (the turn's own writes): still nothing to load.
    cache.show(a, 99);
    await now();
    expect(loads).toEqual(["A"]);
    cache.hide(a);
    fake.emit({
      type: "turn_finished",
      session_id: "A",
      end: "completed",
      steps: 1,
      usage: { input: 1, output: 1, cache_read: 0, cache_write: 0 },
    });
    expect(a.store.getState().running).toBe(false);
    // Once it has ended, a newer version in the list loads again.
    cache.show(a, 99);
    await now();
    expect(loads).toEqual(["A", "A"]);
  });

  it("loads a hidden session again when it is shown after the stream said it may be out of date", async () => {
    const { fake, cache, loads } = setup();
    const a = cache.get("A", () => undefined);
    cache.show(a);
    await a.ready();
    cache.hide(a);
    // The window's stream came back from another process: hidden sessions wait until shown.
    fake.streamState("open");
    await now();
    expect(loads).toEqual(["A"]);
    cache.show(cache.get("A", () => undefined));
    await now();
    await now();
    expect(loads).toEqual(["A", "A"]);
    // A shown one loads at once.
    fake.streamState("lagged");
    await now();
    expect(loads).toEqual(["A", "A", "A"]);
  });

  it("by default keeps ten sessions visited one after another: the first shows again as it was, not loaded again", async () => {
    const { cache, loads } = setup(LIVE_SESSIONS);
    const ids = Array.from({ length: 10 }, (_, i) => `S${i}`);
    const first = cache.get("S0", () => undefined);
    for (const id of ids) {
      const s = cache.get(id, () => undefined);
      cache.show(s, 2);
      await s.ready();
      cache.hide(s);
    }
    expect(loads).toEqual(ids);
    const again = cache.get("S0", () => undefined);
    cache.show(again, 2);
    await now();
    expect(again).toBe(first);
    expect(loads).toEqual(ids);
  });

  it("keeps the most recently shown sessions and never drops one on screen", () => {
    const { cache } = setup(2);
    const a = cache.get("A", () => undefined);
    cache.show(a);
    for (const id of ["B", "C", "D"]) cache.get(id, () => undefined);
    expect(cache.size).toBe(2);
    // A is on screen: kept although it was used first; of the others only the newest stays.
    expect(cache.get("A", () => undefined)).toBe(a);
    const d1 = cache.get("D", () => undefined);
    expect(cache.get("D", () => undefined)).toBe(d1);
    const b = cache.get("B", () => undefined);
    expect(cache.size).toBe(2);
    expect(cache.get("D", () => undefined)).not.toBe(d1);
    expect(b).toBeDefined();
    cache.dispose();
    expect(cache.size).toBe(0);
  });

  describe("follow-ups queued while a turn runs", () => {
    const finished = (end: "completed" | "cancelled") =>
      ({
        type: "turn_finished",
        session_id: "A",
        end,
        steps: 1,
        usage: { input: 1, output: 1, cache_read: 0, cache_write: 0 },
      }) as const;
    const running = async (max = 8, fail = false) => {
      const sent: string[] = [];
      const fake = fakeTransport((method, path, body) => {
        const m = /^\/api\/sessions\/([^/?]+)$/.exec(path);
        if (method === "GET" && m) return detail(m[1]!);
        if (method === "POST" && path === "/api/sessions/A/messages") {
          if (fail) throw new Error("409: a turn is running");
          sent.push((body as { text: string }).text);
        }
        return undefined;
      });
      const cache = new SessionCache(makeApi(fake.transport), fake.transport, max);
      const errors: unknown[] = [];
      const a = cache.get("A", (e) => errors.push(e));
      cache.show(a);
      await a.ready();
      fake.emit({ type: "step_started", session_id: "A", message_id: "m2", agent: "build", model: "m" });
      return { fake, cache, a, sent, errors };
    };

    it("go out one per completed turn, oldest first, while another session is on screen", async () => {
      const { fake, cache, a, sent } = await running(2);
      a.followUps.add("first");
      a.followUps.add("second");
      // Switched away, and three other sessions visited: A is kept (it has follow-ups to send).
      cache.hide(a);
      for (const id of ["B", "C", "D"]) cache.show(cache.get(id, () => undefined));
      expect(cache.get("A", () => undefined)).toBe(a);
      fake.emit(finished("completed"));
      await now();
      expect(sent).toEqual(["first"]);
      expect(a.followUps.getSnapshot()).toEqual(["second"]);
      expect(a.store.getState().running).toBe(true);
      fake.emit(finished("completed"));
      await now();
      expect(sent).toEqual(["first", "second"]);
      expect(a.followUps.size).toBe(0);
    });

    it("wait after a stopped turn (nothing is sent behind the person's back) until Send now", async () => {
      const { fake, a, sent } = await running();
      a.followUps.add("later");
      fake.emit(finished("cancelled"));
      fake.emit({ type: "step_started", session_id: "B", message_id: "x", agent: "build", model: "m" });
      await now();
      expect(sent).toEqual([]);
      expect(a.followUps.getSnapshot()).toEqual(["later"]);
      await a.sendNext();
      expect(sent).toEqual(["later"]);
    });

    it("one that could not be sent is back at the head of the queue, and why is reported", async () => {
      const { fake, a, sent, errors } = await running(8, true);
      a.followUps.add("one");
      a.followUps.add("two");
      fake.emit(finished("completed"));
      await now();
      await now();
      expect(sent).toEqual([]);
      expect(a.followUps.getSnapshot()).toEqual(["one", "two"]);
      expect(String(errors[0])).toContain("409");
      expect(a.store.getState().running).toBe(false);
    });
  });
});
