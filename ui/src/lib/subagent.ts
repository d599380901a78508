import type { Message } from "../protocol/generated";

/** The tool the model delegates with (spec 015). */
export const TASK_TOOL = "task";

/** Where a delegation is: waiting for a slot, running, or how it ended. */
export type SubagentStatus = "queued" | "running" | "completed" | "timeout" | "cancelled" | "error";

/** What the UI knows about one `task` call's subagent, from events or from the stored result. */
export interface SubagentInfo {
  callId: string;
  agent: string;
  status: SubagentStatus;
  /** The child session (known once it started). */
  childId?: string;
  description?: string;
  durationMs?: number;
  steps?: number;
  toolCalls?: number;
  costUsd?: number | null;
}

/** The `task` tool's arguments, as far as they are there. */
export interface TaskInput {
  agent: string;
  prompt: string;
  description: string;
}

export function taskInput(input: unknown): TaskInput {
  const o = input && typeof input === "object" ? (input as Record<string, unknown>) : {};
  const str = (k: string) => (typeof o[k] === "string" ? o[k] : "");
  return { agent: str("agent"), prompt: str("prompt"), description: str("description") };
}

const STATUSES: readonly SubagentStatus[] = ["queued", "running", "completed", "timeout", "cancelled", "error"];

export function asStatus(s: string): SubagentStatus {
  return (STATUSES as readonly string[]).includes(s) ? (s as SubagentStatus) : "error";
}

/** Still going: queued or running (blocked on an ask is running). */
export function isActive(s: SubagentStatus): boolean {
  return s === "queued" || s === "running";
}

// "[subagent general — completed, 3 steps, 2 tool calls, 120 input / 40 output tokens, $0.0012, 1.2 s; session <id>]"
const TRAILER = /\n*\[subagent (\S+) — (\w+)([^\]]*); session ([0-9a-fA-F-]+)\]\s*$/;

export interface TaskResult {
  /** The subagent's final answer (the trailer taken off). */
  answer: string;
  info: Omit<SubagentInfo, "callId"> | null;
}

/** Splits a `task` call's result into the answer and the trailer's figures. */
export function parseTaskResult(output: string): TaskResult {
  const m = TRAILER.exec(output);
  if (!m) return { answer: output, info: null };
  const rest = m[3] ?? "";
  const num = (re: RegExp) => {
    const x = re.exec(rest);
    return x ? Number(x[1]) : undefined;
  };
  const seconds = num(/, ([\d.]+) s$/);
  const cost = num(/\$([\d.]+)/);
  return {
    answer: output.slice(0, m.index).trimEnd(),
    info: {
      agent: m[1]!,
      status: asStatus(m[2]!),
      childId: m[4]!,
      steps: num(/(\d+) steps?/),
      toolCalls: num(/(\d+) tool calls?/),
      durationMs: seconds === undefined ? undefined : Math.round(seconds * 1000),
      costUsd: cost ?? null,
    },
  };
}

/** The delegations of stored messages (a session loaded after its tasks ran). */
export function subagentsOf(messages: Message[]): Record<string, SubagentInfo> {
  const out: Record<string, SubagentInfo> = {};
  for (const m of messages)
    for (const p of m.parts) {
      const c = p.content;
      if (c.type === "tool_result" && c.tool === TASK_TOOL) {
        const { info } = parseTaskResult(c.output);
        if (info) out[c.call_id] = { callId: c.call_id, ...info };
      }
    }
  return out;
}

export function statusLabel(s: SubagentStatus, blocked: boolean): string {
  if (blocked) return "blocked: waiting for your answer";
  switch (s) {
    case "queued":
      return "queued (waiting for a free slot)";
    case "running":
      return "running";
    case "completed":
      return "completed";
    case "timeout":
      return "timed out (partial result)";
    case "cancelled":
      return "cancelled";
    default:
      return "error";
  }
}

/** Where an assistant message's model came from (`metadata.model_source`, spec 016). */
export function modelSourceText(source: unknown): string | null {
  switch (source) {
    case "override":
      return "chosen for this turn (override)";
    case "agent":
      return "the agent's own model (agent config)";
    case "session":
      return "the session's model (/model)";
    case "config":
      return "the default model (config)";
    default:
      return typeof source === "string" && source ? source : null;
  }
}

/** The model source of a message's metadata: flattened on the wire (`model_source`), or under `extra`. */
export function modelSource(meta: Record<string, unknown>): string | null {
  const direct = meta.model_source;
  if (typeof direct === "string") return direct;
  const extra = meta.extra;
  if (extra && typeof extra === "object" && "model_source" in extra) {
    const v = (extra as Record<string, unknown>).model_source;
    if (typeof v === "string") return v;
  }
  return null;
}
