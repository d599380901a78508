import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { Api } from "../lib/api";
import type { Platform, Transport } from "../transport/types";
import type { SessionCache } from "../state/liveSessions";
import { X } from "lucide-react";

export interface AppServices {
  transport: Transport;
  platform: Platform;
  api: Api;
  /** The window's sessions, kept live outside React (state/liveSessions.ts). */
  sessions: SessionCache;
}

const ServicesContext = createContext<AppServices | null>(null);

export function ServicesProvider({ value, children }: { value: AppServices; children: ReactNode }) {
  return <ServicesContext.Provider value={value}>{children}</ServicesContext.Provider>;
}

export function useServices(): AppServices {
  const s = useContext(ServicesContext);
  if (!s) throw new Error("useServices outside ServicesProvider");
  return s;
}

/** Platform only (markdown links need it); falls back to a no-op opener in isolated tests. */
export function usePlatform(): Platform | null {
  return useContext(ServicesContext)?.platform ?? null;
}

export interface Toast {
  id: number;
  text: string;
  /** `error`: red; `info`: the answer to something done; `notice`: the runtime telling (an event). */
  kind: "error" | "info" | "notice";
  /** How many times in a row it was said (shown from 2 on). */
  count: number;
  /** When it was last said (Date.now()). */
  at: number;
}

interface ToastApi {
  toast: (text: string, kind?: Toast["kind"]) => void;
  /** Takes every toast down (another screen opened: what they said was about the last one). */
  clear: () => void;
}

const ToastContext = createContext<ToastApi>({ toast: () => undefined, clear: () => undefined });

let nextToast = 1;

/** How long a toast stays (the same one said again starts it over). */
const TOAST_MS: Record<Toast["kind"], number> = { error: 8000, info: 4000, notice: 5000 };
/** A toast this young survives a change of screen (it announced it). */
const FRESH_MS = 800;

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const timers = useRef(new Map<number, ReturnType<typeof setTimeout>>());
  /** The last toast shown while it is still up: the same text again counts instead of stacking. */
  const last = useRef<{ id: number; text: string; kind: Toast["kind"] } | null>(null);
  const dismiss = useCallback((id: number) => {
    clearTimeout(timers.current.get(id));
    timers.current.delete(id);
    if (last.current?.id === id) last.current = null;
    setToasts((ts) => ts.filter((t) => t.id !== id));
  }, []);
  const toast = useCallback(
    (text: string, kind: Toast["kind"] = "error") => {
      const again = last.current && last.current.text === text && last.current.kind === kind ? last.current.id : null;
      const id = again ?? nextToast++;
      if (again !== null) {
        clearTimeout(timers.current.get(id));
        setToasts((ts) => ts.map((t) => (t.id === id ? { ...t, count: t.count + 1, at: Date.now() } : t)));
      } else {
        last.current = { id, text, kind };
        setToasts((ts) => [...ts.slice(-3), { id, text, kind, count: 1, at: Date.now() }]);
      }
      timers.current.set(id, setTimeout(() => dismiss(id), TOAST_MS[kind]));
    },
    [dismiss],
  );
  // What was said just now (the news of the change of screen itself: "Forked") stays.
  const clear = useCallback(() => {
    const before = Date.now() - FRESH_MS;
    setToasts((ts) => {
      const old = ts.filter((t) => t.at < before);
      for (const t of old) {
        clearTimeout(timers.current.get(t.id));
        timers.current.delete(t.id);
        if (last.current?.id === t.id) last.current = null;
      }
      return old.length ? ts.filter((t) => t.at >= before) : ts;
    });
  }, []);
  useEffect(() => {
    const pending = timers.current;
    return () => {
      for (const t of pending.values()) clearTimeout(t);
      pending.clear();
    };
  }, []);
  const value = useMemo(() => ({ toast, clear }), [toast, clear]);
  return (
    <ToastContext.Provider value={value}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.kind}`} data-testid="toast" data-kind={t.kind}>
            <span>{t.text}</span>
            {t.count > 1 && (
              <span className="toast-count" data-testid="toast-count" title={`Said ${t.count} times`}>
                ×{t.count}
              </span>
            )}
            <button type="button" className="icon-btn" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
              <X size={14} aria-hidden />
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToast(): ToastApi["toast"] {
  return useContext(ToastContext).toast;
}

/** Toasts do not outlive their screen: a new `screen` key takes them down. */
export function useClearToastsOn(screen: string): void {
  const { clear } = useContext(ToastContext);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    clear();
  }, [screen, clear]);
}
