import type { SessionState } from "../../state/session";
import { errorMessage } from "../../lib/api";
import { formatCost, formatTokens } from "../../lib/format";
import { useServices, useToast } from "../context";
import { EditableTitle } from "../EditableTitle";
import type { PanelTab } from "../RightPanel";
import { BranchPrChip } from "../review/PrChip";

/**
 * A session view's header: its title (renamed in place), whose subagent it is, its total cost
 * (opens the cost tab), and its buttons (commentary, fork tree, compare with the parent, share,
 * the side panel).
 */
export function SessionHeader({
  sessionId,
  state,
  title,
  spawnedTitle,
  totals,
  hideCommentary,
  onHideCommentary,
  panel,
  onPanel,
  onShare,
  onReview,
  directory,
  onOpenSession,
  onForkTree,
  onCompareSessions,
}: {
  sessionId: string;
  state: SessionState;
  title: string;
  /** The session that delegated this one (when it is a subagent's). */
  spawnedTitle: string;
  totals: { input: number; output: number; cost: number; priced: boolean };
  hideCommentary: boolean;
  onHideCommentary: (hide: boolean) => void;
  panel: PanelTab | null;
  onPanel: (tab: PanelTab | null) => void;
  onShare: () => void;
  /** Opens the review and ship pane. */
  onReview?: () => void;
  /** The session's checkout (its branch's pull request is shown). */
  directory?: string;
  onOpenSession?: (id: string) => void;
  onForkTree?: (focus?: string) => void;
  onCompareSessions?: (left: string, right: string) => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const spawned = state.session?.spawned_by ?? null;
  const parent = state.session?.parent_id ?? null;
  return (
    <header className="conv-header">
      <EditableTitle
        title={title}
        hint={state.session?.slug}
        onRename={async (t) => {
          try {
            await api.updateSession(sessionId, { title: t });
          } catch (e) {
            toast(errorMessage(e));
          }
        }}
      />
      {spawned && (
        <span className="subagent-of small" data-testid="subagent-of">
          ↳ subagent <span className="agent-tag">{state.session?.agent ?? "?"}</span> of{" "}
          {onOpenSession ? (
            <button
              type="button"
              className="link-btn"
              data-testid="subagent-parent-link"
              title="Open the session that delegated this task"
              onClick={() => onOpenSession(spawned.session_id)}
            >
              {spawnedTitle}
            </button>
          ) : (
            <strong>{spawnedTitle}</strong>
          )}
        </span>
      )}
      <button
        type="button"
        className="session-cost link-btn muted small"
        data-testid="session-cost"
        title="Session total: tokens in / out, cost. Per agent and model, with subagents: /cost"
        onClick={() => onPanel("cost")}
      >
        ↑{formatTokens(totals.input)} ↓{formatTokens(totals.output)}
        {totals.priced ? ` · ${formatCost(totals.cost)}` : ""}
      </button>
      <button
        type="button"
        className={`btn small toggle${hideCommentary ? " on" : ""}`}
        data-testid="toggle-commentary"
        aria-pressed={hideCommentary}
        onClick={() => onHideCommentary(!hideCommentary)}
      >
        {hideCommentary ? "Show commentary" : "Hide commentary"}
      </button>
      {onForkTree && (
        <button
          type="button"
          className="btn small"
          data-testid="open-fork-tree"
          title="This project's sessions and their forks as a tree (/forks)"
          onClick={() => onForkTree(sessionId)}
        >
          Fork tree
        </button>
      )}
      {parent && onCompareSessions && (
        <button
          type="button"
          className="btn small"
          data-testid="compare-parent"
          title="This fork's file changes and its parent's, since the fork point"
          onClick={() => onCompareSessions(sessionId, parent)}
        >
          Compare with parent
        </button>
      )}
      {directory && <BranchPrChip directory={directory} testId="session-pr-chip" />}
      {onReview && (
        <button
          type="button"
          className="btn small"
          data-testid="open-review"
          title="Review the changes, comment on lines for the agent, stage, commit, push, open a pull request (/review)"
          onClick={onReview}
        >
          Review
        </button>
      )}
      <button
        type="button"
        className="btn small"
        data-testid="share-session"
        title="Publish a redacted copy of this session to the share server: preview first (/share)"
        onClick={onShare}
      >
        Share
      </button>
      <button
        type="button"
        className="btn small"
        onClick={() => onPanel(panel ? null : "changes")}
        aria-pressed={panel !== null}
      >
        {panel ? "Hide panel" : "Changes"}
      </button>
    </header>
  );
}
