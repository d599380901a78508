import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
import type { ReviewScope } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices } from "../context";
import { CommitBox } from "./CommitBox";
import { HunkLists } from "./HunkLists";
import { ReviewComments } from "./ReviewComments";
import { ReviewDiffPanel } from "./ReviewDiffPanel";
import { useStoredWidth } from "./useStoredWidth";
import { X } from "lucide-react";

export const REVIEW_WIDTH_KEY = "mia-code.review.width";
const MIN_WIDTH = 420;
/** From this width the comments and the commit box stand beside the diff. */
const TWO_COLUMNS = 1100;

const SCOPES: { id: ReviewScope; label: string; tip: string }[] = [
  { id: "uncommitted", label: "Uncommitted", tip: "The work tree against HEAD, with the hunks to stage" },
  { id: "branch", label: "Branch", tip: "Everything since the branch left its base" },
  { id: "last_turn", label: "Last turn", tip: "What the session's last turn changed" },
];

const maxWidth = () => (typeof window === "undefined" ? 1600 : Math.max(MIN_WIDTH, window.innerWidth - 120));

/**
 * Review and ship, over the session's screen from the right (its left edge resizes it; the width
 * is remembered): the changes by scope, commentable; hunks to stage; the comments, sent to the
 * agent as one message; commit, push and the pull request.
 */
export function ReviewPane({
  sessionId,
  directory,
  running,
  onClose,
}: {
  sessionId: string;
  /** The session's checkout (its worktree, or the project). */
  directory: string;
  running: boolean;
  onClose: () => void;
}) {
  const { api } = useServices();
  const [scope, setScope] = useState<ReviewScope>("uncommitted");
  const { width, handle } = useStoredWidth(REVIEW_WIDTH_KEY, 960, MIN_WIDTH, maxWidth);
  const comments = useQuery({
    queryKey: keys.review(sessionId),
    queryFn: async () => (await api.review(sessionId)) ?? { comments: [] },
  });
  const list = comments.data?.comments;
  return (
    <aside
      className={`review-pane${width >= TWO_COLUMNS ? " review-wide" : ""}`}
      style={{ width }}
      data-testid="review-pane"
      aria-label="Review and ship"
    >
      <div
        className="review-handle"
        role="separator"
        aria-orientation="vertical"
        aria-label="Resize the review pane"
        aria-valuenow={width}
        aria-valuemin={MIN_WIDTH}
        // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex -- a focusable separator is ARIA's splitter widget (arrows resize it), as react-resizable-panels' handles are
        tabIndex={0}
        data-testid="review-resize"
        {...handle}
      />
      <div className="review-inner">
        <header className="review-header">
          <h2>Review</h2>
          <span className="small muted mono review-dir" title={directory}>
            {directory}
          </span>
          <button type="button" className="icon-btn" data-testid="review-close" aria-label="Close the review pane" onClick={onClose}>
            <X size={16} aria-hidden />
          </button>
        </header>
        <div className="review-body">
          <div className="review-main">
            <Tabs selectedKey={scope} onSelectionChange={(k) => setScope(k as ReviewScope)}>
              <TabList className="tabs" aria-label="What to review">
                {SCOPES.map((s) => (
                  <Tab key={s.id} id={s.id} data-testid={`review-scope-${s.id}`} aria-description={s.tip}>
                    {s.label}
                  </Tab>
                ))}
              </TabList>
              {SCOPES.map((s) => (
                <TabPanel key={s.id} id={s.id} className="review-panel">
                  {s.id === "uncommitted" && <HunkLists directory={directory} sessionId={sessionId} />}
                  <ReviewDiffPanel sessionId={sessionId} scope={s.id} comments={list} />
                </TabPanel>
              ))}
            </Tabs>
          </div>
          <div className="review-side">
            <ReviewComments
              sessionId={sessionId}
              comments={list}
              error={comments.error ? errorMessage(comments.error) : null}
              running={running}
            />
            <CommitBox directory={directory} sessionId={sessionId} />
          </div>
        </div>
      </div>
    </aside>
  );
}
