import { browserPlatform, HttpTransport, takeToken } from "./http";
import { createTauriTransport, desktopPlatform } from "./tauri";
import type { Platform, Transport } from "./types";
import { Multiplexer } from "./multiplex";

export * from "./types";
export { HttpTransport, saveToken, forgetToken } from "./http";
export { TauriTransport } from "./tauri";
export { Multiplexer } from "./multiplex";

export function isDesktop(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}

export type Startup = { kind: "ready"; transport: Transport; platform: Platform } | { kind: "needs-token" };

/** Chooses the transport once, at startup. */
export async function startTransport(): Promise<Startup> {
  if (isDesktop()) {
    return { kind: "ready", transport: new Multiplexer(await createTauriTransport()), platform: desktopPlatform };
  }
  const token = takeToken();
  if (!token) return { kind: "needs-token" };
  return { kind: "ready", transport: new Multiplexer(new HttpTransport({ token })), platform: browserPlatform };
}

export function browserTransport(token: string): { transport: Transport; platform: Platform } {
  return { transport: new Multiplexer(new HttpTransport({ token })), platform: browserPlatform };
}
