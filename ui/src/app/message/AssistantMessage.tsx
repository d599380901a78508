import { useState } from "react";
import type { Message, Part, PermissionRequest } from "../../protocol/generated";
import type { ToolInfo } from "../../state/session";
import { formatCost, formatTokens } from "../../lib/format";
import { splitCommentary } from "../../lib/commentary";
import { modelSource, modelSourceText, TASK_TOOL, type SubagentInfo } from "../../lib/subagent";
import { Markdown } from "../Markdown";
import { TaskCard } from "../TaskCard";
import { ToolCard } from "../ToolCard";
import type { MessageActions } from "./actions";
import { MessageMenu } from "./MessageMenu";
import { ChevronDown, ChevronRight } from "lucide-react";

/**
 * Keys for a message's parts that survive the stored message replacing its
 * streamed draft (whose parts have other ids): the part type and its ordinal
 * among parts of that type.
 */
function partKeys(parts: Part[]): [string, Part][] {
  const seen: Record<string, number> = {};
  return parts.map((p) => {
    const t = p.content.type;
    const n = seen[t] ?? 0;
    seen[t] = n + 1;
    return [`${t}-${n}`, p];
  });
}

function Reasoning({ text, streaming }: { text: string; streaming: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="reasoning">
      <button type="button" className="link-btn" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        {open ? <ChevronDown size={12} aria-hidden /> : <ChevronRight size={12} aria-hidden />} Thinking{streaming ? "…" : ""}
      </button>
      {open && <div className="reasoning-text">{text}</div>}
    </div>
  );
}

function Commentary({ perspective, text }: { perspective: string; text: string }) {
  const mia = perspective === "mia";
  return (
    <div className={`commentary commentary-${mia ? "mia" : "miette"}`} data-testid="commentary">
      <span className="commentary-label">{mia ? "🧠 Mia" : "🌸 Miette"}</span>
      <span className="commentary-text">{text}</span>
    </div>
  );
}

function AssistantPart({
  part,
  tools,
  subagents,
  permissions,
  streaming,
  running,
  hideCommentary,
  isLast,
  actions,
}: {
  part: Part;
  tools: Record<string, ToolInfo>;
  subagents?: Record<string, SubagentInfo>;
  permissions?: PermissionRequest[];
  streaming: boolean;
  running: boolean;
  hideCommentary: boolean;
  isLast: boolean;
  actions: MessageActions;
}) {
  const c = part.content;
  switch (c.type) {
    case "text": {
      // A draft shows its 🧠/🌸 lines as commentary already, as the stored message will. The
      // element structure is the same for both, so when the stored message replaces the draft
      // React keeps the rendered markdown and re-parses only what changed.
      const { body, notes } = streaming ? splitCommentary(c.text) : { body: c.text, notes: [] };
      return (
        <>
          {body.trim() ? (
            <div className="assistant-text" data-testid="assistant-text">
              <Markdown text={body} streaming={streaming} />
            </div>
          ) : null}
          {!hideCommentary && notes.map((n, i) => <Commentary key={i} perspective={n.perspective} text={n.text} />)}
        </>
      );
    }
    case "reasoning":
      return <Reasoning text={c.text} streaming={streaming} />;
    case "commentary":
      return hideCommentary ? null : <Commentary perspective={c.perspective} text={c.text} />;
    case "tool_call": {
      const info = tools[c.call_id] ?? { callId: c.call_id, tool: c.tool, input: c.input, messageId: part.message_id };
      if (c.tool === TASK_TOOL)
        return (
          <TaskCard
            info={info}
            sub={subagents?.[c.call_id]}
            permissions={permissions}
            running={running}
            actions={actions}
          />
        );
      return <ToolCard info={info} running={running} onDiff={actions.onDiffStep} />;
    }
    case "error":
      return (
        <div className="part-error" role="alert">
          <span>
            {c.message} <span className="muted">({c.kind})</span>
          </span>
          {isLast && !running && (
            <button type="button" className="btn small" data-testid="retry" onClick={actions.onRetry}>
              Retry
            </button>
          )}
        </div>
      );
    case "subagent":
      // The link from a task call to its child session: the task card shows it.
      return null;
    case "image":
      return <div className="muted small">[image: {c.media_type}]</div>;
    case "file":
      return <span className="chip mono">@{c.path}</span>;
    default:
      // tool_result and snapshot parts are shown inside their tool card.
      return null;
  }
}

export function AssistantMessage(props: {
  message: Message;
  tools: Record<string, ToolInfo>;
  subagents?: Record<string, SubagentInfo>;
  permissions?: PermissionRequest[];
  streaming: boolean;
  running: boolean;
  hideCommentary: boolean;
  isLast: boolean;
  actions: MessageActions;
}) {
  const { message, tools } = props;
  const meta = message.metadata;
  const changesFiles = message.parts.some(
    (p) => p.content.type === "tool_call" && (tools[p.content.call_id]?.files?.length ?? 0) > 0,
  );
  return (
    <div
      className={`msg msg-assistant${props.streaming ? " streaming" : ""}`}
      data-testid="message-assistant"
      data-message-id={message.id}
    >
      {/* Who answered, with which model, for how much: shown while the message is hovered or focused. */}
      <div className="msg-meta">
        <span className="msg-meta-detail" data-testid="message-meta">
          {meta.agent && <span className="agent-tag">{meta.agent}</span>}
          {meta.model && (
            <span className="muted mono small" data-testid="message-model" title={modelTitle(meta.model, modelSource(meta))}>
              {meta.model}
            </span>
          )}
          {meta.tokens && (
            <span className="muted small" data-testid="message-tokens" title="tokens in / out">
              ↑{formatTokens(meta.tokens.input)} ↓{formatTokens(meta.tokens.output)}
            </span>
          )}
          {typeof meta.cost_usd === "number" && <span className="muted small">{formatCost(meta.cost_usd)}</span>}
        </span>
        {changesFiles && !props.streaming && (
          <button
            type="button"
            className="link-btn small"
            data-testid="message-diff"
            onClick={() => props.actions.onDiffMessage(message.id)}
          >
            Diff of this message
          </button>
        )}
        {!props.streaming && (
          <span className="msg-meta-menu">
            <MessageMenu message={message} actions={props.actions} />
          </span>
        )}
      </div>
      {partKeys(message.parts).map(([key, p]) => (
        <AssistantPart key={key} part={p} {...props} />
      ))}
      {props.streaming && message.parts.length === 0 && <div className="muted small">…</div>}
    </div>
  );
}

function modelTitle(model: string, source: string | null): string {
  const why = modelSourceText(source);
  return why ? `Model ${model}: ${why}` : `Model ${model}`;
}
