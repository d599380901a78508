import { Retries } from "./retries";
import type { Event } from "../protocol/generated";
import {
  ApiError,
  EVENT_TYPES,
  errorText,
  type HttpMethod,
  type Platform,
  type StreamHello,
  type StreamOptions,
  type StreamState,
  type Transport,
} from "./types";

/** The subset of EventSource the transport uses (a fake one is injected in tests). */
export interface EventSourceLike {
  addEventListener(type: string, listener: (e: MessageEvent) => void): void;
  onerror: ((e: globalThis.Event) => void) | null;
  onopen: ((e: globalThis.Event) => void) | null;
  close(): void;
}
export type EventSourceCtor = new (url: string) => EventSourceLike;
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
/** Schedules a reconnect; injectable so tests need no timers. */
export type Scheduler = (fn: () => void, ms: number) => unknown;

export interface HttpTransportOptions {
  token: string;
  /** Origin + prefix, "" = the page's own origin. */
  baseUrl?: string;
  fetch?: FetchLike;
  EventSource?: EventSourceCtor;
  schedule?: Scheduler;
}

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];

export class HttpTransport implements Transport {
  private readonly token: string;
  private readonly base: string;
  private readonly fetchFn: FetchLike;
  private readonly ES: EventSourceCtor | undefined;
  private readonly retries: Retries;

  constructor(opts: HttpTransportOptions) {
    this.token = opts.token;
    this.base = opts.baseUrl ?? "";
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.ES = opts.EventSource ?? (typeof EventSource === "undefined" ? undefined : EventSource);
    this.retries = new Retries(opts.schedule ?? ((fn, ms) => setTimeout(fn, ms)));
  }

  async request<T>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.token}` };
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res: Response;
    try {
      res = await this.fetchFn(this.base + path, init);
    } catch (e) {
      throw new ApiError(0, `Cannot reach mia-code serve: ${e instanceof Error ? e.message : String(e)}`);
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!res.ok) throw new ApiError(res.status, errorText(res.status, parsed), parsed);
    return parsed as T;
  }

  subscribe(
    sessionId: string | null,
    onEvent: (e: Event, seq?: number) => void,
    onState?: (s: StreamState) => void,
    opts: StreamOptions = {},
  ): () => void {
    let closed = false;
    let attempt = 0;
    let source: EventSourceLike | null = null;
    let cancelRetry: (() => void) | null = null;

    const url = () => {
      const params = new URLSearchParams();
      if (sessionId) params.set("session", sessionId);
      const cursor = opts.resume?.();
      if (cursor) {
        params.set("epoch", cursor.epoch);
        params.set(
          "since",
          Object.entries(cursor.seqs)
            .map(([id, seq]) => `${id}:${seq}`)
            .join(","),
        );
      }
      params.set("token", this.token);
      return `${this.base}/api/events?${params.toString()}`;
    };
    const dispatch = (e: MessageEvent) => {
      if (typeof e.data !== "string") return;
      let parsed: Event;
      try {
        parsed = JSON.parse(e.data) as Event;
      } catch {
        return; /* a malformed event is dropped; the next reload repairs the view */
      }
      // The session's Event number (the SSE id; an Event of no session has none).
      const seq = Number(e.lastEventId);
      onEvent(parsed, Number.isFinite(seq) && seq > 0 ? seq : undefined);
    };
    const connect = () => {
      if (closed || !this.ES) return;
      const es = new this.ES(url());
      source = es;
      for (const name of EVENT_TYPES) es.addEventListener(name, dispatch);
      es.addEventListener("hello", (e) => {
        try {
          opts.onHello?.(JSON.parse(String(e.data)) as StreamHello);
        } catch {
          /* not a hello this client understands */
        }
      });
      es.addEventListener("lagged", () => {
        if (!opts.resume) {
          onState?.("lagged");
          return;
        }
        // Resume where this client is instead of reloading.
        if (source !== es) return;
        es.close();
        source = null;
        connect();
      });
      es.onopen = () => {
        attempt = 0;
        onState?.("open");
      };
      es.onerror = () => {
        if (closed || source !== es) return;
        es.close();
        source = null;
        onState?.("reconnecting");
        const delay = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)] ?? 8000;
        attempt += 1;
        cancelRetry = this.retries.after(delay, connect);
      };
    };
    connect();
    return () => {
      closed = true;
      source?.close();
      source = null;
      cancelRetry?.();
    };
  }

  reconnect(): void {
    this.retries.now();
  }
}

const TOKEN_KEY = "mia-code.token";

/** Reads `#token=` from the address, moves it to sessionStorage and removes it from the URL. */
export function takeToken(loc: Location = window.location, storage: Storage = window.sessionStorage): string | null {
  const hash = loc.hash.startsWith("#") ? loc.hash.slice(1) : loc.hash;
  const params = new URLSearchParams(hash);
  const fromHash = params.get("token");
  if (fromHash) {
    storage.setItem(TOKEN_KEY, fromHash);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(history.state, "", loc.pathname + loc.search + (rest ? `#${rest}` : ""));
    return fromHash;
  }
  return storage.getItem(TOKEN_KEY);
}

export function saveToken(token: string, storage: Storage = window.sessionStorage): void {
  storage.setItem(TOKEN_KEY, token);
}

export function forgetToken(storage: Storage = window.sessionStorage): void {
  storage.removeItem(TOKEN_KEY);
}

export const browserPlatform: Platform = {
  kind: "browser",
  pickFolder: () => Promise.resolve(null),
  notify(title, body, onClick) {
    // Only when the user is elsewhere: the tab hidden, or the window behind another.
    if ((!document.hidden && document.hasFocus()) || typeof Notification === "undefined") return;
    const show = () => {
      const n = new Notification(title, { body });
      n.onclick = () => {
        window.focus();
        onClick?.();
        n.close();
      };
    };
    if (Notification.permission === "granted") show();
    else if (Notification.permission !== "denied") {
      void Notification.requestPermission().then((p) => {
        if (p === "granted") show();
      });
    }
  },
  openExternal(url) {
    window.open(url, "_blank", "noopener");
  },
};
