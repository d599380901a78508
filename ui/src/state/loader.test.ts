import { describe, expect, it } from "vitest";
import type { Message, SessionDetail } from "../protocol/generated";
import { SessionLoader } from "./loader";
import { SessionStore } from "./store";

const message = (id: string, text: string): Message => ({
  id,
  session_id: "S",
  role: "user",
  type: "normal",
  created_at: 1,
  metadata: {},
  parts: [{ id: `${id}-p`, message_id: id, index: 0, created_at: 1, content: { type: "text", text } }],
});

const detail = (messages: Message[]): SessionDetail => ({
  session: { id: "S", title: "S", slug: "s", directory: "/p", project_id: "x", status: "idle", created_at: 1, updated_at: 2, version: "0.1" },
  agent: "build",
  messages,
  running: false,
  seq: 0,
  epoch: "E",
});

/** A fetch the test answers by hand, one request at a time. */
function manualFetch() {
  const pending: { resolve: (d: SessionDetail) => void; reject: (e: unknown) => void }[] = [];
  const fetch = () => new Promise<SessionDetail>((resolve, reject) => pending.push({ resolve, reject }));
  return { fetch, pending };
}

const stored = (m: Message) => ({ type: "message_stored" as const, message: m });
const ids = (store: SessionStore) => store.getState().messages.map((m) => m.id);
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("SessionLoader", () => {
  it("holds the events that arrive during a load and applies them on top of it", async () => {
    const store = new SessionStore("S", (cb) => cb());
    const { fetch, pending } = manualFetch();
    const loader = new SessionLoader(store, fetch);
    const done = loader.load();
    expect(loader.busy).toBe(true);
    // Stored while the load is on its way: not applied yet (the load would overwrite it).
    loader.event(stored(message("m2", "during")));
    expect(ids(store)).toEqual([]);
    pending[0]!.resolve(detail([message("m1", "before")]));
    expect(await done).toBe(true);
    expect(ids(store)).toEqual(["m1", "m2"]);
    expect(loader.busy).toBe(false);
    // No load under way: applied at once.
    loader.event(stored(message("m3", "after")));
    expect(ids(store)).toEqual(["m1", "m2", "m3"]);
  });

  it("runs once more after a load that was asked for while one ran, and never two at a time", async () => {
    const store = new SessionStore("S", (cb) => cb());
    const { fetch, pending } = manualFetch();
    const loaded: number[] = [];
    const loader = new SessionLoader(store, fetch, { loaded: (d) => loaded.push(d.messages.length) });
    const first = loader.load();
    const second = loader.load();
    const third = loader.load();
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(pending).toHaveLength(1);
    pending[0]!.resolve(detail([message("m1", "old")]));
    await tick();
    // The second run (the store may have changed since the first request was answered).
    expect(pending).toHaveLength(2);
    pending[1]!.resolve(detail([message("m1", "old"), message("m2", "new")]));
    expect(await first).toBe(true);
    expect(loaded).toEqual([1, 2]);
    expect(ids(store)).toEqual(["m1", "m2"]);
  });

  it("keeps what the store has when a load fails, and applies what it held", async () => {
    const store = new SessionStore("S", (cb) => cb());
    store.set({ ...store.getState(), messages: [message("m1", "kept")] });
    const { fetch, pending } = manualFetch();
    const failures: unknown[] = [];
    const loader = new SessionLoader(store, fetch, { failed: (e) => failures.push(e) });
    const done = loader.load();
    loader.event(stored(message("m2", "held")));
    pending[0]!.reject(new Error("offline"));
    expect(await done).toBe(false);
    expect(failures).toHaveLength(1);
    expect(ids(store)).toEqual(["m1", "m2"]);
  });

  it("drops a load that finishes after its owner went away", async () => {
    const store = new SessionStore("S", (cb) => cb());
    const { fetch, pending } = manualFetch();
    let alive = true;
    const loader = new SessionLoader(store, fetch, { wanted: () => alive });
    const done = loader.load();
    alive = false;
    pending[0]!.resolve(detail([message("m1", "late")]));
    expect(await done).toBe(false);
    expect(ids(store)).toEqual([]);
  });
});
