import { useEffect, useId, useRef } from "react";
import { useKeyDown } from "../../lib/useKeyDown";
import { Dialog, Modal, ModalOverlay } from "react-aria-components";
import type {
  PermissionReplyKind,
  PermissionRequest,
} from "../../protocol/generated";
import {
  escapeReply,
  fetchMethod,
  offeredActions,
  prettyInput,
  targetLabel,
} from "./actions";
import type { ActionSpec } from "./actions";
import { SegmentList } from "./SegmentList";
import { ProposedChange } from "./ProposedChange";
import { useAskAnswer } from "./useAskAnswer";
import "./PermissionDialog.css";

export interface PermissionDialogProps {
  /** Pending asks, oldest first. The dialog answers the first one; nothing is shown when empty. */
  requests: PermissionRequest[];
  /** Send a reply. While the returned promise is pending, every action is disabled. */
  onReply: (
    requestId: string,
    reply: PermissionReplyKind,
  ) => void | Promise<void>;
  /** Answers count only this long after an ask appears (default {@link ARM_DELAY_MS}). */
  armDelayMs?: number;
  /** The session an ask waits in, when the dialog answers asks of several sessions. */
  sessionLabel?: (request: PermissionRequest) => string | undefined;
  /** A test id on the overlay around the dialog (the dialog is drawn over the page, not in place). */
  overlayTestId?: string;
}

/** How long after an ask appears its answers start to count (stray keys, double clicks). */
export const ARM_DELAY_MS = 400;

/** Modal, keyboard-driven dialog answering the oldest pending permission ask. */
export function PermissionDialog({
  requests,
  onReply,
  armDelayMs = ARM_DELAY_MS,
  sessionLabel,
  overlayTestId,
}: PermissionDialogProps) {
  const request = requests[0];
  if (!request) return null;
  // Keyed by the request so every ask starts with fresh state (no feedback text carried over).
  return (
    <DialogBody
      key={request.id}
      request={request}
      queue={requests}
      onReply={onReply}
      armDelayMs={armDelayMs}
      session={sessionLabel?.(request)}
      overlayTestId={overlayTestId}
    />
  );
}

interface DialogBodyProps {
  request: PermissionRequest;
  queue: PermissionRequest[];
  onReply: PermissionDialogProps["onReply"];
  armDelayMs: number;
  session?: string;
  overlayTestId?: string;
}

