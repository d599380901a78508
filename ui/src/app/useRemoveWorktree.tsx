import { useState } from "react";
import type { WorktreeView } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { ApiError } from "../transport/types";
import { useServices, useToast } from "./context";
import { Modal } from "./Modal";

const isConflict = (e: unknown) =>
  e instanceof ApiError ? e.status === 409 : !!e && typeof e === "object" && (e as { status?: unknown }).status === 409;

/**
 * Removing a worktree: tried without force first; when the server keeps it
 * (409: work would be lost) a confirmation shows its message and offers
 * "Remove anyway". Render `dialog` somewhere in the caller.
 */
export function useRemoveWorktree(directory: string, onRemoved: (removed: WorktreeView) => void) {
  const { api } = useServices();
  const toast = useToast();
  const [kept, setKept] = useState<{ name: string; message: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const remove = async (name: string, force = false): Promise<boolean> => {
    setBusy(name);
    try {
      const removed = await api.removeWorktree(directory, name, force);
      setKept(null);
      toast(
        removed.trash
          ? `Removed worktree ${name}; what it would have lost is in the trash (${removed.trash.id})`
          : `Removed worktree ${name}`,
        "info",
      );
      onRemoved(removed);
      return true;
    } catch (e) {
      if (!force && isConflict(e)) setKept({ name, message: errorMessage(e) });
      else {
        setKept(null);
        toast(errorMessage(e));
      }
      return false;
    } finally {
      setBusy(null);
    }
  };

  const dialog = kept && (
    <Modal title={`Remove worktree ${kept.name}?`} onClose={() => setKept(null)} testId="worktree-remove-confirm">
      <p className="warning" data-testid="worktree-remove-message">
        {kept.message}
      </p>
      <p>
        Removing it anyway deletes its folder and its branch; what is listed above is first kept in the worktree trash
        (Worktrees → Trash), from where it can be restored.
      </p>
      <div className="row-end">
        <button type="button" className="btn" onClick={() => setKept(null)} autoFocus>
          Keep it
        </button>
        <button
          type="button"
          className="btn danger"
          data-testid="worktree-remove-force"
          disabled={busy !== null}
          onClick={() => void remove(kept.name, true)}
        >
          Remove anyway
        </button>
      </div>
    </Modal>
  );

  return { remove, dialog, busy };
}
