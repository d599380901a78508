import { useEffect, useState } from "react";

/** Shown in a browser opened without `#token=`: the token printed by `mia-code serve`. */
export function TokenScreen({ onToken }: { onToken: (token: string) => void }) {
  const [token, setToken] = useState("");
  const [demo, setDemo] = useState(false);
  useEffect(() => {
    // /api/health needs no token: it says whether this is the scripted demo.
    fetch("/api/health")
      .then((r) => (r.ok ? (r.json() as Promise<{ demo?: boolean }>) : null))
      .then((h) => setDemo(!!h?.demo))
      .catch(() => undefined);
  }, []);
  return (
    <main className="token-screen">
      {demo && (
        <div className="demo-banner demo-fixed" data-testid="demo-banner" role="note">
          Scripted demo — answers come from a recorded script, not a real model
        </div>
      )}
      <form
        className="card stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) onToken(token.trim());
        }}
      >
        <h1>Mia Code</h1>
        <label className="stack">
          <span>
            Paste the token printed by <code>mia-code serve</code>
          </span>
          <input
            className="input mono"
            type="password"
            autoComplete="off"
            data-testid="token-input"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            autoFocus
          />
        </label>
        <button type="submit" className="btn primary" disabled={!token.trim()}>
          Connect
        </button>
        <p className="muted small">Or open the URL it printed (it carries the token after #token=).</p>
      </form>
    </main>
  );
}
