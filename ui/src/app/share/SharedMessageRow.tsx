import type { Redaction, SharedMessage, SharedPart } from "../../protocol/generated";
import { formatBytes } from "../../lib/format";
import { argsText, redactionsAt } from "../../lib/share";
import { Marked } from "./Marked";

/** A message of the payload as it would be shared, with its checkbox (left out: its row stays to take it back in). */
export function MessageRow({
  n,
  message,
  excluded,
  redactions,
  excludedResults,
  onInclude,
  onIncludeResult,
}: {
  n: number;
  message: SharedMessage;
  excluded: boolean;
  redactions: Redaction[];
  excludedResults: string[];
  onInclude: (include: boolean) => void;
  onIncludeResult: (callId: string, include: boolean) => void;
}) {
  const meta = message.metadata;
  return (
    <li
      className={`share-msg share-${message.role === "user" ? "user" : "assistant"}${excluded ? " excluded" : ""}`}
      data-testid="share-message"
      data-message-id={message.id}
      data-excluded={excluded || undefined}
    >
      <div className="share-msg-head">
        <label className="check">
          <input
            type="checkbox"
            checked={!excluded}
            onChange={(e) => onInclude(e.target.checked)}
            data-testid="share-include-message"
          />
          Include{" "}
          <span className="sr-only">
            message {n} ({message.role})
          </span>
        </label>
        <span className="agent-tag">{message.role}</span>
        {!excluded && meta?.model && <span className="muted small mono">{meta.model}</span>}
        {excluded && <span className="muted small">left out of the share</span>}
      </div>
      {!excluded &&
        message.parts.map((part, i) => (
          <PartView
            key={i}
            part={part}
            redactions={redactionsAt(redactions, { in: "message", message_id: message.id, part: i })}
            excludedResults={excludedResults}
            onIncludeResult={onIncludeResult}
          />
        ))}
    </li>
  );
}

function PartView({
  part,
  redactions,
  excludedResults,
  onIncludeResult,
}: {
  part: SharedPart;
  redactions: Redaction[];
  excludedResults: string[];
  onIncludeResult: (callId: string, include: boolean) => void;
}) {
  switch (part.type) {
    case "text":
      return (
        <div className="share-text" data-testid="share-part-text">
          <Marked text={part.content} redactions={redactions} />
        </div>
      );
    case "reasoning":
      return (
        <div className="share-text share-reasoning" data-testid="share-part-reasoning">
          <span className="share-part-label">Reasoning</span>
          <Marked text={part.content} redactions={redactions} />
        </div>
      );
    case "summary":
      return (
        <div className="share-text share-summary-part" data-testid="share-part-summary">
          <span className="share-part-label">Summary of earlier messages</span>
          <Marked text={part.content} redactions={redactions} />
        </div>
      );
    case "error":
      return (
        <div className="share-text share-part-error" data-testid="share-part-error">
          <Marked text={part.message} redactions={redactions} />
        </div>
      );
    case "tool_call":
      return (
        <div className="share-tool" data-testid="share-tool-call">
          <span className="tool-name">{part.name}</span>
          <pre className="share-code">
            <Marked text={argsText(part.args)} redactions={redactions} />
          </pre>
        </div>
      );
    case "tool_result": {
      const leftOut = excludedResults.includes(part.call_id);
      return (
        <div className="share-result" data-testid="share-tool-result" data-call-id={part.call_id}>
          {part.omitted && !leftOut ? (
            <span className="muted small">
              The result of <span className="mono">{part.name}</span> is left out (share.includeToolResults).
            </span>
          ) : (
            <>
              <label className="check small">
                <input
                  type="checkbox"
                  checked={!leftOut}
                  onChange={(e) => onIncludeResult(part.call_id, e.target.checked)}
                  data-testid="share-include-result"
                />
                Include the result{" "}
                <span className="sr-only">
                  of {part.name} ({part.call_id})
                </span>
              </label>
              {part.omitted ? (
                <span className="muted small"> (left out)</span>
              ) : (
                <details>
                  <summary>
                    Result of <span className="mono">{part.name}</span>
                    {part.is_error ? " (error)" : ""} · {formatBytes(new TextEncoder().encode(part.output).length)}
                    {redactions.length > 0 ? ` · ${redactions.length} redacted` : ""}
                  </summary>
                  <pre className="share-code">
                    <Marked text={part.output} redactions={redactions} />
                  </pre>
                </details>
              )}
            </>
          )}
        </div>
      );
    }
  }
}
