import { useCallback, useEffect, useRef, useState } from "react";
import type { PermissionReplyKind, PermissionRequest } from "../../protocol/generated";
import type { ActionSpec } from "./actions";

export type SendState =
  | { state: "idle" }
  | { state: "sending" }
  /** Sent: waits for the runtime to resolve the ask (the request leaves the queue). */
  | { state: "sent" }
  | { state: "error"; message: string };

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  return "the reply could not be sent";
}

/**
 * Answering one permission ask, as the dialog and the ask at a tool card both do: the answers
 * arm `armDelayMs` after the ask appears (keys typed just before must not answer it), one reply
 * is in flight at a time (a ref, not only state: two key presses in the same frame must not send
 * twice), "deny with feedback" opens its text box first. `armedOnly`: nothing is sent before the
 * answers are armed (otherwise the caller decides which answers wait).
 */
export function useAskAnswer(
  request: PermissionRequest,
  onReply: (requestId: string, reply: PermissionReplyKind) => void | Promise<void>,
  armDelayMs: number,
  armedOnly: boolean,
) {
  const inFlight = useRef(false);
  const [send, setSend] = useState<SendState>({ state: "idle" });
  const [feedbackOpen, setFeedbackOpen] = useState(false);
  const [feedback, setFeedback] = useState("");
  const [armed, setArmed] = useState(armDelayMs <= 0);
  const armedRef = useRef(armDelayMs <= 0);
  useEffect(() => {
    if (armDelayMs <= 0) return;
    const t = setTimeout(() => {
      armedRef.current = true;
      setArmed(true);
    }, armDelayMs);
    return () => clearTimeout(t);
  }, [armDelayMs]);

  const blocked = useCallback(() => inFlight.current || (armedOnly && !armedRef.current), [armedOnly]);

  const reply = useCallback(
    (kind: PermissionReplyKind) => {
      if (blocked()) return;
      inFlight.current = true;
      setSend({ state: "sending" });
      let result: void | Promise<void>;
      try {
        result = onReply(request.id, kind);
      } catch (err) {
        inFlight.current = false;
        setSend({ state: "error", message: errorText(err) });
        return;
      }
      Promise.resolve(result).then(
        () => setSend({ state: "sent" }),
        (err: unknown) => {
          inFlight.current = false;
          setSend({ state: "error", message: errorText(err) });
        },
      );
    },
    [blocked, onReply, request.id],
  );

  const choose = useCallback(
    (action: ActionSpec) => {
      if (blocked()) return;
      if (action.kind === "reject_with_feedback") {
        setFeedbackOpen(true);
        return;
      }
      reply({ kind: action.kind });
    },
    [blocked, reply],
  );

  const submitFeedback = () => {
    const text = feedback.trim();
    if (text) reply({ kind: "reject_with_feedback", feedback: text });
  };

  const disabled = send.state === "sending" || send.state === "sent";
  return { armed, send, disabled, reply, choose, feedbackOpen, setFeedbackOpen, feedback, setFeedback, submitFeedback };
}
