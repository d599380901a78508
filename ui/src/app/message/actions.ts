import type { Message } from "../../protocol/generated";
import type { MarkerMemory } from "../../state/liveSessions";
import type { TaskCardActions } from "../TaskCard";

export interface MessageActions extends TaskCardActions {
  onDiffStep: (callId: string) => void;
  onDiffMessage: (messageId: string) => void;
  onRetry: () => void;
  /** "Fork from here" / "Fork with files from here" in a message's menu. */
  onFork?: (messageId: string, withFiles: boolean) => void;
  /** Opens a session (the fork marker's link to the parent), optionally at one of its messages. */
  onOpenSession?: (sessionId: string, messageId?: string) => void;
  /** A session's title, when known (the fork marker names the parent). */
  sessionTitle?: (sessionId: string) => string | undefined;
  /** The messages a compaction summary replaced (GET ?archived=true, those `compacted_by` it). */
  loadArchived?: (summaryId: string) => Promise<Message[]>;
  /** What each compaction marker has open, by summary id (kept while its row leaves the virtualised list). */
  markers?: Map<string, MarkerMemory>;
}

/** The text parts of a message, joined. */
export function textOf(m: Message): string {
  return m.parts.map((p) => (p.content.type === "text" ? p.content.text : "")).join("");
}
