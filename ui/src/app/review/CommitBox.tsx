import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { PullRequestView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices, useToast } from "../context";
import { PrChip } from "./PrChip";
import { PrDialog } from "./PrDialog";

type Outcome = { kind: "ok"; text: string } | { kind: "error"; text: string } | null;

/** Commit the staged hunks (message typed or drafted), push the branch, open a pull request. */
export function CommitBox({ directory, sessionId }: { directory: string; sessionId: string }) {
  const { api } = useServices();
  const toast = useToast();
  const queryClient = useQueryClient();
  const status = useQuery({
    queryKey: [...keys.git(directory), "status"],
    queryFn: async () => (await api.gitStatus(directory)) ?? null,
  });
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState<"draft" | "commit" | "push" | null>(null);
  const [commitOutcome, setCommitOutcome] = useState<Outcome>(null);
  const [pushOutcome, setPushOutcome] = useState<Outcome>(null);
  const [prOpen, setPrOpen] = useState(false);
  const [created, setCreated] = useState<PullRequestView | null>(null);
  const s = status.data ?? null;
  const nothingStaged = !s || s.staged === 0;
  const pr = created ?? s?.pull_request ?? null;
  // A branch without an upstream is published (to origin, else the first remote) and then tracks it.
  const publishTo = s && !s.upstream ? (s.remotes.includes("origin") ? "origin" : s.remotes[0]) : undefined;

  const refresh = () => queryClient.invalidateQueries({ queryKey: keys.git(directory) });

  const draft = async () => {
    setBusy("draft");
    try {
      const d = await api.draftCommit(directory);
      setMessage(d.body ? `${d.title}\n\n${d.body}` : d.title);
    } catch (e) {
      toast(`Could not draft a message: ${errorMessage(e)}`);
    } finally {
      setBusy(null);
    }
  };

  const commit = async () => {
    setBusy("commit");
    try {
      const r = await api.commit(directory, message);
      setCommitOutcome({ kind: "ok", text: `Committed ${r.commit.slice(0, 8)} on ${r.branch}: ${r.summary}` });
      setMessage("");
    } catch (e) {
      setCommitOutcome({ kind: "error", text: errorMessage(e) });
    } finally {
      setBusy(null);
      await Promise.all([refresh(), queryClient.invalidateQueries({ queryKey: keys.diffsOf(sessionId) })]);
    }
  };

  const push = async () => {
    setBusy("push");
    try {
      const r = await api.push(directory, publishTo);
      setPushOutcome({
        kind: "ok",
        text: `Pushed ${r.branch} to ${r.remote}${r.upstream_set ? ` (now tracks ${r.remote}/${r.branch})` : ""}`,
      });
    } catch (e) {
      // The server's reason (no upstream and no remote, rejected, …); the rest stays as it is.
      setPushOutcome({ kind: "error", text: `Push failed: ${errorMessage(e)}` });
    } finally {
      setBusy(null);
      await refresh();
    }
  };

  return (
    <section className="review-ship" data-testid="commit-box" aria-label="Commit and ship">
      <h3 className="review-subtitle">Commit</h3>
      <p className="small muted" data-testid="git-status">
        {s ? (
          <>
            <span className="mono">{s.branch ?? "detached HEAD"}</span>
            {s.upstream ? ` → ${s.upstream}` : " (no upstream)"} · {s.staged} staged · {s.unstaged} unstaged
            {s.ahead ? ` · ${s.ahead} ahead` : ""}
            {s.behind ? ` · ${s.behind} behind` : ""}
          </>
        ) : status.error ? (
          errorMessage(status.error)
        ) : (
          "…"
        )}
      </p>
      <label className="sr-only" htmlFor="review-commit-message">
        Commit message
      </label>
      <textarea
        id="review-commit-message"
        className="input review-commit-message"
        data-testid="commit-message"
        rows={4}
        placeholder="Commit message"
        value={message}
        onChange={(e) => setMessage(e.target.value)}
      />
      <div className="row">
        <button
          type="button"
          className="btn small"
          data-testid="commit-draft"
          disabled={busy !== null || nothingStaged}
          title="The small model drafts a message from the staged changes"
          onClick={() => void draft()}
        >
          {busy === "draft" ? "Drafting…" : "Draft message"}
        </button>
        <button
          type="button"
          className="btn small primary"
          data-testid="commit-submit"
          disabled={busy !== null || nothingStaged || !message.trim()}
          title={nothingStaged ? "Nothing is staged: stage hunks first" : undefined}
          onClick={() => void commit()}
        >
          {busy === "commit" ? "Committing…" : "Commit"}
        </button>
      </div>
      <OutcomeLine outcome={commitOutcome} testId="commit-result" />
      <div className="row">
        <button
          type="button"
          className="btn small"
          data-testid="push"
          disabled={busy !== null || !s?.branch || (!s.upstream && !publishTo)}
          title={s && !s.upstream && !publishTo ? "The repository has no remote to push to (git remote add)" : undefined}
          onClick={() => void push()}
        >
          {busy === "push" ? "Pushing…" : publishTo ? `Publish to ${publishTo}` : "Push"}
        </button>
        <button
          type="button"
          className="btn small"
          data-testid="open-pr-dialog"
          disabled={!s?.branch}
          onClick={() => setPrOpen(true)}
        >
          Create pull request…
        </button>
        {pr && <PrChip pr={pr} testId="review-pr-chip" />}
      </div>
      <OutcomeLine outcome={pushOutcome} testId="push-result" />
      {prOpen && (
        <PrDialog
          directory={directory}
          sessionId={sessionId}
          onClose={() => setPrOpen(false)}
          onCreated={(pr) => {
            setCreated(pr);
            queryClient.setQueryData([...keys.git(directory), "pr"], pr);
            void refresh();
          }}
        />
      )}
    </section>
  );
}

function OutcomeLine({ outcome, testId }: { outcome: Outcome; testId: string }) {
  if (!outcome) return null;
  return (
    <p
      className={outcome.kind === "error" ? "error-text small" : "small"}
      role={outcome.kind === "error" ? "alert" : "status"}
      data-testid={testId}
    >
      {outcome.text}
    </p>
  );
}
