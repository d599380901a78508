import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import type { Message, RevertPreview } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { keys } from "../../state/queries";
import { useServices, useToast } from "../context";
import { FilesDiff } from "../DiffSlot";
import { Modal } from "../Modal";
import { textOf } from "../message/actions";
import { forkSize, previewWords, restoredText, restoreTarget } from "./plainWords";
import "./Checkpoints.css";

/** What the transcript's checkpoints can do: restore the files to a point, fork from it. */
export interface CheckpointApi {
  /** Tool calls whose changes are undone now (their cards say so). */
  undone: ReadonlySet<string>;
  /** The answer "Restore to here" on this user message goes back to (null: nothing changed since). */
  restoreFor: (userMessageId: string) => string | null;
  /** Opens the preview of restoring the files to before `messageId`'s first change. */
  restore: (messageId: string) => void;
  /** Opens the preview of a fork at `messageId`. */
  fork: (messageId: string) => void;
  busy: boolean;
}

const Ctx = createContext<CheckpointApi | null>(null);

export function useCheckpoints(): CheckpointApi | null {
  return useContext(Ctx);
}

type Open = { kind: "restore"; messageId: string } | { kind: "fork"; messageId: string } | null;

/** Provides the checkpoints to the transcript and shows their previews. */
export function CheckpointsProvider({
  sessionId,
  messages,
  busy,
  onChanged,
  onFork,
  children,
}: {
  sessionId: string;
  messages: Message[];
  busy: boolean;
  /** Files changed (a restore): the view's steps and diffs are stale. */
  onChanged: () => void;
  onFork: (messageId: string, withFiles: boolean) => Promise<void>;
  children: ReactNode;
}) {
  const { api } = useServices();
  const timeline = useQuery({ queryKey: keys.timeline(sessionId), queryFn: () => api.timeline(sessionId) });
  const steps = useMemo(() => timeline.data ?? [], [timeline.data]);
  const [open, setOpen] = useState<Open>(null);
  const value = useMemo<CheckpointApi>(
    () => ({
      undone: new Set(steps.filter((s) => s.undone && s.tool_call_id).map((s) => s.tool_call_id!)),
      restoreFor: (id) => restoreTarget(messages, id, steps),
      restore: (messageId) => setOpen({ kind: "restore", messageId }),
      fork: (messageId) => setOpen({ kind: "fork", messageId }),
      busy,
    }),
    [steps, messages, busy],
  );
  const close = useCallback(() => setOpen(null), []);
  return (
    <Ctx.Provider value={value}>
      {children}
      {open?.kind === "restore" && (
        <RestorePreview sessionId={sessionId} messageId={open.messageId} busy={busy} onDone={onChanged} onClose={close} />
      )}
      {open?.kind === "fork" && (
        <ForkPreview messages={messages} messageId={open.messageId} onFork={onFork} onClose={close} />
      )}
    </Ctx.Provider>
  );
}

