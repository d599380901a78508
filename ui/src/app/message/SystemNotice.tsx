import type { Message } from "../../protocol/generated";
import { textOf } from "./actions";

/** A system message or a revert: what it says, or what the revert restored and removed. */
export function SystemNotice({ message }: { message: Message }) {
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
