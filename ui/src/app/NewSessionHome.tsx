import { useQueries } from "@tanstack/react-query";
import { FileText, Lightbulb, MessageSquare } from "lucide-react";
import type { SessionSummary } from "../protocol/generated";
import { relativeTime } from "../lib/format";
import { keys } from "../state/queries";
import { useServices } from "./context";

/** What a new session can start from (each fills the composer; nothing is sent until you send it). */
export const SUGGESTIONS = [
  "Explain how this project is organised and where to start reading",
  "Find a failing test and fix it",
  "Review the uncommitted changes for bugs",
  "Plan a small feature before writing code",
];

/**
 * A new session's page: the project's recent sessions (open one), the files its agents changed
 * lately (mention one), and a few suggestions (start from one).
 */
export function NewSessionHome({
  sessions,
  onOpenSession,
  onPrompt,
}: {
  sessions: SessionSummary[];
  onOpenSession?: (id: string) => void;
  /** Puts text in the composer. */
  onPrompt: (text: string) => void;
}) {
  const { api } = useServices();
  const recent = sessions
    .filter((s) => !s.archived_at && !s.spawned_by)
    .sort((a, b) => b.updated_at - a.updated_at)
    .slice(0, 5);
  // The files changed in the three latest sessions, newest first.
  const timelines = useQueries({
    queries: recent.slice(0, 3).map((s) => ({ queryKey: keys.timeline(s.id), queryFn: () => api.timeline(s.id) })),
  });
  const files: string[] = [];
  for (const t of timelines) {
    for (const step of [...(t.data ?? [])].reverse()) {
      for (const c of step.changes) if (!files.includes(c.path) && files.length < 6) files.push(c.path);
    }
  }
  return (
    <div className="new-home" data-testid="new-session-home">
      <h2 className="new-home-title">What should we work on?</h2>
      <div className="new-home-grid">
        <section aria-labelledby="new-home-suggestions">
          <h3 id="new-home-suggestions">
            <Lightbulb size={14} aria-hidden /> Start from
          </h3>
          <ul className="new-home-list">
            {SUGGESTIONS.map((s) => (
              <li key={s}>
                <button type="button" className="new-home-item" data-testid="new-home-suggestion" onClick={() => onPrompt(s)}>
                  {s}
                </button>
              </li>
            ))}
          </ul>
        </section>
        {recent.length > 0 && (
          <section aria-labelledby="new-home-recent">
            <h3 id="new-home-recent">
              <MessageSquare size={14} aria-hidden /> Recent sessions
            </h3>
            <ul className="new-home-list">
              {recent.map((s) => (
                <li key={s.id}>
                  <button
                    type="button"
                    className="new-home-item"
                    data-testid="new-home-session"
                    onClick={() => onOpenSession?.(s.id)}
                  >
                    <span className="new-home-name">{s.title || s.slug}</span>
                    <span className="muted small">{relativeTime(s.updated_at)}</span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
        )}
        {files.length > 0 && (
          <section aria-labelledby="new-home-files">
            <h3 id="new-home-files">
              <FileText size={14} aria-hidden /> Recently changed files
            </h3>
            <ul className="new-home-list">
              {files.map((f) => (
                <li key={f}>
                  <button
                    type="button"
                    className="new-home-item mono"
                    data-testid="new-home-file"
                    title={`Mention ${f} in the message`}
                    onClick={() => onPrompt(`@${f} `)}
                  >
                    <span className="new-home-name">{f}</span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
        )}
      </div>
      <p className="muted small new-home-hint">Type @ to mention a file, / for commands, Tab to switch plan and build.</p>
    </div>
  );
}