function RestorePreview({
  sessionId,
  messageId,
  busy,
  onDone,
  onClose,
}: {
  sessionId: string;
  messageId: string;
  busy: boolean;
  onDone: () => void;
  onClose: () => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const preview = useQuery<RevertPreview>({
    queryKey: ["checkpoint-preview", sessionId, messageId],
    queryFn: () => api.preview(sessionId, { action: "revert", message_id: messageId }),
    gcTime: 0,
  });
  const [applying, setApplying] = useState(false);
  const [refused, setRefused] = useState<{ path: string; reason: string }[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const p = preview.data;
  const conflicts = refused ?? (p?.files ?? []).flatMap((f) => (f.conflict ? [{ path: f.path, reason: f.conflict }] : []));
  const apply = async (force: boolean) => {
    setApplying(true);
    setError(null);
    try {
      const r = await api.revert(sessionId, messageId, force);
      if (!r.applied) {
        setRefused(r.conflicts.map((c) => ({ path: c.path, reason: c.reason })));
        return;
      }
      onDone();
      toast(restoredText(r), "info");
      onClose();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setApplying(false);
    }
  };
  return (
    <Modal title="Restore to here" onClose={onClose} wide testId="checkpoint-preview">
      <p className="cp-lead">The files go back to how they were before this message&apos;s first change.</p>
      {preview.isPending && <p className="muted">Working out what would change…</p>}
      {preview.error && (
        <p className="error-text" role="alert">
          {errorMessage(preview.error)}
        </p>
      )}
      {p && (
        <>
          {p.files.length === 0 ? (
            <p className="muted">No file would change.</p>
          ) : (
            <ul className="cp-files">
              {p.files.map((f) => (
                <li key={f.path} data-testid="checkpoint-file" data-action={f.action}>
                  <code>{f.path}</code> <span className="muted">{previewWords(f)}</span>
                </li>
              ))}
            </ul>
          )}
          {(p.unrestorable ?? []).length > 0 && (
            <p className="cp-warn">Cannot be restored (never captured): {(p.unrestorable ?? []).join(", ")}</p>
          )}
          {(p.left_alone ?? []).length > 0 && (
            <p className="muted small">
              Left as they are (changed by something else): {(p.left_alone ?? []).map((l) => l.path).join(", ")}
            </p>
          )}
          {p.diff.length > 0 && (
            <details className="cp-diff">
              <summary>
                The change <span className="add">+{p.additions}</span>{" "}
                <span className="del">−{p.deletions}</span>
              </summary>
              <FilesDiff files={p.diff} />
            </details>
          )}
          <details className="cp-details">
            <summary>Details</summary>
            <p className="muted small">
              Undoes {p.steps.length} {p.steps.length === 1 ? "step" : "steps"}; message <code>{messageId}</code>. Redo
              brings them back.
            </p>
          </details>
        </>
      )}
      {conflicts.length > 0 && (
        <div className="cp-conflicts" role="alert" data-testid="checkpoint-conflicts">
          <strong>
            {refused ? "Nothing was changed: " : ""}
            {conflicts.length === 1 ? "1 file was" : `${conflicts.length} files were`} changed outside Mia Code
          </strong>
          <ul>
            {conflicts.map((c) => (
              <li key={c.path}>
                <code>{c.path}</code>: {c.reason}
              </li>
            ))}
          </ul>
        </div>
      )}
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      {busy && <p className="muted small">A turn is running: wait for it to finish (or stop it) first.</p>}
      <div className="cp-actions">
        <button
          type="button"
          className={conflicts.length ? "btn danger" : "btn primary"}
          data-testid="checkpoint-apply"
          disabled={!p || p.files.length === 0 || applying || busy}
          onClick={() => void apply(conflicts.length > 0)}
        >
          {conflicts.length ? "Overwrite anyway (keeps a backup)" : "Restore"}
        </button>
        <button type="button" className="btn" data-testid="checkpoint-cancel" onClick={onClose}>
          Cancel
        </button>
      </div>
    </Modal>
  );
}

function ForkPreview({
  messages,
  messageId,
  onFork,
  onClose,
}: {
  messages: Message[];
  messageId: string;
  onFork: (messageId: string, withFiles: boolean) => Promise<void>;
  onClose: () => void;
}) {
  const [withFiles, setWithFiles] = useState(false);
  const [forking, setForking] = useState(false);
  const n = forkSize(messages, messageId);
  const at = messages.find((m) => m.id === messageId);
  const excerpt = at ? textOf(at).trim().replace(/\s+/g, " ").slice(0, 120) : "";
  const go = async () => {
    setForking(true);
    try {
      await onFork(messageId, withFiles);
      onClose();
    } finally {
      setForking(false);
    }
  };
  return (
    <Modal title="Fork from here" onClose={onClose} testId="checkpoint-fork-preview">
      <p className="cp-lead" data-testid="checkpoint-fork-summary">
        A new session starts with the {n === 1 ? "first message" : `${n} messages`} up to this one
        {excerpt ? (
          <>
            , ending with “<em>{excerpt}</em>”
          </>
        ) : null}
        . This session stays as it is.
      </p>
      <label className="cp-check">
        <input
          type="checkbox"
          checked={withFiles}
          data-testid="checkpoint-fork-files"
          onChange={(e) => setWithFiles(e.target.checked)}
        />
        <span>
          With files: a new worktree holding the project as it was at this message (git projects only)
        </span>
      </label>
      <p className="muted small">
        {withFiles
          ? "The fork works in its own copy: changes there do not touch this session's files."
          : "The fork works in the same folder: its changes and this session's touch the same files."}
      </p>
      <div className="cp-actions">
        <button type="button" className="btn primary" data-testid="checkpoint-fork-confirm" disabled={forking} onClick={() => void go()}>
          Fork
        </button>
        <button type="button" className="btn" data-testid="checkpoint-cancel" onClick={onClose}>
          Cancel
        </button>
      </div>
    </Modal>
  );
}

/** "Restore to here" and "Fork from here" on a user message or an edit's tool card. */
export function CheckpointActions({ restoreTo, forkAt }: { restoreTo: string | null; forkAt: string }) {
  const cp = useCheckpoints();
  if (!cp) return null;
  return (
    <span className="cp-buttons">
      {restoreTo && (
        <button
          type="button"
          className="link-btn small"
          data-testid="checkpoint-restore"
          disabled={cp.busy}
          title={cp.busy ? "A turn is running" : "Preview the files as they were before this message's first change"}
          onClick={() => cp.restore(restoreTo)}
        >
          Restore to here
        </button>
      )}
      <button
        type="button"
        className="link-btn small"
        data-testid="checkpoint-fork"
        title="Preview a new session with the conversation up to here"
        onClick={() => cp.fork(forkAt)}
      >
        Fork from here
      </button>
    </span>
  );
}
