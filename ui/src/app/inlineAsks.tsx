import { createContext, useContext, useMemo, type ReactNode } from "react";
import type { FileDiff, PermissionReplyKind, PermissionRequest } from "../protocol/generated";
import type { ToolInfo } from "../state/session";
import { InlineAsk } from "../components/permission/InlineAsk";
import { filesToDiff, LazyDiffView } from "./DiffSlot";
import { useAsksAsDialog } from "./askStyle";

/** The asks a session view shows at their tool cards, and how they are answered. */
export interface InlineAsks {
  /** By the tool call they are about. */
  byCall: ReadonlyMap<string, PermissionRequest>;
  /** The oldest of them: the keys answer it. */
  activeId: string | null;
  directory: string;
  onReply: (requestId: string, reply: PermissionReplyKind) => Promise<void>;
}

const Ctx = createContext<InlineAsks | null>(null);

/**
 * Which of a session's pending asks are shown in its transcript: its own (not a subagent's), about
 * a tool call whose card is there, unless the person chose the dialog. The rest go to the dialog.
 */
export function splitAsks(
  sessionId: string,
  permissions: PermissionRequest[],
  tools: Record<string, ToolInfo>,
  asDialog: boolean,
): { inline: PermissionRequest[]; dialog: PermissionRequest[] } {
  if (asDialog) return { inline: [], dialog: permissions };
  const inline: PermissionRequest[] = [];
  const dialog: PermissionRequest[] = [];
  for (const p of permissions) {
    if (p.session_id === sessionId && p.call_id && tools[p.call_id]) inline.push(p);
    else dialog.push(p);
  }
  return { inline, dialog };
}

/** Splits the asks and provides the inline ones to the tool cards; returns those for the dialog. */
export function useInlineAsks(
  sessionId: string,
  permissions: PermissionRequest[],
  tools: Record<string, ToolInfo>,
  directory: string,
  onReply: InlineAsks["onReply"],
): { value: InlineAsks; dialog: PermissionRequest[] } {
  const asDialog = useAsksAsDialog();
  const { inline, dialog } = useMemo(
    () => splitAsks(sessionId, permissions, tools, asDialog),
    [sessionId, permissions, tools, asDialog],
  );
  const inlineKey = inline.map((p) => p.id).join(",");
  // Rebuilt when the inline asks change (by id), not on every tool update.
  const value = useMemo<InlineAsks>(() => {
    const byCall = new Map<string, PermissionRequest>();
    for (const p of inline) if (p.call_id) byCall.set(p.call_id, p);
    return { byCall, activeId: inline[0]?.id ?? null, directory, onReply };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- by id (see above)
  }, [inlineKey, directory, onReply]);
  // The dialog's list keeps its identity while it holds the same asks.
  const dialogKey = dialog.map((p) => p.id).join(",");
  // eslint-disable-next-line react-hooks/exhaustive-deps -- by id, as above
  const dialogList = useMemo(() => dialog, [dialogKey]);
  return { value, dialog: dialogList };
}

export function InlineAsksProvider({ value, children }: { value: InlineAsks; children: ReactNode }) {
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

const renderDiff = (d: FileDiff) => <LazyDiffView diff={filesToDiff([d])} defaultMode="unified" compact />;

/** The ask waiting at a tool card, drawn in place (nothing when none waits there). */
export function AskAtCard({ callId }: { callId: string }) {
  const asks = useContext(Ctx);
  const request = asks?.byCall.get(callId);
  if (!asks || !request) return null;
  return (
    <InlineAsk
      request={request}
      onReply={asks.onReply}
      active={asks.activeId === request.id}
      directory={asks.directory}
      pending={asks.byCall.size}
      renderDiff={renderDiff}
    />
  );
}
