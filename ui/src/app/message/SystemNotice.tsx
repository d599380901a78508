import type { Message } from "../../protocol/generated";
import { textOf } from "./actions";
import { restoredText } from "../checkpoints/plainWords";

/** A system message or a revert: what it says, or what the revert restored and removed. */
export function SystemNotice({ message }: { message: Message }) {
  const revert = message.parts.find((p) => p.content.type === "revert")?.content;
  const text = textOf(message);
  return (
    <div
      className={`msg msg-notice notice-${message.type}`}
      data-testid={message.type === "revert" ? "message-revert" : "message-notice"}
    >
      {/* A revert in plain words; the runtime's own record (snapshots, ids) under Details. */}
      {revert && revert.type === "revert" ? (
        <>
          <div>{restoredText(revert)}</div>
          {text && (
            <details className="notice-details">
              <summary className="muted small">Details</summary>
              <div className="muted small">{text}</div>
            </details>
          )}
        </>
      ) : (
        text && <div>{text}</div>
      )}
      {revert && revert.type === "revert" && revert.conflicts && revert.conflicts.length > 0 && (
        <div className="muted small">Conflicts: {revert.conflicts.join(", ")}</div>
      )}
    </div>
  );
}
