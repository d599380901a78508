import { memo, useEffect, useId, useMemo, useRef, useState } from "react";
import type { Message, Part, PermissionRequest } from "../protocol/generated";
import { toolsOf, type ToolInfo } from "../state/session";
import type { MarkerMemory } from "../state/liveSessions";
import { formatCost, formatTokens } from "../lib/format";
import { errorMessage } from "../lib/api";
import { compactionInfo, markerText, plural, triggerDetail } from "../lib/compaction";
import { Markdown } from "./Markdown";
import { splitCommentary } from "../lib/commentary";
import { ToolCard } from "./ToolCard";
import { TaskCard, type TaskCardActions } from "./TaskCard";
import { modelSource, modelSourceText, TASK_TOOL, type SubagentInfo } from "../lib/subagent";
import { MenuButton } from "./MenuButton";

export interface MessageActions extends TaskCardActions {
  onDiffStep: (callId: string) => void;
  onDiffMessage: (messageId: string) => void;
  onRetry: () => void;
  /** "Fork from here" / "Fork with files from here" in a message's menu. */
  onFork?: (messageId: string, withFiles: boolean) => void;
  /** Opens a session (the fork marker's link to the parent), optionally at one of its messages. */
  onOpenSession?: (sessionId: string, messageId?: string) => void;
  /** A session's title, when known (the fork marker names the parent). */
  sessionTitle?: (sessionId: string) => string | undefined;
  /** The messages a compaction summary replaced (GET ?archived=true, those `compacted_by` it). */
  loadArchived?: (summaryId: string) => Promise<Message[]>;
  /** What each compaction marker has open, by summary id (kept while its row leaves the virtualised list). */
  markers?: Map<string, MarkerMemory>;
}

export type { MarkerMemory } from "../state/liveSessions";

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
        {open ? "▾" : "▸"} Thinking{streaming ? "…" : ""}
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

function textOf(m: Message): string {
  return m.parts.map((p) => (p.content.type === "text" ? p.content.text : "")).join("");
}

function MessageMenu({ message, actions }: { message: Message; actions: MessageActions }) {
  const fork = actions.onFork;
  if (!fork) return null;
  return (
    <MenuButton
      label="Message actions"
      className="icon-btn msg-menu"
      testId="message-menu"
      items={[
        { label: "Fork from here", testId: "fork-here", onSelect: () => fork(message.id, false) },
        { label: "Fork with files from here", testId: "fork-files-here", onSelect: () => fork(message.id, true) },
      ]}
    />
  );
}

function UserMessage({ message, actions }: { message: Message; actions: MessageActions }) {
  const files = message.parts.filter((p) => p.content.type === "file");
  return (
    <div className="msg msg-user" data-testid="message-user" data-message-id={message.id}>
      <span className="msg-user-menu">
        <MessageMenu message={message} actions={actions} />
      </span>
      <div className="user-text">{textOf(message)}</div>
      {files.map((p) =>
        p.content.type === "file" ? (
          <span key={p.id} className="chip mono">
            @{p.content.path}
          </span>
        ) : null,
      )}
    </div>
  );
}

const FORK_MARKER = /^Forked from session (\S+) at message (\S+)/;

function excerpt(text: string, max = 90): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/**
 * The marker at the start of a fork's own part: a divider naming the parent
 * (a link that opens it at the fork point) and, for a fork with files, its worktree.
 */
function ForkNotice({ message, forkPoint, actions }: { message: Message; forkPoint?: string; actions: MessageActions }) {
  const texts = message.parts.flatMap((p) => (p.content.type === "text" ? [p.content.text] : []));
  const m = FORK_MARKER.exec(texts[0] ?? "");
  const parentId = m?.[1];
  const pointId = m?.[2];
  const rest = texts.slice(m ? 1 : 0);
  const parentTitle = (parentId && actions.sessionTitle?.(parentId)) || "the parent session";
  const point = forkPoint ? excerpt(forkPoint) : "";
  return (
    <div className="msg fork-notice" data-testid="message-fork" data-parent-id={parentId} role="note" aria-label="Fork point">
      <div className="fork-divider">
        <span className="fork-rule" aria-hidden />
        <span className="fork-text">
          <span aria-hidden>⎇ </span>Forked from{" "}
          {parentId && actions.onOpenSession ? (
            <button
              type="button"
              className="link-btn"
              data-testid="fork-parent-link"
              title="Open the parent session at the fork point"
              onClick={() => actions.onOpenSession?.(parentId, pointId)}
            >
              {parentTitle}
            </button>
          ) : (
            <strong>{parentTitle}</strong>
          )}{" "}
          at {point ? <q className="fork-point">{point}</q> : <>message {pointId ? pointId.slice(0, 8) : "?"}</>}
        </span>
        <span className="fork-rule" aria-hidden />
      </div>
      {rest.map((t, i) => (
        <div key={i} className="muted small fork-files" data-testid="fork-files">
          {t}
        </div>
      ))}
    </div>
  );
}

