import { useMemo, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { DiffComment, DiffLineTarget } from "../../components";
import type { ReviewComment, ReviewScope } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices } from "../context";
import { filesToDiff, LazyDiffView } from "../DiffSlot";
import { useOpenFile } from "../openFile";
import { CommentEditor } from "./CommentEditor";

const EMPTY: ReviewComment[] = [];

/** The changes of one review scope, commentable line by line (gutter click; Shift+click: a range). */
export function ReviewDiffPanel({
  sessionId,
  scope,
  comments,
}: {
  sessionId: string;
  scope: ReviewScope;
  comments: ReviewComment[] | undefined;
}) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const openFile = useOpenFile() ?? undefined;
  const query = useQuery({
    queryKey: [...keys.diffsOf(sessionId), "review", scope],
    queryFn: () => api.reviewDiff(sessionId, scope),
  });
  const [target, setTarget] = useState<DiffLineTarget | null>(null);
  const diff = useMemo(
    () =>
      query.data
        ? { ...filesToDiff(query.data.files), scope: { scope: "step" as const, step: `review:${sessionId}:${scope}` } }
        : null,
    [query.data, sessionId, scope],
  );
  const list = comments ?? EMPTY;
  const inline = useMemo<DiffComment[]>(
    () => list.map((c) => ({ id: c.id, file: c.file, line: c.line, endLine: c.end_line, text: c.text, outdated: c.outdated })),
    [list],
  );

  const save = async (text: string) => {
    if (!target) return;
    await api.addReviewComment(sessionId, {
      file: target.file,
      line: target.line,
      ...(target.endLine !== target.line ? { end_line: target.endLine } : {}),
      text,
    });
    setTarget(null);
    await queryClient.invalidateQueries({ queryKey: keys.review(sessionId) });
  };

  if (query.error && !query.data)
    return (
      <p className="error-text" role="alert">
        {errorMessage(query.error)}
      </p>
    );
  if (!diff)
    return (
      <p className="muted" role="status">
        Loading the changes…
      </p>
    );
  return (
    <div data-testid={`review-diff-${scope}`}>
      {query.data?.base && (
        <p className="small muted">
          Against <span className="mono">{query.data.base.slice(0, 12)}</span>
        </p>
      )}
      <LazyDiffView
        diff={diff}
        defaultMode="split"
        onOpenFile={openFile}
        onComment={setTarget}
        comments={inline}
        renderComment={(c) => (
          <div className="review-inline-comment" data-testid="review-inline-comment">
            {c.outdated && <span className="chip review-outdated">outdated</span>}
            {c.text}
          </div>
        )}
        commentEditor={
          target
            ? {
                target,
                node: <CommentEditor key={`${target.file}:${target.line}:${target.endLine}`} target={target} onSave={save} onCancel={() => setTarget(null)} />,
              }
            : null
        }
      />
    </div>
  );
}
