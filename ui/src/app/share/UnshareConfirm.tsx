import { useState } from "react";
import type { ShareRecord } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { useServices, useToast } from "../context";
import { Modal } from "../Modal";

/**
 * `/unshare`: asks, then revokes the session's share (`record`), the way the
 * sidebar asks before deleting a session.
 */
export function UnshareConfirm({
  sessionId,
  record,
  onClose,
}: {
  sessionId: string;
  record: ShareRecord;
  onClose: () => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const revoke = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.unshare(sessionId);
      toast(`Stopped sharing “${record.session_title}”: the link no longer works`, "info");
      onClose();
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <Modal title="Stop sharing?" onClose={onClose} testId="unshare-confirm">
      <p>
        Stop sharing <strong>{record.session_title}</strong>? The link <span className="mono share-url-text">{record.url}</span>{" "}
        stops working for everyone who has it.
      </p>
      {error && (
        <div className="error-banner share-error-banner" role="alert">
          <span>{error}</span>
        </div>
      )}
      <div className="row-end">
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Cancel
        </button>
        <button
          type="button"
          className="btn danger"
          data-testid="unshare-confirm-button"
          disabled={busy}
          onClick={() => void revoke()}
        >
          Stop sharing
        </button>
      </div>
    </Modal>
  );
}