type Archive =
  | { state: "idle" }
  | { state: "loading" }
  | { state: "loaded"; messages: Message[] }
  | { state: "error"; message: string };

/**
 * A compaction summary: a divider saying how many messages it replaced, the tokens before and
 * after and why it ran; the summary (Markdown) and the archived messages open inline.
 */
function CompactionNotice({
  message,
  actions,
  hideCommentary,
}: {
  message: Message;
  actions: MessageActions;
  hideCommentary: boolean;
}) {
  const info = compactionInfo(message);
  const markers = actions.markers;
  const saved = markers?.get(message.id);
  const [summaryOpen, setSummaryOpen] = useState(saved?.summary ?? false);
  const [archiveOpen, setArchiveOpen] = useState(saved?.archive ?? false);
  // Open but not loaded (the row was scrolled away while it loaded, or it failed): load it again.
  const [archive, setArchive] = useState<Archive>(
    saved?.messages
      ? { state: "loaded", messages: saved.messages }
      : saved?.archive
        ? { state: "loading" }
        : { state: "idle" },
  );
  const summaryId = useId();
  const archiveId = useId();
  const load = actions.loadArchived;
  const remember = (patch: Partial<MarkerMemory>) =>
    markers?.set(message.id, { summary: summaryOpen, archive: archiveOpen, ...markers.get(message.id), ...patch });

  // While the archive is loading, one request for it is out.
  const requested = useRef(false);
  useEffect(() => {
    if (archive.state !== "loading" || requested.current || !load) return;
    requested.current = true;
    load(message.id).then(
      (messages) => {
        requested.current = false;
        markers?.set(message.id, { ...(markers.get(message.id) ?? { summary: false, archive: true }), messages });
        setArchive({ state: "loaded", messages });
      },
      (e: unknown) => {
        requested.current = false;
        setArchive({ state: "error", message: errorMessage(e) });
      },
    );
  }, [archive.state, load, markers, message.id]);

  const archived = archive.state === "loaded" ? archive.messages : null;
  const tools = useMemo(() => (archived ? toolsOf(archived) : {}), [archived]);
  // Archived messages are read, not forked from or retried.
  const archivedActions = useMemo<MessageActions>(() => ({ ...actions, onFork: undefined }), [actions]);
  if (!info) return null;
  const count = archived?.length ?? info.compacted;
  const toggleSummary = () => {
    remember({ summary: !summaryOpen });
    setSummaryOpen(!summaryOpen);
  };
  const toggleArchive = () => {
    remember({ archive: !archiveOpen });
    setArchiveOpen(!archiveOpen);
    if (!archiveOpen && archive.state === "idle") setArchive({ state: "loading" });
  };
  const why = triggerDetail(info.trigger);
  return (
    <div
      className="msg compaction-notice"
      data-testid="message-compaction"
      data-message-id={message.id}
      data-trigger={info.trigger ?? undefined}
      role="note"
      aria-label="Compaction"
    >
      <div className="fork-divider">
        <span className="fork-rule" aria-hidden />
        <span className="fork-text" data-testid="compaction-headline" title={why ?? undefined}>
          <span aria-hidden>⇊ </span>
          {markerText(info)}
        </span>
        <span className="fork-rule" aria-hidden />
      </div>
      <div className="compaction-actions">
        <button
          type="button"
          className="link-btn small"
          data-testid="compaction-summary-toggle"
          data-keep-scroll
          aria-expanded={summaryOpen}
          aria-controls={summaryId}
          onClick={toggleSummary}
        >
          <span aria-hidden>{summaryOpen ? "▾ " : "▸ "}</span>
          {summaryOpen ? "Hide the summary" : "Show the summary"}
        </button>
        {load && info.compacted > 0 && (
          <button
            type="button"
            className="link-btn small"
            data-testid="compaction-archive-toggle"
            data-keep-scroll
            aria-expanded={archiveOpen}
            aria-controls={archiveId}
            onClick={toggleArchive}
          >
            <span aria-hidden>{archiveOpen ? "▾ " : "▸ "}</span>
            {archiveOpen ? `Hide the ${plural(count, "archived message")}` : `Show the ${plural(count, "archived message")}`}
          </button>
        )}
      </div>
      <div
        id={summaryId}
        className="compaction-summary"
        data-testid="compaction-summary"
        role="region"
        aria-label="Compaction summary"
        hidden={!summaryOpen}
      >
        {summaryOpen && <Markdown text={info.summary} />}
      </div>
      {load && (
        <div
          id={archiveId}
          className="compaction-archive"
          data-testid="compaction-archive"
          role="region"
          aria-label="Archived messages"
          aria-busy={archive.state === "loading"}
          hidden={!archiveOpen}
        >
          {archiveOpen && archive.state === "loading" && <div className="muted small">Loading the archived messages…</div>}
          {archiveOpen && archive.state === "error" && (
            <div className="part-error" role="alert">
              <span>Could not load the archived messages: {archive.message}</span>
              <button type="button" className="btn small" onClick={() => setArchive({ state: "loading" })}>
                Try again
              </button>
            </div>
          )}
          {archiveOpen && archived && archived.length === 0 && (
            <div className="muted small">The archive is empty (nothing is stored for this summary).</div>
          )}
          {archiveOpen && archived && archived.length > 0 && (
            <>
              <ul className="archived-list" aria-label={`${plural(archived.length, "archived message")}`}>
                {archived.map((m) => (
                  <li key={m.id} className="archived-msg" data-testid="archived-message" data-message-id={m.id}>
                    <span className="archived-label">archived</span>
                    <MessageView
                      message={m}
                      tools={tools}
                      streaming={false}
                      running={false}
                      hideCommentary={hideCommentary}
                      isLast={false}
                      actions={archivedActions}
                    />
                  </li>
                ))}
              </ul>
              {archived.length > 3 && (
                <button
                  type="button"
                  className="link-btn small"
                  data-testid="compaction-archive-hide"
                  aria-controls={archiveId}
                  onClick={toggleArchive}
                >
                  <span aria-hidden>▴ </span>Hide the archived messages
                </button>
              )}
            </>
          )}
        </div>
      )}
    </div>
  );
}

