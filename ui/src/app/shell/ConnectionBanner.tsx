/**
 * The window's stream to the runtime when it is not open: reconnecting (with Reload), or lost
 * after LOST_AFTER_MS of failed retries (still retrying; Retry now, Reload).
 */
export function ConnectionBanner({ connection, onRetry }: { connection: "open" | "reconnecting" | "lost"; onRetry: () => void }) {
  return (
    <>
      {connection === "reconnecting" && (
        <div className="connection-banner" data-testid="connection-banner" data-state="reconnecting" role="status" aria-live="polite">
          Lost the connection to Mia Code — reconnecting… (what you see may be out of date until it is back)
          <button type="button" className="btn small" data-testid="connection-reload" onClick={() => window.location.reload()}>
            Reload
          </button>
        </div>
      )}
      {connection === "lost" && (
        <div className="connection-banner connection-lost" data-testid="connection-banner" data-state="lost" role="alert">
          The connection to Mia Code is lost. It keeps retrying every few seconds; until it is back, what you see may be out
          of date and what you send may fail.
          <button type="button" className="btn small" data-testid="connection-retry" onClick={onRetry}>
            Retry now
          </button>
          <button type="button" className="btn small" data-testid="connection-reload" onClick={() => window.location.reload()}>
            Reload
          </button>
        </div>
      )}
    </>
  );
}
