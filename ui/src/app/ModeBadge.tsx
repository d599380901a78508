import { useEffect, useRef, useState } from "react";
import type { AgentInfo } from "../protocol/generated";

export function modeLabel(agent: string): string {
  if (agent === "plan") return "[PLAN 🔍]";
  if (agent === "build") return "[BUILD 🔨]";
  return `[${agent.toUpperCase()}]`;
}

export function ModeBadge({ agent, queued, onClick }: { agent: string; queued: string | null; onClick: () => void }) {
  const cls = agent === "plan" ? "mode-plan" : agent === "build" ? "mode-build" : "mode-other";
  return (
    <span className="mode">
      <button
        type="button"
        className={`mode-badge ${cls}`}
        data-testid="mode-badge"
        data-agent={agent}
        title="Switch agent (Tab)"
        onClick={onClick}
      >
        {modeLabel(agent)}
      </button>
      {queued && queued !== agent && (
        <span className="mode-queued" data-testid="mode-queued" title="The switch waits for the running turn to end">
          → {queued.toUpperCase()} queued
        </span>
      )}
    </span>
  );
}

/** The primary agents to choose from (mode primary or all). */
export function primaryAgents(agents: AgentInfo[]): AgentInfo[] {
  return agents.filter((a) => a.mode === "primary" || a.mode === "all");
}

/** The agent Tab switches to when there are at most two: plan ↔ build. */
export function toggleTarget(current: string, agents: AgentInfo[]): string {
  const names = primaryAgents(agents).map((a) => a.name);
  if (names.length === 2) return names.find((n) => n !== current) ?? names[0]!;
  return current === "plan" ? "build" : "plan";
}

export function AgentPicker({
  agents,
  current,
  onPick,
  onClose,
}: {
  agents: AgentInfo[];
  current: string;
  onPick: (name: string) => void;
  onClose: () => void;
}) {
  const list = primaryAgents(agents);
  const [active, setActive] = useState(() =>
    Math.max(0, (list.findIndex((a) => a.name === current) + 1) % Math.max(1, list.length)),
  );
  const ref = useRef<HTMLUListElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <ul
      ref={ref}
      className="popup agent-picker"
      role="listbox"
      tabIndex={0}
      aria-label="Choose the agent"
      aria-activedescendant={`agent-opt-${active}`}
      data-testid="agent-picker"
      onBlur={onClose}
      onKeyDown={(e) => {
        if (e.key === "ArrowDown" || (e.key === "Tab" && !e.shiftKey)) {
          e.preventDefault();
          setActive((a) => (a + 1) % list.length);
        } else if (e.key === "ArrowUp" || (e.key === "Tab" && e.shiftKey)) {
          e.preventDefault();
          setActive((a) => (a - 1 + list.length) % list.length);
        } else if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          const a = list[active];
          if (a) onPick(a.name);
        } else if (e.key === "Escape") {
          e.preventDefault();
          onClose();
        }
      }}
    >
      {list.map((a, i) => (
        <li
          key={a.name}
          id={`agent-opt-${i}`}
          role="option"
          aria-selected={i === active}
          className={i === active ? "active" : ""}
          data-testid="agent-option"
          onMouseDown={(e) => {
            e.preventDefault();
            onPick(a.name);
          }}
        >
          <span className="mono">{modeLabel(a.name)}</span> <span className="muted">{a.description}</span>
          {a.name === current && <span className="muted small"> (current)</span>}
        </li>
      ))}
    </ul>
  );
}