function SystemNotice({ message }: { message: Message }) {
  const revert = message.parts.find((p) => p.content.type === "revert")?.content;
  const text = textOf(message);
  return (
    <div
      className={`msg msg-notice notice-${message.type}`}
      data-testid={message.type === "revert" ? "message-revert" : "message-notice"}
    >
      {text && <div>{text}</div>}
      {revert && revert.type === "revert" && !text && (
        <div>
          Reverted{revert.restored.length ? ` · restored ${revert.restored.join(", ")}` : ""}
          {revert.removed.length ? ` · removed ${revert.removed.join(", ")}` : ""}
        </div>
      )}
      {revert && revert.type === "revert" && revert.conflicts && revert.conflicts.length > 0 && (
        <div className="muted small">Conflicts: {revert.conflicts.join(", ")}</div>
      )}
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

function AssistantMessage(props: {
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
      <div className="msg-meta">
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

export const MessageView = memo(function MessageView(props: {
  message: Message;
  tools: Record<string, ToolInfo>;
  /** The session's delegations by call id (task cards). */
  subagents?: Record<string, SubagentInfo>;
  /** Pending asks (a task card shows its subagent blocked on one). */
  permissions?: PermissionRequest[];
  streaming: boolean;
  running: boolean;
  hideCommentary: boolean;
  isLast: boolean;
  actions: MessageActions;
  /** For a fork marker: the text of the message it was forked at (the one before it). */
  forkPoint?: string;
}) {
  const m = props.message;
  if (m.type === "fork") return <ForkNotice message={m} forkPoint={props.forkPoint} actions={props.actions} />;
  if (m.type === "compaction_summary")
    return <CompactionNotice message={m} actions={props.actions} hideCommentary={props.hideCommentary} />;
  if (m.type !== "normal" || m.role === "system") return <SystemNotice message={m} />;
  if (m.role === "user") return <UserMessage message={m} actions={props.actions} />;
  return <AssistantMessage {...props} />;
});

function modelTitle(model: string, source: string | null): string {
  const why = modelSourceText(source);
  return why ? `Model ${model}: ${why}` : `Model ${model}`;
}

/** The text of a message, for a fork marker's excerpt of the fork point. */
export function messageText(m: Message): string {
  return textOf(m);
}
