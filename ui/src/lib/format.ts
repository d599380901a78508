export function relativeTime(ms: number, now: number = Date.now()): string {
  const d = Math.max(0, now - ms);
  const s = Math.floor(d / 1000);
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  const days = Math.round(h / 24);
  if (days < 30) return `${days} d ago`;
  return new Date(ms).toLocaleDateString();
}

/** A date and time in the reader's locale ("12 Mar 2026, 14:05"). */
export function formatDate(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function formatCost(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

/** Costs of single sessions: four decimals below a dollar ($0.0123), so small ones still differ. */
export function formatCostFine(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 1) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** 1536 → "1.5 KB" (binary units, as `du -h` counts). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

export function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, "");
  const i = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  return i >= 0 ? trimmed.slice(i + 1) || trimmed : trimmed;
}

/** Tools of MCP servers are named `mcp__SERVER__TOOL`. */
export function isMcpTool(tool: string): boolean {
  return tool.startsWith("mcp__");
}

/**
 * `mcp__fixture__echo` → server `fixture`, tool `echo` (split at the first `__` after the
 * server: names are sanitised to `[A-Za-z0-9_-]`, so a server name with `__` reads ambiguously).
 * Null for other tools, and for a name cut before its tool part (64 characters at most).
 */
export function mcpToolName(tool: string): { server: string; tool: string } | null {
  if (!isMcpTool(tool)) return null;
  const rest = tool.slice("mcp__".length);
  const at = rest.indexOf("__");
  if (at <= 0 || at + 2 >= rest.length) return null;
  return { server: rest.slice(0, at), tool: rest.slice(at + 2) };
}

/** The short target of a tool call for its card header (path, command, pattern, URL). */
export function toolTarget(input: unknown): string {
  if (!input || typeof input !== "object") return "";
  const o = input as Record<string, unknown>;
  for (const k of ["path", "file_path", "filePath", "command", "pattern", "url", "query", "description"]) {
    const v = o[k];
    if (typeof v === "string" && v) return v.length > 80 ? `${v.slice(0, 77)}…` : v;
  }
  return "";
}

/** "allowed once by you", "denied by rule: …". */
/**
 * A shell command's sandbox, for its card: a short label and a longer
 * explanation (title), and whether it ran unconfined.
 */
export function describeSandbox(n: {
  mode: string;
  network?: string | null;
  mechanism?: string | null;
  unconfined?: string | null;
  blocked?: string | null;
  full?: boolean | null;
  limits?: string[];
  hosts?: { host: string; port: number; allowed: boolean; reason: string; program?: string | null }[];
}): { label: string; title: string; unconfined: boolean } {
  if (n.mode === "off") {
    const why =
      n.unconfined === "escalated"
        ? "you allowed it once outside the OS sandbox"
        : n.unconfined === "unavailable"
          ? "this machine has no OS sandbox; you allowed it"
          : "sandbox.mode is off";
    return { label: "unsandboxed", title: `Ran without the OS sandbox: ${why}.`, unconfined: true };
  }
  const net = n.network === "deny" ? "no network" : n.network === "ask" ? "network asks" : "network";
  const fallback = n.full === false;
  const blocked =
    n.blocked === "write"
      ? " It looks like the sandbox refused a write."
      : n.blocked === "network"
        ? " It looks like the sandbox refused a connection."
        : "";
  const hosts = (n.hosts ?? [])
    .map((h) => `${h.host}:${h.port} ${h.allowed ? "reached" : `refused (${h.reason})`}${h.program ? ` by ${h.program}` : ""}`)
    .join("; ");
  const limits = fallback && n.limits?.length ? ` The fallback could not hold: ${n.limits.join("; ")}.` : "";
  return {
    label: `sandboxed · ${n.mode} · ${net}${fallback ? " · fallback" : ""}${n.blocked ? ` · blocked ${n.blocked}` : ""}`,
    title: `Ran in the OS sandbox (${n.mechanism ?? "sandbox"}): ${
      n.mode === "read-only" ? "it could not write anywhere" : "it could write only the project, its /tmp and package caches"
    }; network ${n.network === "deny" ? "denied" : "through Mia Code's proxy"}.${hosts ? ` Hosts: ${hosts}.` : ""}${limits}${blocked}`,
    unconfined: false,
  };
}

export function describeDecision(d: { decision: string; by: string; reason: string; reply?: string }): string {
  const verb = d.decision === "allow" ? "allowed" : d.decision === "deny" ? "denied" : d.decision;
  const scope =
    d.reply === "once"
      ? " once"
      : d.reply === "session"
        ? " for this session"
        : d.reply === "project"
          ? " for this project"
          : d.reply === "never"
            ? " for this session"
            : "";
  const who = d.by === "user" ? "you" : d.by;
  const reason = d.reason && (d.by !== "user" || d.reply === "reject_with_feedback") ? `: ${d.reason}` : "";
  return `${verb}${scope} by ${who}${reason}`;
}
