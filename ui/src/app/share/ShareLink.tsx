import { useState, type ReactNode } from "react";
import type { ShareRecord } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { formatDate, relativeTime } from "../../lib/format";
import { isWebUrl } from "../../lib/share";
import { useServices, useToast } from "../context";

/** The share's link: copy it, open it, stop sharing (asked first). */
export function ShareLink({
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
