import { useCallback, useRef, useState, type ReactNode } from "react";

export interface SettingsSection {
  id: string;
  label: string;
  body: ReactNode;
}

/**
 * Settings as a section list: the sections' names on the left, every section on the right in
 * one scrolling column. A name scrolls to its section; the section at the top of the column is
 * the one marked current (`aria-current`).
 */
export function SettingsLayout({ sections, children }: { sections: SettingsSection[]; children?: ReactNode }) {
  const content = useRef<HTMLDivElement>(null);
  const [current, setCurrent] = useState(sections[0]?.id ?? "");
  const onScroll = useCallback(() => {
    const box = content.current;
    if (!box) return;
    const top = box.getBoundingClientRect().top;
    let at = sections[0]?.id ?? "";
    for (const s of sections) {
      const el = box.querySelector<HTMLElement>(`[data-section="${s.id}"]`);
      if (el && el.getBoundingClientRect().top - top <= 24) at = s.id;
    }
    // Scrolled to the end: the last section is current even when it is short.
    if (box.scrollTop + box.clientHeight >= box.scrollHeight - 2) at = sections.at(-1)?.id ?? at;
    setCurrent(at);
  }, [sections]);
  const go = (id: string) => {
    setCurrent(id);
    const el = content.current?.querySelector<HTMLElement>(`[data-section="${id}"]`);
    el?.scrollIntoView?.({ block: "start" });
  };
  return (
    <div className="settings-layout">
      <nav className="settings-nav" aria-label="Settings sections" data-testid="settings-nav">
        <ul>
          {sections.map((s) => (
            <li key={s.id}>
              <button
                type="button"
                className="settings-nav-item"
                aria-current={current === s.id ? "true" : undefined}
                data-testid={`settings-nav-${s.id}`}
                onClick={() => go(s.id)}
              >
                {s.label}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <div className="settings settings-content" ref={content} onScroll={onScroll} tabIndex={0} role="region" aria-label="Settings">
        {sections.map((s) => (
          <div key={s.id} className="settings-section" data-section={s.id} id={`settings-${s.id}`}>
            {s.body}
          </div>
        ))}
        {children}
      </div>
    </div>
  );
}
