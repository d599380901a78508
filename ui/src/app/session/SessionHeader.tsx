import type { SessionState } from "../../state/session";
import { errorMessage } from "../../lib/api";
import { formatCost, formatTokens } from "../../lib/format";
import { useServices, useToast } from "../context";
import { EditableTitle } from "../EditableTitle";
import type { PanelTab } from "../RightPanel";
import { BranchPrChip } from "../review/PrChip";
import { MenuButton, type MenuItem } from "../MenuButton";
import { TipButton } from "../TipButton";
import {
  Ellipsis,
  GitCompare,
  GitFork,
  GitPullRequestArrow,
  MessageSquareOff,
  MessageSquareText,
  PanelRightClose,
  PanelRightOpen,
  Share2,
} from "lucide-react";

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
  // Everything the header does, by name: the icons that do not fit a narrow header are here too.
  const moreItems: MenuItem[] = [
    { label: hideCommentary ? "Show commentary" : "Hide commentary", onSelect: () => onHideCommentary(!hideCommentary), testId: "more-commentary" },
    ...(parent && onCompareSessions ? [{ label: "Compare with parent", onSelect: () => onCompareSessions(sessionId, parent), testId: "more-compare-parent" }] : []),
    { label: "Share…", onSelect: onShare, testId: "more-share" },
    { label: "Search this session (Ctrl+F)", onSelect: () => window.dispatchEvent(new Event("mia-transcript-search")), testId: "more-search" },
    { label: "Cost by agent and model", onSelect: () => onPanel("cost"), testId: "more-cost" },
    { label: "History", onSelect: () => onPanel("history"), testId: "more-history" },
  ];
  return (
    <header className="conv-header">
      <div className="conv-title-block">
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
      </div>
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
      <span className="conv-actions">
        <TipButton
          className={`icon-btn hdr-secondary${hideCommentary ? " on" : ""}`}
          data-testid="toggle-commentary"
          aria-pressed={hideCommentary}
          aria-label={hideCommentary ? "Show commentary" : "Hide commentary"}
          tip={hideCommentary ? "Show Mia and Miette's commentary" : "Hide Mia and Miette's commentary"}
          onPress={() => onHideCommentary(!hideCommentary)}
        >
          {hideCommentary ? <MessageSquareOff size={16} aria-hidden /> : <MessageSquareText size={16} aria-hidden />}
        </TipButton>
        {onForkTree && (
          <TipButton
            className="icon-btn"
            data-testid="open-fork-tree"
            aria-label="Fork tree"
            tip="Fork tree: this project's sessions and their forks (/forks)"
            onPress={() => onForkTree(sessionId)}
          >
            <GitFork size={16} aria-hidden />
          </TipButton>
        )}
        {parent && onCompareSessions && (
          <TipButton
            className="icon-btn hdr-secondary"
            data-testid="compare-parent"
            aria-label="Compare with parent"
            tip="Compare with parent: this fork's file changes and its parent's, since the fork point"
            onPress={() => onCompareSessions(sessionId, parent)}
          >
            <GitCompare size={16} aria-hidden />
          </TipButton>
        )}
        {directory && <BranchPrChip directory={directory} testId="session-pr-chip" />}
        {onReview && (
          <TipButton
            className="icon-btn"
            data-testid="open-review"
            aria-label="Review"
            tip="Review: comment on lines for the agent, stage, commit, push, open a pull request (/review)"
            onPress={onReview}
          >
            <GitPullRequestArrow size={16} aria-hidden />
          </TipButton>
        )}
        <TipButton
          className="icon-btn hdr-secondary"
          data-testid="share-session"
          aria-label="Share"
          tip="Share: publish a redacted copy of this session, preview first (/share)"
          onPress={onShare}
        >
          <Share2 size={16} aria-hidden />
        </TipButton>
        <TipButton
          className={`icon-btn${panel ? " on" : ""}`}
          data-testid="toggle-panel"
          aria-pressed={panel !== null}
          aria-label={panel ? "Hide the side panel" : "Show changes, diff, cost and history"}
          tip={panel ? "Hide the side panel" : "Changes, diff, cost and history"}
          onPress={() => onPanel(panel ? null : "changes")}
        >
          {panel ? <PanelRightClose size={16} aria-hidden /> : <PanelRightOpen size={16} aria-hidden />}
        </TipButton>
        <MenuButton label="More session actions" testId="session-more" items={moreItems}>
          <Ellipsis size={16} aria-hidden />
        </MenuButton>
      </span>
    </header>
  );
}
