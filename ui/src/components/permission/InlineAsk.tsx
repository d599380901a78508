import { useEffect, useEffectEvent, useId, useRef, type CSSProperties, type ReactNode } from "react";
import { ChevronDown } from "lucide-react";
import { Button, Keyboard, Menu, MenuItem, MenuTrigger, Popover, Text } from "react-aria-components";
import type { FileDiff, PermissionReplyKind, PermissionRequest } from "../../protocol/generated";
import { escapeReply, fetchMethod, offeredActions, prettyInput, targetLabel, type ActionSpec } from "./actions";
import { reasonOnce, relativePath, ruleText } from "./askText";
import { ARM_DELAY_MS } from "./PermissionDialog";
import { ProposedChange } from "./ProposedChange";
import { SegmentList } from "./SegmentList";
import { useAskAnswer } from "./useAskAnswer";
import "./InlineAsk.css";

export interface InlineAskProps {
  request: PermissionRequest;
  /** Send a reply. While the returned promise is pending, every answer is disabled. */
  onReply: (requestId: string, reply: PermissionReplyKind) => void | Promise<void>;
  /** The keys (Enter, Esc, 1–6) answer this ask: the oldest one shown in the transcript. */
  active: boolean;
  /** The project's folder: paths under it are shown relative to it. */
  directory?: string;
  /** How many asks wait in the session (this one included). */
  pending?: number;
  /** Answers count only this long after the ask appears; drawn as a fill on the buttons. */
  armDelayMs?: number;
  /** How the proposed change is drawn (default: the permission dialog's diff). */
  renderDiff?: (diff: FileDiff) => ReactNode;
}

const ALLOW_MORE = new Set(["session", "project"]);
const DENY_MORE = new Set(["never", "reject_with_feedback"]);

function isEditable(t: HTMLElement): boolean {
  return t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable;
}

/**
 * A permission ask at its tool card, in the transcript: what would change (a diff, the command's
 * parts or the target), why it is asked (once), "Allow once" as the primary answer, the wider
 * answers in an "Allow…" and a "Deny…" menu. The keys are the dialog's: Enter allows once, Esc
 * denies, 1–6 pick an answer. Answers count only after the arming delay, drawn as a fill.
 */
export function InlineAsk(props: InlineAskProps) {
  // Keyed by the request: every ask starts with fresh state (no feedback text carried over).
  return <AskBody key={props.request.id} {...props} />;
}

