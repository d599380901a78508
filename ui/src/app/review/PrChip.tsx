import { useQuery } from "@tanstack/react-query";
import type { ChecksView, PullRequestLink, PullRequestView } from "../../protocol/generated";
import { keys } from "../../state/queries";
import { ApiError } from "../../transport/types";
import { useServices } from "../context";

const DECISION: Record<string, string> = {
  approved: "approved",
  changes_requested: "changes requested",
  review_required: "review required",
};

function checksText(c: ChecksView): string {
  if (c.state === "none" || c.total === 0) return "no checks";
  if (c.state === "pending") return `checks ${c.passed}/${c.total}, ${c.pending} pending`;
  if (c.state === "failure") return `checks: ${c.failed} failed`;
  return `checks passed (${c.passed})`;
}

/** A pull request as a chip: its number (a link, new tab) and, when known, state, review and checks. */
export function PrChip({ pr, testId = "pr-chip" }: { pr: PullRequestView | PullRequestLink; testId?: string }) {
  const view = "state" in pr ? pr : null;
  const label = pr.provider === "gitlab" ? `!${pr.number}` : `#${pr.number}`;
  const parts = view
    ? [
        view.draft ? "draft" : view.state,
        view.review_decision ? DECISION[view.review_decision] : null,
        view.checks ? checksText(view.checks) : null,
      ].filter(Boolean)
    : [];
  return (
    <span
      className={`chip pr-chip${view ? ` pr-${view.state}` : ""}${view?.checks ? ` pr-checks-${view.checks.state}` : ""}`}
      data-testid={testId}
      data-state={view?.state}
    >
      <a
        href={pr.url}
        target="_blank"
        rel="noreferrer noopener"
        title={view ? `${view.title} (${view.head} → ${view.base})` : "Open the pull request"}
      >
        {pr.provider === "gitlab" ? "MR" : "PR"} {label}
      </a>
      {parts.length > 0 && <span className="pr-chip-status"> · {parts.join(" · ")}</span>}
    </span>
  );
}

/** The pull request of a checkout's branch: its full view (forge), else the recorded link, else nothing. */
export function BranchPrChip({ directory, live = true, testId }: { directory: string; live?: boolean; testId?: string }) {
  const { api } = useServices();
  const status = useQuery({
    queryKey: [...keys.git(directory), "status"],
    queryFn: async () => (await api.gitStatus(directory)) ?? null,
    retry: false,
  });
  const link = status.data?.pull_request ?? null;
  const view = useQuery({
    queryKey: [...keys.git(directory), "pr"],
    queryFn: async () => {
      try {
        return (await api.pullRequest(directory)) ?? null;
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
    enabled: live && link !== null,
    retry: false,
    staleTime: 60_000,
  });
  const pr = view.data ?? link;
  return pr ? <PrChip pr={pr} testId={testId} /> : null;
}
