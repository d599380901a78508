import { useEffect, useRef } from "react";
import { ChevronDown, ChevronUp, X } from "lucide-react";

/** The search bar over a session's transcript: Enter next, Shift+Enter previous, Esc closes. */
export function TranscriptSearch({
  query,
  at,
  count,
  onQuery,
  onMove,
  onClose,
}: {
  query: string;
  at: number;
  count: number;
  onQuery: (q: string) => void;
  onMove: (delta: 1 | -1) => void;
  onClose: () => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const status = !query.trim() ? "" : count === 0 ? "No matches" : `${at + 1} of ${count}`;
  return (
    <div className="transcript-search" role="search" data-testid="transcript-search">
      <input
        ref={input}
        className="input"
        type="search"
        value={query}
        placeholder="Search this session"
        aria-label="Search this session"
        data-testid="transcript-search-input"
        onChange={(e) => onQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            onMove(e.shiftKey ? -1 : 1);
          } else if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onClose();
          }
        }}
      />
      <span className="muted small" data-testid="transcript-search-count" aria-live="polite">
        {status}
      </span>
      <button type="button" className="btn small" disabled={count === 0} onClick={() => onMove(-1)} aria-label="Previous match">
        <ChevronUp size={14} aria-hidden />
      </button>
      <button type="button" className="btn small" disabled={count === 0} onClick={() => onMove(1)} aria-label="Next match">
        <ChevronDown size={14} aria-hidden />
      </button>
      <button type="button" className="btn small" onClick={onClose} aria-label="Close search">
        <X size={14} aria-hidden />
      </button>
    </div>
  );
}
