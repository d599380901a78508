import { StatusIcon } from "./StatusIcon";
import { memo, useEffect, useId, useMemo, useState } from "react";
import type { Message, PermissionRequest } from "../protocol/generated";
import type { SessionState, ToolInfo } from "../state/session";
import { useSessionState, type SessionStore } from "../state/store";
import { describeDecision, formatCostFine, formatDuration, toolTarget } from "../lib/format";
import {
  isActive,
  parseTaskResult,
  statusLabel,
  taskInput,
  type SubagentInfo,
  type SubagentStatus,
} from "../lib/subagent";
import { Markdown } from "./Markdown";
import { HookRuns } from "./HookRuns";
import { Bot, ChevronDown, ChevronRight, Pause } from "lucide-react";

/** What a task card needs from the session view. */
export interface TaskCardActions {
  /** The child session's store (its steps, loaded on demand). */
  childSession?: (childId: string) => SessionStore;
  /** Loads a child once (a finished delegation opened). */
  loadChild?: (childId: string) => void;
  /** "Open as session". */
  onOpenSession?: (sessionId: string) => void;
}

/** A child's state, or null while there is no child (yet). */
function useChildState(store: SessionStore | null): SessionState | null {
  return useSessionState(store);
}

type CardStatus = SubagentStatus | "starting" | "stopped" | "blocked";

