/**
 * Follow-ups typed while a turn runs, oldest first: each can be edited (back into the input) or
 * cancelled, and the first sent at once when no turn runs.
 */
export function QueuedList({
  queued,
  running,
  onSendNow,
  onEdit,
  onCancel,
}: {
  queued: readonly string[];
  running: boolean;
  onSendNow: () => void;
  onEdit: (i: number) => void;
  onCancel: (i: number) => void;
}) {
  if (queued.length === 0) return null;
  return (
    <ul className="queued-list" data-testid="queued-messages" aria-label="Queued follow-ups">
      {queued.map((q, i) => (
        <li key={`${i}:${q}`} className="queued" data-testid="queued-message">
          <span className="muted small">Queued{running ? " (sent when the turn ends)" : ""}:</span>{" "}
          <span className="queued-text">{q.length > 160 ? `${q.slice(0, 160)}…` : q}</span>
          {!running && i === 0 && (
            <button type="button" className="link-btn" data-testid="queued-send" onClick={() => onSendNow()}>
              Send now
            </button>
          )}
          <button type="button" className="link-btn" data-testid="queued-edit" onClick={() => onEdit(i)}>
            Edit
          </button>
          <button type="button" className="link-btn" data-testid="queued-cancel" onClick={() => onCancel(i)}>
            Cancel
          </button>
        </li>
      ))}
    </ul>
  );
}
