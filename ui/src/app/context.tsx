import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";
import type { Api } from "../lib/api";
import type { Platform, Transport } from "../transport/types";

export interface AppServices {
  transport: Transport;
  platform: Platform;
  api: Api;
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
  kind: "error" | "info";
}

interface ToastApi {
  toast: (text: string, kind?: Toast["kind"]) => void;
}

const ToastContext = createContext<ToastApi>({ toast: () => undefined });

let nextToast = 1;

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const dismiss = useCallback((id: number) => setToasts((ts) => ts.filter((t) => t.id !== id)), []);
  const toast = useCallback(
    (text: string, kind: Toast["kind"] = "error") => {
      const id = nextToast++;
      setToasts((ts) => [...ts.slice(-3), { id, text, kind }]);
      setTimeout(() => dismiss(id), kind === "error" ? 8000 : 4000);
    },
    [dismiss],
  );
  const value = useMemo(() => ({ toast }), [toast]);
  return (
    <ToastContext.Provider value={value}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.kind}`} data-testid="toast">
            <span>{t.text}</span>
            <button type="button" className="icon-btn" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
              ×
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