function AskBody({ request, onReply, active, directory, pending = 1, armDelayMs = ARM_DELAY_MS, renderDiff }: InlineAskProps) {
  const titleId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const feedbackRef = useRef<HTMLTextAreaElement>(null);
  // Before the answers arm, nothing is sent, not even a denial (clicks and keys are ignored).
  const { armed, send, disabled, reply, choose, feedbackOpen, setFeedbackOpen, feedback, setFeedback, submitFeedback } =
    useAskAnswer(request, onReply, armDelayMs, true);

  const actions = offeredActions(request.options);

  // The ask takes the focus when it becomes the one the keys answer (as the dialog did).
  useEffect(() => {
    if (!active) return;
    if (feedbackOpen) feedbackRef.current?.focus();
    else rootRef.current?.focus({ preventScroll: true });
  }, [active, feedbackOpen]);

  const onKey = useEffectEvent((e: KeyboardEvent) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return;
    const target = e.target instanceof HTMLElement ? e.target : document.body;
    const inside = rootRef.current?.contains(target) ?? false;
    if (!inside) {
      // Elsewhere on the page the keys answer only when nothing else takes them: not while
      // typing, not in a menu or a dialog, not Enter on a control.
      if (isEditable(target) || target.closest("[role='menu'], [role='dialog'], [role='listbox']")) return;
      if (document.querySelector("[role='dialog'][aria-modal='true'], .mia-perm-backdrop")) return;
      if (e.key === "Enter" && target.closest("button, a, summary, [role='button']")) return;
    }
    const inTextarea = target.tagName === "TEXTAREA";
    if (feedbackOpen) {
      if (e.key === "Escape") {
        e.preventDefault();
        e.stopPropagation();
        setFeedbackOpen(false);
        rootRef.current?.focus({ preventScroll: true });
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
      if (inside && (target.tagName === "BUTTON" || target.tagName === "SUMMARY" || inTextarea)) return;
      e.preventDefault();
      if (e.repeat) return;
      if (request.options.includes("once")) reply({ kind: "once" });
      return;
    }
    if (/^[1-9]$/.test(e.key) && !inTextarea && !e.shiftKey) {
      const action = actions[Number(e.key) - 1];
      if (action) {
        e.preventDefault();
        choose(action);
      }
    }
  });
  useEffect(() => {
    if (!active) return;
    const listener = (e: KeyboardEvent) => onKey(e);
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, [active]);

  const segments = request.segments ?? [];
  const subagent = !!request.root_session_id && request.root_session_id !== request.session_id;
  const target = relativePath(request.target, directory);
  const why = reasonOnce(request.reason, directory);
  const rule = ruleText(request.matched_rule, directory);
  const method = fetchMethod(request.tool, request.input);
  const once = actions.find((a) => a.kind === "once");
  const deny = actions.find((a) => a.kind === "deny");
  const allowMore = actions.filter((a) => ALLOW_MORE.has(a.kind));
  const denyMore = actions.filter((a) => DENY_MORE.has(a.kind));
  const keyOf = (a: ActionSpec) => String(actions.indexOf(a) + 1);
  const esc = escapeReply(request.options)?.kind;
  const arming = armed ? undefined : "";
  const armStyle = { "--mia-arm-ms": `${armDelayMs}ms` } as CSSProperties;
  const scope = (a: ActionSpec) =>
    a.kind === "session" || a.kind === "never" || a.kind === "project" ? ` (${request.agent} only)` : "";

  return (
    <div
      ref={rootRef}
      className="mia-ask"
      role="group"
      aria-labelledby={titleId}
      data-testid="permission-ask"
      data-request-id={request.id}
      data-active={active ? "true" : undefined}
      data-armed={armed ? "true" : "false"}
      tabIndex={-1}
      style={armStyle}
    >
      <div className="mia-ask-head">
        <span id={titleId} className="mia-ask-title">
          {request.permission === "sandbox_escape" ? "Run " : "Allow "}
          <span className="mia-ask-tool" data-testid="permission-tool">
            {request.tool}
          </span>
          {request.permission === "sandbox_escape" ? " outside the OS sandbox?" : "?"}
        </span>
        {subagent && (
          <span className="mia-ask-meta" data-testid="permission-meta">
            {request.agent} (subagent) asks: a delegated task waits for this answer
          </span>
        )}
        {pending > 1 && (
          <span className="mia-ask-meta mia-ask-count" data-testid="permission-queue">
            1 of {pending} waiting
          </span>
        )}
      </div>
      {why && (
        <p className="mia-ask-reason" data-testid="permission-reason">
          {why}
        </p>
      )}
      {request.proposed ? (
        <div className="mia-ask-change" data-testid={renderDiff ? "permission-proposed" : undefined}>
          {renderDiff ? renderDiff(request.proposed) : <ProposedChange diff={request.proposed} />}
        </div>
      ) : segments.length > 0 ? (
        <SegmentList segments={segments} />
      ) : (
        <p className="mia-ask-target">
          <span className="mia-ask-label">{targetLabel(request.tool, request.target, false)}</span>{" "}
          {method && <span className="mia-ask-method" data-testid="permission-method">{method}</span>}{" "}
          <code data-testid="permission-target">{target}</code>
        </p>
      )}
      {request.proposed && (
        <code className="sr-only" data-testid="permission-target">
          {target}
        </code>
      )}

      {feedbackOpen ? (
        <div className="mia-ask-feedback">
          <label htmlFor={`${titleId}-fb`} className="mia-ask-label">
            Tell the agent what to do instead (Enter sends, Shift+Enter new line, Esc goes back)
          </label>
          <textarea
            id={`${titleId}-fb`}
            ref={feedbackRef}
            className="mia-ask-feedback-input"
            data-testid="permission-feedback-input"
            rows={3}
            value={feedback}
            disabled={disabled}
            onChange={(e) => setFeedback(e.target.value)}
          />
          <div className="mia-ask-actions">
            <button
              type="button"
              className="mia-ask-btn mia-ask-btn-deny"
              data-testid="permission-feedback-submit"
              disabled={disabled || feedback.trim() === ""}
              onClick={submitFeedback}
            >
              Deny and send <kbd>Enter</kbd>
            </button>
            <button type="button" className="mia-ask-btn" disabled={disabled} onClick={() => setFeedbackOpen(false)}>
              Back <kbd>Esc</kbd>
            </button>
          </div>
        </div>
      ) : (
        <div className="mia-ask-actions" role="group" aria-label="Answer">
          {once && (
            <button
              type="button"
              className="mia-ask-btn mia-ask-btn-primary"
              data-testid={once.testId}
              data-arming={arming}
              disabled={disabled}
              aria-keyshortcuts={`${keyOf(once)} Enter`}
              onClick={() => choose(once)}
            >
              Allow once <kbd>Enter</kbd>
            </button>
          )}
          {allowMore.length > 0 && (
            <AskMenu
              label="Allow…"
              testId="permission-allow-more"
              arming={arming}
              disabled={disabled}
              items={allowMore.map((a) => ({ action: a, label: `${a.label}${scope(a)}`, key: keyOf(a) }))}
              onChoose={choose}
            />
          )}
          <span className="mia-ask-spacer" />
          {deny && (
            <button
              type="button"
              className="mia-ask-btn mia-ask-btn-deny"
              data-testid={deny.testId}
              data-arming={arming}
              disabled={disabled}
              aria-keyshortcuts={`${keyOf(deny)}${esc === "deny" ? " Escape" : ""}`}
              onClick={() => choose(deny)}
            >
              Deny {esc === "deny" && <kbd>Esc</kbd>}
            </button>
          )}
          {denyMore.length > 0 && (
            <AskMenu
              label="Deny…"
              testId="permission-deny-more"
              tone="deny"
              arming={arming}
              disabled={disabled}
              items={denyMore.map((a) => ({ action: a, label: `${a.label}${scope(a)}`, key: keyOf(a) }))}
              onChoose={choose}
            />
          )}
        </div>
      )}

      {send.state === "sending" && <p className="mia-ask-status">Sending…</p>}
      {send.state === "sent" && <p className="mia-ask-status">Sent, waiting for the agent…</p>}
      {send.state === "error" && (
        <p className="mia-ask-error" role="alert">
          Could not send the answer: {send.message}
        </p>
      )}

      <details className="mia-ask-details">
        <summary>Details</summary>
        <dl>
          <dt>Rule</dt>
          <dd data-testid="permission-rule">
            {rule ? (
              <>
                <code>{rule.rule}</code>
                {rule.source && <span className="mia-ask-muted"> · {rule.source}</span>}
              </>
            ) : (
              "no rule matched: asked by default"
            )}
          </dd>
          <dt>Agent</dt>
          <dd>{request.agent}</dd>
          <dt>Arguments</dt>
          <dd>
            <pre className="mia-ask-json">{prettyInput(request.input)}</pre>
          </dd>
        </dl>
      </details>
    </div>
  );
}

interface AskMenuItem {
  action: ActionSpec;
  label: string;
  key: string;
}

/** "Allow…" / "Deny…": the wider answers, each with its number key. */
function AskMenu({
  label,
  testId,
  tone = "allow",
  arming,
  disabled,
  items,
  onChoose,
}: {
  label: string;
  testId: string;
  tone?: "allow" | "deny";
  arming: string | undefined;
  disabled: boolean;
  items: AskMenuItem[];
  onChoose: (a: ActionSpec) => void;
}) {
  return (
    <MenuTrigger>
      <Button
        className={`mia-ask-btn mia-ask-btn-${tone}`}
        data-testid={testId}
        data-arming={arming}
        isDisabled={disabled}
        aria-label={label}
      >
        {label} <ChevronDown size={12} aria-hidden />
      </Button>
      <Popover placement="bottom start" offset={2} className="menu-popover">
        <Menu
          className="menu"
          aria-label={label}
          onAction={(key) => {
            const item = items.find((i) => i.action.kind === key);
            if (item) onChoose(item.action);
          }}
        >
          {items.map((i) => (
            <MenuItem
              key={i.action.kind}
              id={i.action.kind}
              textValue={i.label}
              className="menu-item mia-ask-menu-item"
              data-testid={i.action.testId}
            >
              <Text slot="label">{i.label}</Text>
              <Keyboard className="mia-ask-key">{i.key}</Keyboard>
            </MenuItem>
          ))}
        </Menu>
      </Popover>
    </MenuTrigger>
  );
}
