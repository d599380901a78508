import type { Event } from "../protocol/generated";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
/**
 * `open`: connected (load what is shown); `reconnecting`: the connection is lost;
 * `lagged`: Events were missed (reload what is shown); `resumed`: connected again
 * and nothing was missed (the stream went on where it was, no reload needed).
 */
export type StreamState = "open" | "reconnecting" | "lagged" | "resumed";

/** The stream's first message: the runtime process's epoch and what could not be resumed. */
export interface StreamHello {
  epoch: string;
  /** `none`: every session named was resumed; `all`: reload everything; else these sessions. */
  reset: "none" | "all" | string[];
}

/** Where a client stands: the epoch and the last Event number it applied of each session. */
export interface StreamCursor {
  epoch: string;
  seqs: Record<string, number>;
}

export interface StreamOptions {
  /** Read on every (re)connect: resume from here instead of starting afresh. */
  resume?: () => StreamCursor | null;
  onHello?: (h: StreamHello) => void;
}

/** One way to talk to the runtime: HTTP + SSE in a browser, Tauri IPC in the desktop app. */
export interface Transport {
  /** Throws ApiError for non-2xx answers (message = the server's `{"error"}` text). */
  request<T>(method: HttpMethod, path: string, body?: unknown): Promise<T>;
  /** Streams Events of one session (or all, with null). Returns the unsubscribe function. */
  subscribe(
    sessionId: string | null,
    onEvent: (e: Event, seq?: number) => void,
    onState?: (s: StreamState) => void,
    opts?: StreamOptions,
  ): () => void;
  /** Retries a lost stream now instead of at its next backoff step (the banner's "Retry now"). */
  reconnect?(): void;
}

/** Where updates of the desktop app stand (src-tauri/src/updates.rs). */
export interface UpdateStatus {
  current: string;
  /** Built with the release key and manifest URL. */
  channel: boolean;
  /** How this copy gets a new version. */
  installer: "self-update" | "package-manager" | "none";
  state: "idle" | "checking" | "up-to-date" | "available" | "installing" | "failed";
  available?: { version: string; notes?: string; date?: string };
  error?: string;
}

/** The desktop app's updater; absent in a browser. */
export interface Updates {
  status(): Promise<UpdateStatus>;
  check(): Promise<UpdateStatus>;
  /** Downloads, verifies and installs, then the app restarts. */
  install(): Promise<void>;
}

/** What differs between the desktop app and a browser tab. */
export interface Platform {
  /** The updater (desktop only). */
  updates?: Updates;
  /** Files dropped on the window, with their paths (desktop only: the webview gets no paths). Returns the unsubscribe function. */
  onFileDrop?: (cb: (paths: string[]) => void) => () => void;
  kind: "desktop" | "browser";
  /** A native folder dialog; null in a browser (the UI shows a path field instead) or when cancelled. */
  pickFolder(): Promise<string | null>;
  /**
   * An OS notification when the window is in the background. `onClick`: what
   * clicking it does (the browser says when it is clicked; the desktop app,
   * whose Linux notifications report no clicks, runs it when the window is
   * focused again within two minutes).
   */
  notify(title: string, body: string, onClick?: () => void): void;
  openExternal(url: string): void;
}

export class ApiError extends Error {
  readonly status: number;
  /** The answer's body, when it was JSON (a 409 on undo carries a RevertSummary). */
  readonly body: unknown;
  constructor(status: number, message: string, body?: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.body = body;
  }
}

/** The server's `{"error": "..."}` text, or a generic line. */
export function errorText(status: number, body: unknown): string {
  if (body && typeof body === "object" && "error" in body) {
    const e = body.error;
    if (typeof e === "string" && e) return e;
  }
  if (typeof body === "string" && body.trim()) return body.trim();
  return `Request failed (HTTP ${status})`;
}

/**
 * Every Event type name: SSE event names equal the Event's `type`. A record over the union, so a
 * new Event variant that is not listed here fails the typecheck (an unlisted one is never heard).
 */
const EVENT_NAMES: Record<Event["type"], true> = {
  session_updated: true,
  message_stored: true,
  step_started: true,
  text_delta: true,
  reasoning_delta: true,
  tool_call: true,
  tool_output: true,
  context_usage: true,
  permission_asked: true,
  permission_resolved: true,
  tool_result: true,
  tool_content: true,
  snapshot: true,
  retrying: true,
  agent_switched: true,
  error: true,
  notice: true,
  hook_ran: true,
  turn_finished: true,
  compaction_started: true,
  compaction_finished: true,
  compaction_failed: true,
  subagent_queued: true,
  subagent_started: true,
  subagent_finished: true,
  worktree_log: true,
};

export const EVENT_TYPES: readonly Event["type"][] = Object.keys(EVENT_NAMES) as Event["type"][];
