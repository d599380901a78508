import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app/App";
import { TokenScreen } from "./app/TokenScreen";
import { browserTransport, saveToken, startTransport, type Platform, type Transport } from "./transport";
import "./styles/app.css";

type Boot = { kind: "loading" } | { kind: "needs-token" } | { kind: "ready"; transport: Transport; platform: Platform } | { kind: "failed"; message: string };

function Root() {
  const [boot, setBoot] = useState<Boot>({ kind: "loading" });
  useEffect(() => {
    startTransport().then(setBoot, (e: unknown) => setBoot({ kind: "failed", message: e instanceof Error ? e.message : String(e) }));
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
            setBoot({ kind: "ready", ...browserTransport(token) });
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