function DialogBody({
  request,
  queue,
  onReply,
  armDelayMs,
  session,
  overlayTestId,
}: DialogBodyProps) {
  const titleId = useId();
  const dialogRef = useRef<HTMLElement>(null);
  const feedbackRef = useRef<HTMLTextAreaElement>(null);
  // Keys typed just before an ask appeared (a follow-up in the prompt, a double Enter that
  // answered the previous ask) must not answer this one: actions arm after a short delay
  // (the keys and buttons check `armed`; Esc denies at once).
  const { armed, send, disabled, reply, choose, feedbackOpen, setFeedbackOpen, feedback, setFeedback, submitFeedback } =
    useAskAnswer(request, onReply, armDelayMs, false);

  const actions = offeredActions(request.options);
  const segments = request.segments ?? [];

  // Focus: react-aria's modal moves it into the dialog when an ask appears, keeps it inside
  // (Tab cycles) and gives it back when the dialog is gone.
  useEffect(() => {
    if (feedbackOpen) feedbackRef.current?.focus();
    else dialogRef.current?.focus();
  }, [feedbackOpen]);

  // The answer keys (the dialog's own shortcuts, wherever the focus is inside it).
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return;
    const target = e.target as HTMLElement;
    const inTextarea = target.tagName === "TEXTAREA";

    if (feedbackOpen) {
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        setFeedbackOpen(false);
      } else if (e.key === "Enter" && !e.shiftKey && inTextarea) {
        e.preventDefault();
        submitFeedback();
      }
      return;
    }

    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      const r = escapeReply(request.options);
      if (r) reply(r);
      return;
    }
    if (e.key === "Enter") {
      // A focused button or disclosure keeps its own Enter; elsewhere Enter allows once.
      if (
        target.tagName === "BUTTON" ||
        target.tagName === "SUMMARY" ||
        inTextarea
      )
        return;
      e.preventDefault();
      if (e.repeat || !armed) return;
      if (request.options.includes("once")) reply({ kind: "once" });
      return;
    }
    if (/^[1-9]$/.test(e.key) && !inTextarea && !e.shiftKey) {
      if (!armed) {
        e.preventDefault();
        return;
      }
      const action = actions[Number(e.key) - 1];
      if (action) {
        e.preventDefault();
        choose(action);
      }
    }
  };

  useKeyDown(dialogRef, onKeyDown);

  const label = targetLabel(request.tool, request.target, segments.length > 0);
  const method = fetchMethod(request.tool, request.input);
  const pending = queue.length;

  return (
    <ModalOverlay
      isOpen
      isDismissable={false}
      isKeyboardDismissDisabled
      className="mia-perm-backdrop"
      data-testid={overlayTestId}
    >
      <Modal className="mia-perm-modal">
        <Dialog
          ref={dialogRef}
          className="mia-perm"
          aria-labelledby={titleId}
          aria-describedby={`${titleId}-target`}
          data-testid="permission-dialog"
        >
          {/* What is asked scrolls; the answer keys below it stay put. */}
          <div className="mia-perm-body">
            <header className="mia-perm-header">
              <h2 id={titleId} className="mia-perm-title">
                {request.permission === "sandbox_escape" ? (
                  <>
                    Run{" "}
                    <span
                      className="mia-perm-tool"
                      data-testid="permission-tool"
                    >
                      {request.tool}
                    </span>{" "}
                    outside the OS sandbox?
                  </>
                ) : (
                  <>
                    Allow{" "}
                    <span
                      className="mia-perm-tool"
                      data-testid="permission-tool"
                    >
                      {request.tool}
                    </span>
                    ?
                  </>
                )}
              </h2>
              <span
                className="mia-perm-queue-count"
                data-testid="permission-queue"
                aria-live="polite"
              >
                1 of {pending} pending
              </span>
            </header>
            <p className="mia-perm-meta" data-testid="permission-meta">
              {request.root_session_id &&
              request.root_session_id !== request.session_id ? (
                <>
                  <strong>{request.agent}</strong>{" "}
                  <span className="mia-perm-subagent">(subagent)</span> asks for
                  permission <code>{request.permission}</code>
                  <span className="mia-perm-subagent-note">
                    {" "}
                    — a delegated task waits for this answer
                  </span>
                </>
              ) : (
                <>
                  Agent <strong>{request.agent}</strong> asks for permission{" "}
                  <code>{request.permission}</code>
                </>
              )}
              {session && (
                <span
                  className="mia-perm-session"
                  data-testid="permission-session"
                >
                  {" "}
                  in session <strong>{session}</strong>
                </span>
              )}
            </p>

            <div className="mia-perm-target-row">
              <span className="mia-perm-label">{label}</span>
              {method && (
                <span
                  className="mia-perm-method"
                  data-testid="permission-method"
                >
                  {method}
                </span>
              )}
              <code
                id={`${titleId}-target`}
                className="mia-perm-target"
                data-testid="permission-target"
              >
                {request.target}
              </code>
            </div>

            {request.proposed && <ProposedChange diff={request.proposed} />}

            {segments.length > 0 && <SegmentList segments={segments} />}

            <p className="mia-perm-rule" data-testid="permission-rule">
              {request.matched_rule ? (
                <>
                  Rule: <code>{request.matched_rule}</code>
                </>
              ) : (
                "no rule matched: asking by default"
              )}
            </p>
            {request.reason && (
              <p className="mia-perm-reason">{request.reason}</p>
            )}

            <details className="mia-perm-args">
              <summary>Arguments</summary>
              <pre className="mia-perm-json">{prettyInput(request.input)}</pre>
            </details>

            {pending > 1 && (
              <ol
                className="mia-perm-queue"
                aria-label="Pending permission asks"
              >
                {queue.map((r, i) => (
                  <li
                    key={r.id}
                    className={i === 0 ? "mia-perm-queue-current" : undefined}
                  >
                    <span className="mia-perm-queue-tool">{r.tool}</span>{" "}
                    <code>{r.target}</code>
                  </li>
                ))}
              </ol>
            )}
          </div>
          <div className="mia-perm-footer">
            {feedbackOpen ? (
              <div className="mia-perm-feedback">
                <label htmlFor={`${titleId}-fb`} className="mia-perm-label">
                  Tell the agent what to do instead (Enter sends, Shift+Enter
                  new line, Escape goes back)
                </label>
                <textarea
                  id={`${titleId}-fb`}
                  ref={feedbackRef}
                  className="mia-perm-feedback-input"
                  data-testid="permission-feedback-input"
                  rows={3}
                  value={feedback}
                  disabled={disabled}
                  onChange={(e) => setFeedback(e.target.value)}
                />
                <div className="mia-perm-actions">
                  <button
                    type="button"
                    className="mia-perm-btn mia-perm-btn-deny"
                    data-testid="permission-feedback-submit"
                    disabled={disabled || feedback.trim() === ""}
                    onClick={submitFeedback}
                  >
                    Deny and send feedback <kbd>Enter</kbd>
                  </button>
                  <button
                    type="button"
                    className="mia-perm-btn"
                    disabled={disabled}
                    onClick={() => setFeedbackOpen(false)}
                  >
                    Back <kbd>Esc</kbd>
                  </button>
                </div>
              </div>
            ) : (
              <div className="mia-perm-actions" role="group" aria-label="Reply">
                {actions.map((action, i) => (
                  <button
                    key={action.kind}
                    type="button"
                    className={`mia-perm-btn mia-perm-btn-${action.tone}`}
                    data-testid={action.testId}
                    disabled={disabled || !armed}
                    onClick={() => choose(action)}
                    aria-keyshortcuts={shortcutFor(action, i, request.options)}
                  >
                    <kbd className="mia-perm-key">{i + 1}</kbd> {action.label}
                    {(action.kind === "session" ||
                      action.kind === "never" ||
                      action.kind === "project") && (
                      <span className="mia-perm-scope">
                        {" "}
                        ({request.agent} only)
                      </span>
                    )}
                    {action.kind === "once" && (
                      <kbd className="mia-perm-key mia-perm-key-alt">Enter</kbd>
                    )}
                    {escapeReply(request.options)?.kind === action.kind && (
                      <kbd className="mia-perm-key mia-perm-key-alt">Esc</kbd>
                    )}
                  </button>
                ))}
              </div>
            )}

            {send.state === "sending" && (
              <p className="mia-perm-status">Sending…</p>
            )}
            {send.state === "sent" && (
              <p className="mia-perm-status">Sent, waiting for the agent…</p>
            )}
            {send.state === "error" && (
              <p className="mia-perm-error" role="alert">
                Could not send the reply: {send.message}
              </p>
            )}
          </div>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

function shortcutFor(
  action: ActionSpec,
  index: number,
  options: readonly string[],
): string {
  const keys = [String(index + 1)];
  if (action.kind === "once") keys.push("Enter");
  if (escapeReply(options)?.kind === action.kind) keys.push("Escape");
  return keys.join(" ");
}
