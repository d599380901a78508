export interface SlashCommand {
  name: string;
  description: string;
  /** What may follow the name (`/model provider/model`); the rest of the line is passed on. */
  args?: string;
}

export const COMMANDS: SlashCommand[] = [
  { name: "undo", description: "Undo the last file-changing step" },
  { name: "redo", description: "Redo what the last undo/revert changed" },
  { name: "revert", description: "Revert to an earlier point (opens the timeline)" },
  { name: "snapshots", description: "Show the session's snapshots (timeline)" },
  { name: "diff", description: "Show the diff of the whole session" },
  { name: "new", description: "Start a new session" },
  { name: "plan", description: "Switch to the plan agent (read-only)" },
  { name: "build", description: "Switch to the build agent" },
  { name: "worktrees", description: "Worktrees of this project: create, try N ways, remove" },
  { name: "compare", description: "Compare two attempts (worktrees or main), take files, promote" },
  {
    name: "review",
    description: "Review and ship: comment on the changes and send the comments to the agent; stage, commit, push, open a pull request",
  },
  { name: "fork", description: "Fork this session at its last message and open the fork" },
  { name: "forks", description: "The fork tree of this project, focused on this session" },
  { name: "promote", description: "Make this fork a top-level session (forks only)" },
  {
    name: "compact",
    description: "Summarise the older messages now to free the model's context (the originals stay readable)",
  },
  {
    name: "model",
    args: "[provider/model | default]",
    description: "The session's model: /model alone opens the picker, /model provider/model sets it, /model default clears it",
  },
  {
    name: "share",
    description: "Share this session publicly: preview exactly what is uploaded (secrets redacted), then publish or update",
  },
  { name: "unshare", description: "Stop sharing this session (its link stops working)" },
  { name: "cost", description: "What this session cost per agent and model, its subagents included" },
  {
    name: "history",
    args: "--full",
    description: "The whole conversation, the messages compactions archived included (marked)",
  },
  {
    name: "agent",
    args: "create [description]",
    description: "agent create: generate a new agent from a description (preview, edit, refine, save)",
  },
  { name: "help", description: "Keyboard shortcuts and commands" },
];

export type CommandName = (typeof COMMANDS)[number]["name"];

/**
 * What the command palette asks of the open session: a `/` command (with its arguments) or one of
 * the view's own keys ("stop": Esc, "mode": Tab). The session view listens for it on `window`.
 */
export const SESSION_COMMAND = "mia-session-command";
export type SessionCommand =
  | { kind: "command"; name: CommandName; args?: string }
  | { kind: "stop" }
  | { kind: "mode" };

export function runSessionCommand(cmd: SessionCommand): void {
  window.dispatchEvent(new CustomEvent<SessionCommand>(SESSION_COMMAND, { detail: cmd }));
}

/** The modifier key's name where the app runs (⌘ on macOS, Ctrl elsewhere), for shortcut labels. */
export function modKey(): string {
  const p = typeof navigator === "undefined" ? "" : navigator.platform || navigator.userAgent;
  return /Mac|iPhone|iPad/i.test(p) ? "⌘" : "Ctrl";
}

/** The session's `/` commands the palette offers, in its words (the window's own are listed by App). */
export const PALETTE_SESSION_COMMANDS: { name: CommandName; label: string; args?: string }[] = [
  { name: "undo", label: "Undo the last file-changing step" },
  { name: "redo", label: "Redo what the last undo changed" },
  { name: "snapshots", label: "Show the session's changes (undo timeline)" },
  { name: "diff", label: "Show the diff of the whole session" },
  { name: "review", label: "Review and ship the changes (comments, stage, commit, pull request)" },
  { name: "plan", label: "Switch to the plan agent" },
  { name: "build", label: "Switch to the build agent" },
  { name: "model", label: "Choose the session's model" },
  { name: "fork", label: "Fork this session" },
  { name: "promote", label: "Make this fork a top-level session" },
  { name: "compact", label: "Compact the conversation now" },
  { name: "cost", label: "Show what this session cost" },
  { name: "history", label: "Show the whole conversation history" },
  { name: "share", label: "Share this session…" },
  { name: "unshare", label: "Stop sharing this session" },
  { name: "agent", label: "Create an agent…", args: "create" },
];
