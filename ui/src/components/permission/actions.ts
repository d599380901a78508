import type { PermissionReplyKind } from "../../protocol/generated";

/** The reply kinds a dialog can offer, in the order they are shown. */
export type ReplyKindName = PermissionReplyKind["kind"];

export interface ActionSpec {
  kind: ReplyKindName;
  label: string;
  testId: string;
  /** Deny-like actions are styled apart from allow-like ones. */
  tone: "allow" | "deny";
}

export const ACTIONS: readonly ActionSpec[] = [
  { kind: "once", label: "Allow once", testId: "permission-allow-once", tone: "allow" },
  { kind: "session", label: "Allow for this session", testId: "permission-allow-session", tone: "allow" },
  { kind: "project", label: "Always for this project", testId: "permission-allow-project", tone: "allow" },
  { kind: "deny", label: "Deny", testId: "permission-deny", tone: "deny" },
  { kind: "never", label: "Deny for this session", testId: "permission-never", tone: "deny" },
  { kind: "reject_with_feedback", label: "Deny with feedback", testId: "permission-feedback", tone: "deny" },
];

/** The actions offered by a request, in display order (unknown option names are ignored). */
export function offeredActions(options: readonly string[]): ActionSpec[] {
  return ACTIONS.filter((a) => options.includes(a.kind));
}

/**
 * What Escape sends: a plain deny, else "deny for this session".
 * Escape never allows, and never sends anything when no deny-like reply is offered.
 */
export function escapeReply(options: readonly string[]): PermissionReplyKind | null {
  if (options.includes("deny")) return { kind: "deny" };
  if (options.includes("never")) return { kind: "never" };
  return null;
}

/** The target's label, from what is being judged (display only). */
export function targetLabel(tool: string, target: string, hasSegments: boolean): string {
  // An MCP server's tool: the target names the server and how it runs (`MCP server "x" (stdio: …)`).
  if (tool.startsWith("mcp__")) return "From";
  if (hasSegments || tool === "bash") return "Command";
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return "URL";
  return "Path";
}

/** The HTTP method a `fetch` asks to use (its input's `method`, GET when it names none); null for other tools. */
export function fetchMethod(tool: string, input: unknown): string | null {
  // The names the permission engine counts as a fetch (its own tool is `fetch`, always a GET).
  if (tool !== "fetch" && tool !== "webfetch" && tool !== "web_fetch") return null;
  const m = input && typeof input === "object" ? (input as { method?: unknown }).method : undefined;
  return typeof m === "string" && /^[a-z]+$/i.test(m) ? m.toUpperCase() : "GET";
}

const MAX_ARGS_CHARS = 20_000;

/** Pretty JSON of a tool's input, cut at a size the dialog can show without slowing down. */
export function prettyInput(input: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    text = String(input);
  }
  if (text.length > MAX_ARGS_CHARS) {
    const rest = text.length - MAX_ARGS_CHARS;
    text = `${text.slice(0, MAX_ARGS_CHARS)}\n… ${rest.toLocaleString("en-US")} more characters`;
  }
  return text;
}
