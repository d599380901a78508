import { vi } from "vitest";
import { useEffect, useMemo, type ReactNode } from "react";
import { SessionCache } from "../state/liveSessions";
import { invalidateOnEvents } from "../state/queries";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { Event } from "../protocol/generated";
import { makeApi } from "../lib/api";
import type { HttpMethod, Platform, StreamState, Transport } from "../transport/types";
import { ServicesProvider, ToastProvider } from "./context";

export type Handler = (method: HttpMethod, path: string, body: unknown) => unknown;

/** A transport answering from a handler, recording requests; `emit` pushes Events. */
export function fakeTransport(handler: Handler) {
  const requests: { method: HttpMethod; path: string; body: unknown }[] = [];
  const listeners: ((e: Event) => void)[] = [];
  /** The session ids subscribed to, in order (null: all). Every listener hears every event. */
  const subscribed: (string | null)[] = [];
  const stateListeners: ((s: StreamState) => void)[] = [];
  const reconnect = vi.fn();
  const transport: Transport = {
    reconnect,
    request: vi.fn(async <T,>(method: HttpMethod, path: string, body?: unknown): Promise<T> => {
      requests.push({ method, path, body });
      return (await handler(method, path, body)) as T;
    }) as Transport["request"],
    subscribe: (id: string | null, onEvent: (e: Event) => void, onState?: (s: StreamState) => void) => {
      listeners.push(onEvent);
      subscribed.push(id);
      if (onState) stateListeners.push(onState);
      queueMicrotask(() => onState?.("open"));
      return () => {
        const i = listeners.indexOf(onEvent);
        if (i >= 0) listeners.splice(i, 1);
      };
    },
  };
  const emit = (e: Event) => {
    for (const l of listeners) l(e);
  };
  /** Every subscription hears the stream state (`reconnecting` after a lost connection, ...). */
  const streamState = (s: StreamState) => {
    for (const l of stateListeners) l(s);
  };
  return { transport, requests, emit, subscribed, streamState, reconnect };
}

export const fakePlatform = {
  kind: "browser",
  pickFolder: () => Promise.resolve(null),
  notify: vi.fn<Platform["notify"]>(),
  openExternal: vi.fn<Platform["openExternal"]>(),
} satisfies Platform;

export function Providers({
  transport,
  children,
  platform = fakePlatform,
}: {
  transport: Transport;
  children: ReactNode;
  platform?: Platform;
}) {
  const services = useMemo(() => {
    const api = makeApi(transport);
    return { transport, platform, api, sessions: new SessionCache(api, transport) };
  }, [transport, platform]);
  // Each rendering its own cache, no retries (a refused request fails the test at once).
  const queryClient = useMemo(
    () => new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } }),
    [],
  );
  // As in the app: Events make the cached server state stale (state/queries.ts).
  useEffect(() => invalidateOnEvents(queryClient, transport), [queryClient, transport]);
  return (
    <QueryClientProvider client={queryClient}>
      <ServicesProvider value={services}>
        <ToastProvider>{children}</ToastProvider>
      </ServicesProvider>
    </QueryClientProvider>
  );
}
