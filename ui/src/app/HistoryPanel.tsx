import { useEffect, useState } from "react";
import type { Message } from "../protocol/generated";
import { errorMessage } from "../lib/api";

/** The text a message shows in the history list: its text parts, or what it did. */
function textOf(m: Message): string {
  const parts: string[] = [];
  for (const p of m.parts) {
    const c = p.content;
    if (c.type === "text") parts.push(c.text);
    else if (c.type === "compaction_summary") parts.push(`Summary of ${c.compacted_messages} messages`);
    else if (c.type === "tool_call") parts.push(`[${c.tool}]`);
  }
  return parts.join(" ").trim();
}

/**
 * `/history --full`: every message of the session, the ones compactions archived included
 * (marked, muted), oldest first — the archive is never deleted.
 */
export function HistoryPanel({ load, refreshKey }: { load: () => Promise<Message[]>; refreshKey: number }) {
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    load().then(
      (m) => {
        if (!alive) return;
        setMessages(m);
        setError(null);
      },
      (e: unknown) => alive && setError(errorMessage(e)),
    );
    return () => {
      alive = false;
    };
  }, [load, refreshKey]);
  if (error) return <div className="error-text">{error}</div>;
  if (!messages) return <div className="muted">Loading…</div>;
  const archived = messages.filter((m) => m.compacted_by).length;
  return (
    <div data-testid="history-full">
      <p className="muted">
        {messages.length} messages, {archived} of them archived by compaction (the model sees their summary instead).
      </p>
      <ol className="history-list">
        {messages.map((m) => (
          <li key={m.id} className={m.compacted_by ? "history-item archived" : "history-item"} data-archived={m.compacted_by ? "true" : undefined}>
            <span className="history-role">{m.role}</span>
            {m.compacted_by && <span className="badge">archived</span>}
            <span className="history-text">{textOf(m) || "(no text)"}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}
