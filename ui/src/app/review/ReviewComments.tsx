import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import type { ReviewComment } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices, useToast } from "../context";
import { rangeLabel } from "./CommentEditor";
import { X } from "lucide-react";

/** The session's review comments: where, the lines quoted, the text; Send to agent, Clear. */
export function ReviewComments({
  sessionId,
  comments,
  error,
  running,
}: {
  sessionId: string;
  comments: ReviewComment[] | undefined;
  error: string | null;
  /** A turn is running: sending waits. */
  running: boolean;
}) {
  const { api } = useServices();
  const toast = useToast();
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  const reload = () => queryClient.invalidateQueries({ queryKey: keys.review(sessionId) });

  const run = async (what: () => Promise<unknown>, done?: string) => {
    setBusy(true);
    try {
      await what();
      if (done) toast(done, "info");
    } catch (e) {
      toast(errorMessage(e));
    } finally {
      setBusy(false);
      await reload();
    }
  };

  const list = comments ?? [];
  return (
    <section className="review-comments" data-testid="review-comments" aria-label="Review comments">
      <h3 className="review-subtitle">
        Comments <span className="muted small">{list.length}</span>
      </h3>
      {error && <p className="error-text small">{error}</p>}
      {list.length === 0 ? (
        <p className="muted small" data-testid="review-comments-empty">
          Click a line number in the diff to comment on it (Shift+click: a range).
        </p>
      ) : (
        <ul className="review-comment-list">
          {list.map((c) => (
            <li key={c.id} className="review-comment" data-testid="review-comment" data-id={c.id}>
              <div className="row">
                <span className="mono small" data-testid="review-comment-where">
                  {rangeLabel(c.file, c.line, c.end_line)}
                </span>
                {c.outdated && (
                  <span
                    className="chip review-outdated"
                    data-testid="review-comment-outdated"
                    title="The lines changed since: the comment is about them as they were"
                  >
                    outdated
                  </span>
                )}
                <button
                  type="button"
                  className="icon-btn review-comment-delete"
                  data-testid="review-comment-delete"
                  aria-label={`Delete the comment on ${rangeLabel(c.file, c.line, c.end_line)}`}
                  disabled={busy}
                  onClick={() => void run(() => api.deleteReviewComment(sessionId, c.id))}
                >
                  <X size={14} aria-hidden />
                </button>
              </div>
              {c.quote && c.quote.length > 0 && (
                <pre className="review-quote" data-testid="review-comment-quote">
                  {c.quote.join("\n")}
                </pre>
              )}
              <p className="review-comment-text">{c.text}</p>
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        <button
          type="button"
          className="btn small primary"
          data-testid="review-send"
          disabled={busy || list.length === 0 || running}
          title={running ? "A turn is running: send when it ends" : "All comments as one message; the agent answers them"}
          onClick={() =>
            void run(async () => {
              await api.sendReview(sessionId);
              queryClient.setQueryData(keys.review(sessionId), { comments: [] });
            }, `Sent ${list.length} comment${list.length === 1 ? "" : "s"} to the agent`)
          }
        >
          Send to agent
        </button>
        <button
          type="button"
          className="btn small"
          data-testid="review-clear"
          disabled={busy || list.length === 0}
          onClick={() => void run(() => api.clearReview(sessionId))}
        >
          Clear
        </button>
      </div>
    </section>
  );
}
