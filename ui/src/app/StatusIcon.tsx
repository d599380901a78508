import { Check, Loader2, Square, X } from "lucide-react";

/** A tool call's state as an icon: a spinner while it runs, a tick, a cross, a stop square. */
export function StatusIcon({ status }: { status: "running" | "ok" | "error" | "stopped" }) {
  if (status === "running") return <Loader2 size={13} className="spin" aria-hidden />;
  if (status === "ok") return <Check size={13} aria-hidden />;
  if (status === "error") return <X size={13} aria-hidden />;
  return <Square size={10} aria-hidden />;
}
