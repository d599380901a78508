import { Retries } from "./retries";
import type { Event } from "../protocol/generated";
import {
  ApiError,
  errorText,
  type HttpMethod,
  type Platform,
  type StreamHello,
  type StreamOptions,
  type StreamState,
  type Transport,
  type UpdateStatus,
} from "./types";

export type InvokeFn = <T>(cmd: string, args?: Record<string, unknown>) => Promise<T>;
/** The part of `@tauri-apps/api/core`'s Channel the transport uses. */
export interface ChannelLike<T> {
  onmessage: (message: T) => void;
}
export type ChannelCtor = new <T>() => ChannelLike<T>;

interface ApiAnswer {
  status: number;
  body: unknown;
}

/** Desktop: the same router in-process via `invoke("api")`, Events over one Channel per subscription. */
export class TauriTransport implements Transport {
  private readonly retries: Retries;

  constructor(
    private readonly invoke: InvokeFn,
    private readonly Channel: ChannelCtor,
    schedule: (fn: () => void, ms: number) => unknown = (fn, ms) => setTimeout(fn, ms),
  ) {
    this.retries = new Retries(schedule);
  }

  reconnect(): void {
    this.retries.now();
  }

  async request<T>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
    let answer: ApiAnswer;
    try {
      answer = await this.invoke<ApiAnswer>("api", { method, path, body: body ?? null });
    } catch (e) {
      throw new ApiError(0, e instanceof Error ? e.message : String(e));
    }
    if (answer.status >= 400) throw new ApiError(answer.status, errorText(answer.status, answer.body), answer.body);
    return answer.body as T;
  }

  subscribe(
    sessionId: string | null,
    onEvent: (e: Event, seq?: number) => void,
    onState?: (s: StreamState) => void,
    opts: StreamOptions = {},
  ): () => void {
    // The channel carries arrays of items (what arrived within a frame): a hello first, then
    // `{seq, event}`, and `{"type": "lagged", "missed": n}` when the subscriber fell behind.
    type Item = { seq: number; event: Event } | ({ type: "hello" } & StreamHello) | { type: "lagged"; missed?: number };
    type Message = Item | Item[];
    let closed = false;
    // A refused subscription (the backend not ready yet) is retried with backoff.
    let attempt = 0;
    let current: Promise<number | null> = Promise.resolve(null);
    let cancelRetry: (() => void) | null = null;
    const connect = () => {
      const ch = new this.Channel<Message>();
      let live = true;
      const one = (m: Item) => {
        if (closed || !live) return;
        if ("event" in m) onEvent(m.event, m.seq > 0 ? m.seq : undefined);
        else if (m.type === "hello") opts.onHello?.({ epoch: m.epoch, reset: m.reset });
        else if (!opts.resume) onState?.("lagged");
        else {
          // Resume where this client is instead of reloading.
          live = false;
          const old = current;
          void old.then((id) => {
            if (id !== null) void this.invoke("unsubscribe", { id }).catch(() => undefined);
          });
          connect();
        }
      };
      ch.onmessage = (m) => {
        if (Array.isArray(m)) for (const item of m) one(item);
        else one(m);
      };
      const cursor = opts.resume?.() ?? null;
      current = this.invoke<number>("subscribe", {
        session: sessionId,
        epoch: cursor?.epoch ?? null,
        since: cursor?.seqs ?? null,
        onEvent: ch,
      }).then(
        (id) => {
          if (closed) {
            void this.invoke("unsubscribe", { id }).catch(() => undefined);
            return null;
          }
          attempt = 0;
          onState?.("open");
          return id;
        },
        () => {
          if (!closed) {
            onState?.("reconnecting");
            cancelRetry = this.retries.after(Math.min(8000, 500 * 2 ** attempt++), () => {
              if (!closed) connect();
            });
          }
          return null;
        },
      );
    };
    connect();
    return () => {
      closed = true;
      cancelRetry?.();
      void current.then((id) => {
        if (id !== null) void this.invoke("unsubscribe", { id }).catch(() => undefined);
      });
    };
  }
}

/** Desktop platform: native dialog, notifications and the system browser (plugins loaded on demand). */
export const desktopPlatform: Platform = {
  kind: "desktop",
  onFileDrop(cb) {
    let stop: (() => void) | null = null;
    let gone = false;
    void import("@tauri-apps/api/webview")
      .then((w) =>
        w.getCurrentWebview().onDragDropEvent((e) => {
          if (e.payload.type === "drop" && e.payload.paths.length) cb(e.payload.paths);
        }),
      )
      .then((un) => {
        if (gone) un();
        else stop = un;
      })
      .catch(() => undefined);
    return () => {
      gone = true;
      stop?.();
    };
  },
  updates: {
    status: async () => (await import("@tauri-apps/api/core")).invoke<UpdateStatus>("update_status"),
    check: async () => (await import("@tauri-apps/api/core")).invoke<UpdateStatus>("update_check"),
    install: async () => (await import("@tauri-apps/api/core")).invoke<void>("update_install"),
  },
  async pickFolder() {
    const { open } = await import("@tauri-apps/plugin-dialog");
    const picked = await open({ directory: true, multiple: false });
    return typeof picked === "string" ? picked : null;
  },
  notify(title, body, onClick) {
    if (document.hasFocus()) return;
    if (onClick) whenFocused(onClick);
    void (async () => {
      const n = await import("@tauri-apps/plugin-notification");
      let granted = await n.isPermissionGranted();
      if (!granted) granted = (await n.requestPermission()) === "granted";
      if (granted) n.sendNotification({ title, body });
    })().catch(() => undefined);
  },
  openExternal(url) {
    void import("@tauri-apps/plugin-opener").then((o) => o.openUrl(url)).catch(() => undefined);
  },
};

/** What a desktop notification's click should do: run when the window is focused again soon. */
const CLICK_WINDOW_MS = 120_000;
let pendingClick: { run: () => void; at: number } | null = null;
export function whenFocused(run: () => void, now: () => number = Date.now): void {
  const first = pendingClick === null;
  pendingClick = { run, at: now() };
  if (!first) return;
  window.addEventListener(
    "focus",
    () => {
      const p = pendingClick;
      pendingClick = null;
      if (p && now() - p.at <= CLICK_WINDOW_MS) p.run();
    },
    { once: true },
  );
}

export async function createTauriTransport(): Promise<TauriTransport> {
  const core = await import("@tauri-apps/api/core");
  return new TauriTransport(core.invoke, core.Channel);
}
