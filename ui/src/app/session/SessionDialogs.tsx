import type { PermissionReplyKind, PermissionRequest, ShareRecord } from "../../protocol/generated";
import { PermissionDialog } from "../../components/permission/PermissionDialog";
import { keys } from "../../state/queries";
import { useServices } from "../context";
import { LoadedDiff } from "../DiffSlot";
import { ErrorBoundary } from "../ErrorBoundary";
import { HelpText } from "../Help";
import { Modal } from "../Modal";
import { ShareDialog } from "../ShareDialog";
import { UnshareConfirm } from "../share/UnshareConfirm";

/** A diff the view shows in a dialog: the session's, a message's or a step's. */
export type DiffTarget = { title: string; scope: "session" | { message: string } | { step: string } } | null;

/** What a session view opens over itself: the permission asks, a diff, sharing, unsharing, help. */
export function SessionDialogs({
  sessionId,
  permissions,
  hideAsks,
  onReply,
  diff,
  onCloseDiff,
  sharing,
  onCloseShare,
  unsharing,
  onCloseUnshare,
  help,
  onCloseHelp,
}: {
  sessionId: string;
  permissions: PermissionRequest[];
  /** The window's attention queue answers the asks instead. */
  hideAsks?: boolean;
  onReply: (requestId: string, r: PermissionReplyKind) => Promise<void>;
  diff: DiffTarget;
  onCloseDiff: () => void;
  sharing: boolean;
  onCloseShare: () => void;
  unsharing: ShareRecord | null;
  onCloseUnshare: () => void;
  help: boolean;
  onCloseHelp: () => void;
}) {
  const { api } = useServices();
  return (
    <>
      <ErrorBoundary label="The permission dialog">
        {!hideAsks && <PermissionDialog requests={permissions} onReply={onReply} />}
      </ErrorBoundary>
      {diff && (
        <Modal title={diff.title} onClose={onCloseDiff} wide testId="diff-modal">
          <ErrorBoundary label="The diff">
            <LoadedDiff queryKey={keys.diff(sessionId, diff.scope)} load={() => api.diff(sessionId, diff.scope)} />
          </ErrorBoundary>
        </Modal>
      )}
      {sharing && (
        <ErrorBoundary label="The share dialog">
          <ShareDialog sessionId={sessionId} onClose={onCloseShare} />
        </ErrorBoundary>
      )}
      {unsharing && <UnshareConfirm sessionId={sessionId} record={unsharing} onClose={onCloseUnshare} />}
      {help && (
        <Modal title="Help" onClose={onCloseHelp}>
          <HelpText />
        </Modal>
      )}
    </>
  );
}
