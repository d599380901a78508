import { memo, useEffect, useId, useMemo, useRef, useState } from "react";
import { ChevronDown, ChevronRight } from "lucide-react";
import type { Message, PermissionRequest } from "../protocol/generated";
import { toolsOf, type ToolInfo } from "../state/session";
import type { MarkerMemory } from "../state/liveSessions";
import { errorMessage } from "../lib/api";
import { compactionInfo, markerText, plural, triggerDetail } from "../lib/compaction";
import type { SubagentInfo } from "../lib/subagent";
import { Markdown } from "./Markdown";
import { textOf, type MessageActions } from "./message/actions";
import { AssistantMessage } from "./message/AssistantMessage";
import { ForkNotice } from "./message/ForkNotice";
import { SystemNotice } from "./message/SystemNotice";
import { UserMessage } from "./message/UserMessage";

export type { MessageActions } from "./message/actions";
export type { MarkerMemory } from "../state/liveSessions";

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
          {summaryOpen ? <ChevronDown size={12} aria-hidden /> : <ChevronRight size={12} aria-hidden />}{" "}
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
            {archiveOpen ? <ChevronDown size={12} aria-hidden /> : <ChevronRight size={12} aria-hidden />}{" "}
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

/** The text of a message, for a fork marker's excerpt of the fork point. */
export function messageText(m: Message): string {
  return textOf(m);
}
