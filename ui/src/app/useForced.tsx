import { useState } from "react";
import { errorMessage } from "../lib/api";
import { ApiError } from "../transport/types";
import { Modal } from "./Modal";

/** A 409 of kind `would_lose`: refused because the operation would lose work (force would keep a copy). */
export const isKept = (e: unknown) =>
  e instanceof ApiError &&
  e.status === 409 &&
  !!e.body &&
  typeof e.body === "object" &&
  (e.body as { kind?: unknown }).kind === "would_lose";

interface Pending {
  title: string;
  verb: string;
  message: string;
  run: (force: boolean) => Promise<void>;
}

/**
 * A worktree operation that may be refused because it would lose work (take,
 * promote): `attempt` runs it without force; on a 409 a confirmation shows
 * the server's message (what would be lost) and offers "<verb> anyway",
 * which runs it with force — the server keeps a copy in the trash first.
 * Other errors go to `onError`. Render `dialog` somewhere in the caller.
 */
export function useForced(onError: (message: string) => void) {
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);

  const attempt = async (title: string, verb: string, run: (force: boolean) => Promise<void>) => {
    try {
      await run(false);
    } catch (e) {
      if (isKept(e)) setPending({ title, verb, message: errorMessage(e), run });
      else onError(errorMessage(e));
    }
  };

  const force = async (p: Pending) => {
    setBusy(true);
    try {
      await p.run(true);
      setPending(null);
    } catch (e) {
      setPending(null);
      onError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const dialog = pending && (
    <Modal title={pending.title} onClose={() => setPending(null)} testId="force-confirm">
      <p className="warning" data-testid="force-message">
        {pending.message}
      </p>
      <p>
        Going ahead keeps a copy of what it replaces or deletes in the worktree trash (Worktrees → Trash) before
        changing anything.
      </p>
      <div className="row-end">
        <button type="button" className="btn" onClick={() => setPending(null)} autoFocus>
          Cancel
        </button>
        <button
          type="button"
          className="btn danger"
          data-testid="force-confirm-button"
          disabled={busy}
          onClick={() => void force(pending)}
        >
          {pending.verb} anyway
        </button>
      </div>
    </Modal>
  );

  return { attempt, dialog };
}
