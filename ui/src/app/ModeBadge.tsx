import { useEffect, useRef } from "react";
import { ListBox, ListBoxItem } from "react-aria-components";
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

/**
 * The agent picker (Tab with three or more primary agents): react-aria's ListBox (arrow keys,
 * Home/End, typeahead, Enter; focus moves to the options). Tab / Shift+Tab also step through
 * the agents, as Tab does outside it; Escape or leaving it closes it.
 */
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
  // The next agent after the current one has the focus at first (Tab then Enter switches to it).
  const next = list.length ? list[(list.findIndex((a) => a.name === current) + 1) % list.length]!.name : null;
  const ref = useRef<HTMLDivElement>(null);
  // Closing gives the focus back to where it was (the composer): typing goes on there.
  const opener = useRef(document.activeElement instanceof HTMLElement ? document.activeElement : null);
  useEffect(() => {
    const back = opener.current;
    return () => {
      if (back?.isConnected) back.focus();
    };
  }, []);
  const step = (by: number) => {
    const options = [...(ref.current?.querySelectorAll<HTMLElement>("[role=option]") ?? [])];
    if (!options.length) return;
    const at = options.findIndex((o) => o === document.activeElement);
    options[(at + by + options.length) % options.length]?.focus();
  };
  return (
    // Not an interactive element itself: it hears the keys and focus changes of its listbox's
    // options (Tab steps, Escape closes, leaving closes).
    // eslint-disable-next-line jsx-a11y/no-static-element-interactions
    <div
      ref={ref}
      className="popup agent-picker"
      data-testid="agent-picker"
      onBlur={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget)) onClose();
      }}
      // Before the listbox (which moves the focus to its selected option on Shift+Tab).
      onKeyDownCapture={(e) => {
        if (e.key === "Tab") {
          e.preventDefault();
          e.stopPropagation();
          step(e.shiftKey ? -1 : 1);
        } else if ((e.key === "Enter" || e.key === " ") && document.activeElement instanceof HTMLElement) {
          const key = document.activeElement.closest<HTMLElement>("[role=option]")?.dataset.key;
          if (key) {
            e.preventDefault();
            e.stopPropagation();
            onPick(key);
          }
        }
      }}
      onClickCapture={(e) => {
        const key = e.target instanceof Element ? e.target.closest<HTMLElement>("[role=option]")?.dataset.key : undefined;
        if (key) onPick(key);
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <ListBox
        aria-label="Choose the agent"
        items={list}
        // Selected: the next agent, which has the focus when it opens. Choosing one (a click,
        // Enter, Space) picks it; the wrapper hears those (a selected option would not change).
        autoFocus
        selectionMode="single"
        disallowEmptySelection
        defaultSelectedKeys={next ? [next] : []}
        escapeKeyBehavior="none"
      >
        {(a) => (
          <ListBoxItem id={a.name} textValue={a.name} className="agent-option" data-testid="agent-option">
            <span className="mono">{modeLabel(a.name)}</span> <span className="muted">{a.description}</span>
            {a.name === current && <span className="muted small"> (current)</span>}
          </ListBoxItem>
        )}
      </ListBox>
    </div>
  );
}
