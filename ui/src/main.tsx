import { installDiagnostics } from "./lib/diagnostics";
import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app/App";
import { installTheme } from "./app/theme";
import { TokenScreen } from "./app/TokenScreen";
import { ApiError, browserTransport, forgetToken, saveToken, startTransport, type Platform, type Transport } from "./transport";
import "./styles/app.css";

installDiagnostics();
// Before the first paint: the remembered theme (or the system's) is on <html> already.
installTheme();

type Boot =
  | { kind: "loading" }
  | { kind: "needs-token" }
  | { kind: "ready"; transport: Transport; platform: Platform }
  | { kind: "failed"; message: string };

/** A browser token the server refuses (401) sends the user back to the token screen. */
function guard(transport: Transport, platform: Platform, onUnauthorized: () => void): Transport {
  if (platform.kind !== "browser") return transport;
  return {
    subscribe: (id, onEvent, onState, opts) => transport.subscribe(id, onEvent, onState, opts),
    reconnect: () => transport.reconnect?.(),
    request: async <T,>(method: Parameters<Transport["request"]>[0], path: string, body?: unknown): Promise<T> => {
      try {
        return await transport.request<T>(method, path, body);
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) onUnauthorized();
        throw e;
      }
    },
  };
}

function Root() {
  const [boot, setBoot] = useState<Boot>({ kind: "loading" });
  useEffect(() => {
    const unauthorized = () => {
      forgetToken();
      setBoot({ kind: "needs-token" });
    };
    startTransport().then(
      (b) => setBoot(b.kind === "ready" ? { ...b, transport: guard(b.transport, b.platform, unauthorized) } : b),
      (e: unknown) => setBoot({ kind: "failed", message: e instanceof Error ? e.message : String(e) }),
    );
  }, []);
  switch (boot.kind) {
    case "loading":
      return null;
    case "failed":
      return <main className="token-screen">Cannot start: {boot.message}</main>;
    case "needs-token":
      return (
        <TokenScreen
          onToken={(token) => {
            saveToken(token);
            const { transport, platform } = browserTransport(token);
            const unauthorized = () => {
              forgetToken();
              setBoot({ kind: "needs-token" });
            };
            setBoot({ kind: "ready", transport: guard(transport, platform, unauthorized), platform });
          }}
        />
      );
    case "ready":
      return <App transport={boot.transport} platform={boot.platform} />;
  }
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
