import { useEffect, useMemo, useRef, useState } from "react";
import type { SharedMessage, SharePreview, ShareRecord, ShareRequest } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { formatBytes } from "../lib/format";
import { redactionsAt } from "../lib/share";
import { useServices, useToast } from "./context";
import { Modal } from "./Modal";
import { Marked, Redactions } from "./share/Marked";
import { Diffs } from "./share/SharedDiffs";
import { MessageRow } from "./share/SharedMessageRow";
import { ShareLink } from "./share/ShareLink";

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
