import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type {
  Redaction,
  SharedDiff,
  SharedMessage,
  SharedPart,
  SharePreview,
  ShareRecord,
  ShareRequest,
} from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { formatBytes, formatDate, relativeTime } from "../lib/format";
import { argsText, isWebUrl, markRedactions, placeLabel, redactionsAt, redactionSummary, HOME_PATH } from "../lib/share";
import { useServices, useToast } from "./context";
import { Modal } from "./Modal";

/** How long the exclusions settle before the preview is asked for again. */
export const PREVIEW_DEBOUNCE_MS = 250;

export const NO_SHARE_SERVER =
  "No share server is configured: set share.endpoint in your global config (~/.config/mia-code/config.json or ~/.mia-code.json)";

/**
 * `/share` and the header's Share button: the payload exactly as it would be
 * uploaded (redacted), every replacement marked and listed, messages and tool
 * results to leave out, then "Share publicly" (or "Update share") and the link.
 */
export function ShareDialog({ sessionId, onClose }: { sessionId: string; onClose: () => void }) {
  const { api } = useServices();
  const toast = useToast();
  const [excludeMessages, setExcludeMessages] = useState<string[]>([]);
  const [excludeResults, setExcludeResults] = useState<string[]>([]);
  const request = useMemo<ShareRequest>(
    () => ({ exclude_messages: excludeMessages, exclude_tool_results: excludeResults }),
    [excludeMessages, excludeResults],
  );
  const key = JSON.stringify(request);
  /** The last preview that came back, and the exclusions it was made with. */
  const [loaded, setLoaded] = useState<{ key: string; preview: SharePreview } | null>(null);
  /** Every message a preview showed, in order: a left-out one keeps its row (to take it back in). */
  const [seen, setSeen] = useState<ReadonlyMap<string, SharedMessage>>(() => new Map());
  const [error, setError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  /** The share as this dialog left it (shared, updated, revoked); undefined: the preview's `existing`. */
  const [record, setRecord] = useState<ShareRecord | null | undefined>(undefined);
  const [justShared, setJustShared] = useState<"shared" | "updated" | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef(true);

  useEffect(() => {
    let alive = true;
    // The first preview at once; after a change of the exclusions, once they settle.
    const delay = first.current ? 0 : PREVIEW_DEBOUNCE_MS;
    first.current = false;
    const timer = setTimeout(() => {
      api.sharePreview(sessionId, request).then(
        (preview) => {
          if (!alive) return;
          setLoaded({ key, preview });
          setSeen((prev) => {
            const next = new Map(prev);
            for (const m of preview.payload.messages ?? []) next.set(m.id, m);
            return next;
          });
          setError(null);
        },
        (e: unknown) => {
          if (alive) setError(errorMessage(e));
        },
      );
    }, delay);
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [api, sessionId, request, key, reload]);

  const preview = loaded?.preview ?? null;
  /** What is shown is not what the exclusions ask for yet. */
  const stale = loaded?.key !== key;
  const current = record !== undefined ? record : (preview?.existing ?? null);
  const disabled = preview?.mode === "disabled";
  const noServer = !!preview && !preview.server;

  const toggleMessage = (id: string, include: boolean) =>
    setExcludeMessages((xs) => (include ? xs.filter((x) => x !== id) : xs.includes(id) ? xs : [...xs, id]));
  const toggleResult = (callId: string, include: boolean) =>
    setExcludeResults((xs) => (include ? xs.filter((x) => x !== callId) : xs.includes(callId) ? xs : [...xs, callId]));

  const submit = async () => {
    if (!preview || stale || busy) return;
    const updating = !!current;
    setBusy(true);
    setError(null);
    try {
      const r = await api.share(sessionId, request);
      setRecord(r);
      setJustShared(updating ? "updated" : "shared");
    } catch (e) {
      // The exclusions stay as they are: the person tries again or changes them.
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.unshare(sessionId);
      setRecord(null);
      setJustShared(null);
      toast("Stopped sharing: the link no longer works", "info");
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  // The rows: the payload's messages, and those left out where they were.
  const payloadMessages = preview?.payload.messages;
  const messages = useMemo(() => payloadMessages ?? [], [payloadMessages]);
  const rows = useMemo(() => {
    const inPayload = new Map(messages.map((m) => [m.id, m]));
    const out: { message: SharedMessage; excluded: boolean }[] = [];
    for (const [id, m] of seen) {
      const shown = inPayload.get(id);
      // The choice shows at once; a message taken back in shows as last seen until the preview has it.
      if (excludeMessages.includes(id)) out.push({ message: shown ?? m, excluded: true });
      else if (shown || stale) out.push({ message: shown ?? m, excluded: false });
    }
    return out;
  }, [messages, seen, excludeMessages, stale]);

  return (
    <Modal title="Share session" onClose={onClose} testId="share-dialog" className="modal-share">
      <div className="share">
        {error && (
          <div className="error-banner share-error-banner" role="alert" data-testid="share-error">
            <span>{error}</span>
            {!preview || stale ? (
              <button type="button" className="btn small" onClick={() => setReload((n) => n + 1)}>
                Try again
              </button>
            ) : null}
          </div>
        )}
        {!preview && !error && <p className="muted">Preparing the preview…</p>}
        {current && (
          <ShareLink
            record={current}
            justShared={justShared}
            busy={busy}
            onRevoke={() => void revoke()}
          />
        )}
        {preview && disabled && (
          <p className="warning" data-testid="share-disabled">
            Sharing is disabled: <span className="mono">share.mode</span> is <span className="mono">"disabled"</span> in
            your config. Set it to <span className="mono">"ask"</span> to share sessions.
          </p>
        )}
        {preview && !disabled && (
          <>
            {noServer ? (
              <p className="warning" data-testid="share-no-server">
                {NO_SHARE_SERVER}
              </p>
            ) : (
              <p className="share-target" data-testid="share-target">
                Uploads to <span className="mono">{preview.server}</span> · {formatBytes(preview.bytes)}
                {stale && <span className="muted"> · updating the preview…</span>}
              </p>
            )}
            <p className="muted small">
              Below is exactly what would be uploaded, after redaction. Anyone with the link can read it.
            </p>
            <Redactions redactions={preview.redactions} messages={messages} />
            <section aria-label="Shared session" className="share-payload" data-testid="share-payload">
              <h3>
                <Marked text={preview.payload.session.title} redactions={redactionsAt(preview.redactions, { in: "title" })} />
              </h3>
              <p className="muted small">
                Project <span className="mono">{preview.payload.session.project}</span> · {messages.length} message
                {messages.length === 1 ? "" : "s"}
                {preview.payload.session.model ? (
                  <>
                    {" "}
                    · <span className="mono">{preview.payload.session.model}</span>
                  </>
                ) : null}
              </p>
              {rows.length === 0 && <p className="muted">No messages to share.</p>}
              <ol className="share-messages">
                {rows.map(({ message, excluded }, i) => (
                  <MessageRow
                    key={message.id}
                    n={i + 1}
                    message={message}
                    excluded={excluded}
                    redactions={preview.redactions}
                    excludedResults={excludeResults}
                    onInclude={(v) => toggleMessage(message.id, v)}
                    onIncludeResult={toggleResult}
                  />
                ))}
              </ol>
              {(preview.payload.diffs?.length ?? 0) > 0 && (
                <Diffs diffs={preview.payload.diffs ?? []} redactions={preview.redactions} />
              )}
            </section>
          </>
        )}
        <div className="row-end share-actions">
          <button type="button" className="btn" onClick={onClose}>
            Close
          </button>
          {preview && !disabled && !noServer && (
            <button
              type="button"
              className="btn primary"
              data-testid="share-submit"
              disabled={stale || busy}
              onClick={() => void submit()}
            >
              {busy ? "Uploading…" : current ? "Update share" : "Share publicly"}
            </button>
          )}
        </div>
      </div>
    </Modal>
  );
}

/** The share's link: copy it, open it, stop sharing (asked first). */
function ShareLink({
  record,
  justShared,
  busy,
  onRevoke,
}: {
  record: ShareRecord;
  justShared: "shared" | "updated" | null;
  busy: boolean;
  onRevoke: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  return (
    <section className="share-link" aria-label="Share link" data-testid="share-current">
      <p>
        {justShared === "shared"
          ? "Shared publicly. Anyone with this link can read the session:"
          : justShared === "updated"
            ? "Share updated. Anyone with this link can read the session:"
            : "This session is shared. Anyone with this link can read it:"}
      </p>
      <div className="row share-link-row">
        <input
          className="input mono share-url"
          readOnly
          value={record.url}
          aria-label="Share link"
          data-testid="share-url"
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyLink url={record.url} />
        <OpenLink url={record.url} className="btn small" />
        <button
          type="button"
          className="btn small danger"
          data-testid="share-revoke"
          disabled={busy}
          onClick={() => setConfirming(true)}
        >
          Stop sharing
        </button>
      </div>
      <p className="muted small" data-testid="share-expiry">
        {record.expires_at ? `Expires ${formatDate(record.expires_at)}` : "Does not expire"} · last updated{" "}
        {relativeTime(record.updated_at)}
      </p>
      {confirming && (
        <div className="warning share-confirm" role="group" aria-label="Stop sharing?">
          <span>Stop sharing? The link stops working for everyone who has it.</span>
          <button type="button" className="btn small" onClick={() => setConfirming(false)}>
            Cancel
          </button>
          <button
            type="button"
            className="btn small danger"
            data-testid="share-revoke-confirm"
            onClick={() => {
              setConfirming(false);
              onRevoke();
            }}
          >
            Yes, stop sharing
          </button>
        </div>
      )}
    </section>
  );
}

export function CopyLink({ url }: { url: string }) {
  const toast = useToast();
  const copy = () => {
    if (!navigator.clipboard) {
      toast("The clipboard is not available here: select the link and copy it");
      return;
    }
    navigator.clipboard.writeText(url).then(
      () => toast("Link copied", "info"),
      (e: unknown) => toast(errorMessage(e)),
    );
  };
  return (
    <button type="button" className="btn small" data-testid="share-copy" onClick={copy}>
      Copy link
    </button>
  );
}

/** A link to the share in the system browser (never the app's own webview). */
export function OpenLink({ url, className, children }: { url: string; className?: string; children?: ReactNode }) {
  const { platform } = useServices();
  if (!isWebUrl(url)) return null;
  return (
    <a
      className={className}
      href={url}
      target="_blank"
      rel="noopener noreferrer"
      data-testid="share-open"
      onClick={(e) => {
        e.preventDefault();
        platform.openExternal(url);
      }}
    >
      {children ?? "Open"}
    </a>
  );
}

function Redactions({ redactions, messages }: { redactions: Redaction[]; messages: SharedMessage[] }) {
  return (
    <section className="share-redaction-box" aria-label="Redactions">
      <p className="share-summary" data-testid="share-redaction-count">
        {redactionSummary(redactions)}
      </p>
      {redactions.length > 0 ? (
        <ul className="share-redactions" data-testid="share-redactions">
          {redactions.map((r, i) => (
            <li key={i} data-testid="share-redaction" data-kind={r.kind}>
              <span className={`redaction-kind${r.kind === HOME_PATH ? " home" : ""}`}>{r.kind}</span> in{" "}
              {placeLabel(r.place, messages)}
              {r.hint && (
                <>
                  {" "}
                  <span className="muted mono">{r.hint}</span>
                </>
              )}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">Nothing was found to redact.</p>
      )}
    </section>
  );
}

/** Plain text (never Markdown), each replacement of `redactions` marked. */
function Marked({ text, redactions }: { text: string; redactions: Redaction[] }) {
  const segments = useMemo(() => markRedactions(text, redactions), [text, redactions]);
  return (
    <>
      {segments.map((s, i) =>
        s.mark ? (
          <mark
            key={i}
            className={`redaction${s.mark.kind === HOME_PATH ? " home" : ""}`}
            title={s.mark.hint ? `${s.mark.kind}: ${s.mark.hint}` : s.mark.kind}
            data-kind={s.mark.kind}
          >
            {s.text}
          </mark>
        ) : (
          s.text
        ),
      )}
    </>
  );
}

function MessageRow({
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

function Diffs({ diffs, redactions }: { diffs: SharedDiff[]; redactions: Redaction[] }) {
  return (
    <section aria-label="Changed files" className="share-diffs">
      <h3>Changed files ({diffs.length})</h3>
      <ul className="share-diff-list">
        {diffs.map((d) => {
          const here = redactionsAt(redactions, { in: "diff", file: d.file });
          return (
            <li key={d.file} data-testid="share-diff">
              <details>
                <summary>
                  <span className="mono">
                    <Marked text={d.file} redactions={here} />
                  </span>{" "}
                  <span className="muted">{d.status}</span> <span className="add">+{d.additions}</span>{" "}
                  <span className="del">−{d.deletions}</span>
                  {here.length > 0 ? ` · ${here.length} redacted` : ""}
                </summary>
                {d.binary ? (
                  <p className="muted small">Binary file</p>
                ) : (
                  <pre className="share-code">
                    <Marked text={d.patch} redactions={here} />
                  </pre>
                )}
              </details>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/**
 * `/unshare`: asks, then revokes the session's share (`record`), the way the
 * sidebar asks before deleting a session.
 */
export function UnshareConfirm({
  sessionId,
  record,
  onClose,
}: {
  sessionId: string;
  record: ShareRecord;
  onClose: () => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const revoke = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.unshare(sessionId);
      toast(`Stopped sharing “${record.session_title}”: the link no longer works`, "info");
      onClose();
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <Modal title="Stop sharing?" onClose={onClose} testId="unshare-confirm">
      <p>
        Stop sharing <strong>{record.session_title}</strong>? The link <span className="mono share-url-text">{record.url}</span>{" "}
        stops working for everyone who has it.
      </p>
      {error && (
        <div className="error-banner share-error-banner" role="alert">
          <span>{error}</span>
        </div>
      )}
      <div className="row-end">
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Cancel
        </button>
        <button
          type="button"
          className="btn danger"
          data-testid="unshare-confirm-button"
          disabled={busy}
          onClick={() => void revoke()}
        >
          Stop sharing
        </button>
      </div>
    </Modal>
  );
}
