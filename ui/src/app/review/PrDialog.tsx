import { useEffect, useState } from "react";
import type { PullRequestView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { useServices } from "../context";
import { Modal } from "../Modal";

/**
 * Create a pull request: title and body drafted by the server (editable; kept when creation
 * fails), the base branch, draft or not. Created: its link.
 */
export function PrDialog({
  directory,
  sessionId,
  onClose,
  onCreated,
}: {
  directory: string;
  sessionId: string;
  onClose: () => void;
  onCreated: (pr: PullRequestView) => void;
}) {
  const { api } = useServices();
  const [title, setTitle] = useState("");
  const [body, setBody] = useState("");
  const [base, setBase] = useState("");
  const [draft, setDraft] = useState(false);
  const [drafting, setDrafting] = useState(true);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<PullRequestView | null>(null);

  useEffect(() => {
    let alive = true;
    api.draftPullRequest(directory, sessionId).then(
      (d) => {
        if (!alive) return;
        // What was typed meanwhile wins over the draft.
        setTitle((t) => t || d.title);
        setBody((b) => b || (d.body ?? ""));
        setDrafting(false);
      },
      (e: unknown) => {
        if (!alive) return;
        setError(`Could not draft the description: ${errorMessage(e)}`);
        setDrafting(false);
      },
    );
    return () => {
      alive = false;
    };
  }, [api, directory, sessionId]);

  const create = async () => {
    setCreating(true);
    setError(null);
    try {
      const pr = await api.createPullRequest(directory, { title, body, base: base.trim() || undefined, draft });
      setCreated(pr);
      onCreated(pr);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setCreating(false);
    }
  };

  return (
    <Modal title="Create pull request" onClose={onClose} wide testId="pr-dialog">
      {created ? (
        <div data-testid="pr-created">
          <p>
            Created{" "}
            <a href={created.url} target="_blank" rel="noreferrer noopener" data-testid="pr-link">
              {created.provider === "gitlab" ? `!${created.number}` : `#${created.number}`} {created.title}
            </a>{" "}
            ({created.head} → {created.base}
            {created.draft ? ", draft" : ""}).
          </p>
          <div className="row-end">
            <button type="button" className="btn" onClick={onClose}>
              Close
            </button>
          </div>
        </div>
      ) : (
        <form
          className="pr-form"
          onSubmit={(e) => {
            e.preventDefault();
            void create();
          }}
        >
          {drafting && (
            <p className="muted small" role="status">
              Drafting the title and description…
            </p>
          )}
          <label className="field">
            <span>Title</span>
            <input className="input" data-testid="pr-title" value={title} onChange={(e) => setTitle(e.target.value)} />
          </label>
          <label className="field">
            <span>Description</span>
            <textarea className="input" data-testid="pr-body" rows={10} value={body} onChange={(e) => setBody(e.target.value)} />
          </label>
          <div className="row">
            <label className="field">
              <span>Base branch</span>
              <input
                className="input mono"
                data-testid="pr-base"
                placeholder="the default branch"
                value={base}
                onChange={(e) => setBase(e.target.value)}
              />
            </label>
            <label className="row small">
              <input type="checkbox" data-testid="pr-draft" checked={draft} onChange={(e) => setDraft(e.target.checked)} />
              Draft
            </label>
          </div>
          {error && (
            <p className="error-text" role="alert" data-testid="pr-error">
              {error}
            </p>
          )}
          <div className="row-end">
            <button type="button" className="btn" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" className="btn primary" data-testid="pr-create" disabled={creating || !title.trim()}>
              {creating ? "Creating…" : "Create"}
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
