import type { Message } from "../../protocol/generated";
import { GitFork } from "lucide-react";
import type { MessageActions } from "./actions";

const FORK_MARKER = /^Forked from session (\S+) at message (\S+)/;

function excerpt(text: string, max = 90): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/**
 * The marker at the start of a fork's own part: a divider naming the parent
 * (a link that opens it at the fork point) and, for a fork with files, its worktree.
 */
export function ForkNotice({ message, forkPoint, actions }: { message: Message; forkPoint?: string; actions: MessageActions }) {
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
          <GitFork size={12} aria-hidden className="fork-icon" /> Forked from{" "}
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
