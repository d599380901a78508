import { useEffect, useState } from "react";
import { Loader2 } from "lucide-react";

/** "42s", "3m 05s", "1h 02m": how long a turn has run. */
export function formatElapsed(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/**
 * A running turn: a spinner, what runs, and the time since it started (`since`, when known: the
 * message that started it; else from when the indicator appeared). Ticks once a second.
 */
export function RunningIndicator({ label, since }: { label: string; since?: number }) {
  const [mounted] = useState(() => Date.now());
  const [now, setNow] = useState(mounted);
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, []);
  // A start in the future (another machine's clock) counts from when it appeared.
  const start = since !== undefined && since <= mounted ? since : mounted;
  const elapsed = formatElapsed((now - start) / 1000);
  return (
    <span className="running-indicator small" data-testid="running-indicator" title={`${label} for ${elapsed}`}>
      <Loader2 size={13} className="spin" aria-hidden />
      <span>{label}</span>
      <span className="running-elapsed" data-testid="running-elapsed">
        {elapsed}
      </span>
    </span>
  );
}
