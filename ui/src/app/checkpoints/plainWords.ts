import type { Message, PreviewFile, RevertSummary, TimelineStep } from "../../protocol/generated";

/** A restore's result in plain words: which files were restored and removed (no hashes, no ids). */
export function restoredText(s: Pick<RevertSummary, "restored" | "removed">): string {
  const parts: string[] = [];
  if (s.restored.length) parts.push(`restored ${list(s.restored)}`);
  if (s.removed.length) parts.push(`removed ${list(s.removed)}`);
  return parts.length ? `Reverted: ${parts.join("; ")}` : "Reverted: no file needed to change";
}

function list(paths: string[]): string {
  if (paths.length <= 3) return paths.join(", ");
  return `${paths.slice(0, 3).join(", ")} and ${paths.length - 3} more`;
}

/** What a preview line means for a person: `src/a.ts` goes back, `src/new.ts` is removed. */
export function previewWords(f: PreviewFile): string {
  if (f.action === "remove") return "removed (it was created after this point)";
  if (f.was === "deleted") return "brought back (it was deleted after this point)";
  return "back to how it was";
}

/**
 * The message whose first change "Restore to here" on a user message goes back to: the first
 * file-changing step (not undone) of an answer after it. Null when nothing changed since.
 */
export function restoreTarget(messages: Message[], userMessageId: string, steps: TimelineStep[]): string | null {
  const at = messages.findIndex((m) => m.id === userMessageId);
  if (at < 0) return null;
  const after = new Set(messages.slice(at + 1).map((m) => m.id));
  const first = steps
    .filter((s) => s.kind === "tool" && !s.undone && s.changes.length > 0 && after.has(s.message_id))
    .sort((a, b) => a.index - b.index)[0];
  return first?.message_id ?? null;
}

/** How many messages a fork at `messageId` starts with (the conversation up to it, markers not counted). */
export function forkSize(messages: Message[], messageId: string): number {
  const at = messages.findIndex((m) => m.id === messageId);
  if (at < 0) return 0;
  return messages.slice(0, at + 1).filter((m) => m.type === "normal" && m.role !== "system").length;
}
