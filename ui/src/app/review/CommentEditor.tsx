import { useState } from "react";
import type { DiffLineTarget } from "../../components";
import { errorMessage } from "../../lib/api";

export function rangeLabel(file: string, line: number, endLine: number): string {
  return endLine > line ? `${file}:${line}–${endLine}` : `${file}:${line}`;
}

/** The small form under the lines being commented on: the comment, Save and Cancel. */
export function CommentEditor({
  target,
  onSave,
  onCancel,
}: {
  target: DiffLineTarget;
  onSave: (text: string) => Promise<void>;
  onCancel: () => void;
}) {
  const [text, setText] = useState("");
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const label = rangeLabel(target.file, target.line, target.endLine);
  const save = async () => {
    if (!text.trim()) return;
    setSaving(true);
    setError(null);
    try {
      await onSave(text.trim());
    } catch (e) {
      setError(errorMessage(e));
      setSaving(false);
    }
  };
  return (
    <form
      className="review-editor"
      data-testid="review-comment-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label className="small muted" htmlFor="review-comment-text">
        Comment on <span className="mono">{label}</span>
      </label>
      <textarea
        id="review-comment-text"
        className="input review-editor-text"
        data-testid="review-comment-text"
        rows={3}
        autoFocus
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") onCancel();
          else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            void save();
          }
        }}
      />
      {error && (
        <p className="error-text small" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        <button type="submit" className="btn small primary" data-testid="review-comment-save" disabled={saving || !text.trim()}>
          {saving ? "Saving…" : "Add comment"}
        </button>
        <button type="button" className="btn small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