function excerpt(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function ChildTool({ info, running }: { info: ToolInfo; running: boolean }) {
  const done = info.output !== undefined;
  const status = !done ? (running ? "running" : "stopped") : info.isError ? "error" : "ok";
  const target = toolTarget(info.input);
  return (
    <li className={`task-tool tool-${status}`} data-testid="task-child-tool" data-tool={info.tool} data-status={status}>
      <span className="tool-name">{info.tool}</span>
      {target && <span className="tool-target mono">{target}</span>}
      <span className="tool-status" aria-label={status}>
        <StatusIcon status={status} />
      </span>
      {info.durationMs !== undefined && <span className="muted small">{formatDuration(info.durationMs)}</span>}
      {info.decision && <span className="muted small task-tool-decision">{describeDecision(info.decision)}</span>}
    </li>
  );
}

/** The child's steps as they happen: each step's text (shortened) and tool calls. */
function ChildThread({ child, ask }: { child: SessionState; ask: PermissionRequest | null }) {
  const steps: Message[] = useMemo(
    () => [...child.messages, ...child.live].filter((m) => m.role === "assistant" && m.type === "normal"),
    [child.messages, child.live],
  );
  if (steps.length === 0)
    return <p className="muted small task-empty">{child.running ? "The subagent is starting…" : "No steps recorded."}</p>;
  return (
    <ol className="task-thread" data-testid="task-thread" aria-label="What the subagent did">
      {steps.map((m, i) => {
        const texts = m.parts.flatMap((p) => (p.content.type === "text" && p.content.text.trim() ? [p.content.text] : []));
        const calls = m.parts.flatMap((p) => (p.content.type === "tool_call" ? [p.content] : []));
        const errors = m.parts.flatMap((p) => (p.content.type === "error" ? [p.content.message] : []));
        return (
          <li key={m.id} className="task-step" data-testid="task-step">
            <span className="task-step-n muted small">step {i + 1}</span>
            {texts.length > 0 && <span className="task-step-text">{excerpt(texts.join(" "), 240)}</span>}
            {calls.length > 0 && (
              <ul className="task-tools">
                {calls.map((c) => {
                  const info = child.tools[c.call_id] ?? { callId: c.call_id, tool: c.tool, input: c.input, messageId: m.id };
                  return <ChildTool key={c.call_id} info={info} running={child.running} />;
                })}
              </ul>
            )}
            {errors.map((e, j) => (
              <span key={j} className="error-text small">
                {e}
              </span>
            ))}
          </li>
        );
      })}
      {ask && (
        <li className="task-step task-step-ask muted small">
          waiting for your answer: {ask.tool} <span className="mono">{ask.target}</span>
        </li>
      )}
    </ol>
  );
}

/**
 * A delegation (the `task` tool): the subagent, its task, its status (queued, running, blocked
 * on an ask, and how it ended), its steps and tool calls live, duration and cost once finished,
 * the answer, and "Open as session". Expanded while it runs, collapsible.
 */
export const TaskCard = memo(function TaskCard({
  info,
  sub,
  permissions,
  running,
  actions,
}: {
  info: ToolInfo;
  /** What events said about it (absent: from the stored result only). */
  sub?: SubagentInfo;
  /** The open session's pending asks (its subagents' included). */
  permissions?: PermissionRequest[];
  running: boolean;
  actions: TaskCardActions;
}) {
  const input = taskInput(info.input);
  const done = info.output !== undefined;
  const result = useMemo(() => (done ? parseTaskResult(info.output ?? "") : null), [done, info.output]);
  const known: Partial<SubagentInfo> = { ...result?.info, ...sub };
  const childId = known.childId;
  const agent = known.agent || input.agent || "subagent";
  const description = known.description || input.description || excerpt(input.prompt, 80);

  const store = childId && actions.childSession ? actions.childSession(childId) : null;
  const child = useChildState(store);
  const nested = useMemo(
    () => new Set(Object.values(child?.subagents ?? {}).flatMap((s) => (s.childId ? [s.childId] : []))),
    [child?.subagents],
  );
  const ask =
    (childId && (permissions ?? []).find((p) => p.session_id === childId || nested.has(p.session_id))) || null;

  let status: CardStatus;
  if (known.status && (!done || !isActive(known.status))) status = known.status;
  else if (done) status = info.isError ? "error" : "completed";
  else status = running ? "starting" : "stopped";
  if (!running && (status === "running" || status === "queued" || status === "starting")) status = "stopped";
  if (ask && status !== "stopped") status = "blocked";
  const active = status === "queued" || status === "running" || status === "starting" || status === "blocked";

  const [open, setOpen] = useState<boolean | null>(null);
  const expanded = open ?? active;
  const bodyId = useId();

  // A finished delegation's steps load when its card is opened.
  const load = actions.loadChild;
  useEffect(() => {
    if (expanded && childId && load) load(childId);
  }, [expanded, childId, load]);

  const label =
    status === "starting"
      ? "starting"
      : status === "stopped"
        ? "stopped"
        : statusLabel(status === "blocked" ? "running" : status, status === "blocked");
  const liveSteps = child ? [...child.messages, ...child.live].filter((m) => m.role === "assistant").length : 0;
  const liveTools = child ? Object.values(child.tools).filter((t) => t.tool).length : 0;
  const steps = known.steps ?? (liveSteps || undefined);
  const toolCalls = known.toolCalls ?? (child ? liveTools : undefined);
  const answer = result?.answer.trim() ?? "";
  const failedToStart = done && !result?.info;

  return (
    <div
      className={`tool-card task-card task-${status}`}
      data-testid="task-card"
      data-call-id={info.callId}
      data-status={status}
      data-agent={agent}
      data-child-id={childId}
    >
      <div className="tool-head task-head">
        <button
          type="button"
          className="task-toggle"
          aria-expanded={expanded}
          aria-controls={bodyId}
          data-testid="task-toggle"
          onClick={() => setOpen(!expanded)}
        >
          <span className="chev" aria-hidden>
            {expanded ? <ChevronDown size={14} /> : <ChevronRight size={14} />}
          </span>
          <span className="task-icon" aria-hidden>
            <Bot size={14} />
          </span>
          <span className="agent-tag task-agent" data-testid="task-agent">
            {agent}
          </span>
          <span className="task-desc">{description}</span>
        </button>
        <span className={`task-badge badge-${status}`} data-testid="task-status" role="status">
          {label}
        </span>
        {known.durationMs !== undefined && !active && (
          <span className="muted small" data-testid="task-duration">
            {formatDuration(known.durationMs)}
          </span>
        )}
        {typeof known.costUsd === "number" && !active && (
          <span className="muted small" data-testid="task-cost" title="What the subagent's session cost">
            {formatCostFine(known.costUsd)}
          </span>
        )}
      </div>
      {info.hooks && <HookRuns runs={info.hooks} />}
      {ask && (
        <div className="task-blocked" data-testid="task-blocked">
          <Pause size={12} aria-hidden /> {agent} is waiting for your answer: <strong>{ask.tool}</strong> <span className="mono">{ask.target}</span>
        </div>
      )}
      <div id={bodyId} className="task-body" hidden={!expanded} data-testid="task-body">
        {expanded && (
          <>
            {input.prompt && (
              <details className="task-prompt">
                <summary className="small muted">The task given to {agent}</summary>
                <div className="task-prompt-text">{input.prompt}</div>
              </details>
            )}
            {child?.session || (child && child.messages.length > 0) ? (
              <ChildThread child={child} ask={ask} />
            ) : childId ? (
              <p className="muted small task-empty">Loading the subagent's steps…</p>
            ) : failedToStart ? null : (
              <p className="muted small task-empty">
                {status === "queued"
                  ? "Waiting for a free slot (3 subagents run at a time)…"
                  : "Waiting for the subagent to start…"}
              </p>
            )}
            {done && (answer || failedToStart) && (
              <div className={`task-answer${info.isError ? " task-answer-error" : ""}`} data-testid="task-answer">
                {failedToStart ? (
                  <pre className="tool-output">{info.output}</pre>
                ) : (
                  <>
                    <div className="small muted">The answer {agent} returned:</div>
                    <Markdown text={answer} />
                  </>
                )}
              </div>
            )}
          </>
        )}
        <div className="task-foot small">
          <span className="muted" data-testid="task-figures">
            {[
              steps !== undefined ? `${steps} step${steps === 1 ? "" : "s"}` : null,
              toolCalls !== undefined ? `${toolCalls} tool call${toolCalls === 1 ? "" : "s"}` : null,
              known.durationMs !== undefined && !active ? formatDuration(known.durationMs) : null,
              typeof known.costUsd === "number" && !active ? formatCostFine(known.costUsd) : null,
            ]
              .filter(Boolean)
              .join(" · ")}
          </span>
          {childId && actions.onOpenSession && (
            <button
              type="button"
              className="link-btn small"
              data-testid="task-open-session"
              onClick={() => actions.onOpenSession?.(childId)}
            >
              Open as session ↗
            </button>
          )}
        </div>
      </div>
    </div>
  );
});
