import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from "react";

export interface MenuItem {
  label: string;
  onSelect: () => void;
  /** Shown but not selectable; the text says why (as the item's description). */
  disabled?: string | false;
  testId?: string;
}

/**
 * A menu button (WAI-ARIA menu button pattern): Enter, Space or ArrowDown opens
 * the menu on its first item, ArrowUp on its last; ArrowUp/ArrowDown/Home/End
 * move, Enter/Space choose, Escape closes and gives focus back to the button,
 * Tab or a click outside closes.
 */
export function MenuButton({
  label,
  items,
  children,
  className = "icon-btn",
  testId,
  tabIndex,
  onOpenChange,
  returnFocus,
  buttonId,
  initiallyOpen = false,
}: {
  /** The button's accessible name ("Actions for this message"). */
  label: string;
  items: MenuItem[];
  /** What the button shows (default ⋯). */
  children?: ReactNode;
  className?: string;
  testId?: string;
  tabIndex?: number;
  onOpenChange?: (open: boolean) => void;
  /** Where focus goes when the menu closes (default: the button). */
  returnFocus?: () => HTMLElement | null;
  /** The button's id (so a key elsewhere can open the menu). */
  buttonId?: string;
  /** Mounted open, on its first item (a list of many shows a plain button until one is asked for). */
  initiallyOpen?: boolean;
}) {
  const [open, setOpen] = useState(initiallyOpen);
  const [active, setActive] = useState(0);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLUListElement>(null);
  const wrapRef = useRef<HTMLSpanElement>(null);
  const id = useId();

  const show = (at: number) => {
    setActive(at);
    setOpen(true);
    onOpenChange?.(true);
  };
  const close = (refocus: boolean) => {
    setOpen(false);
    onOpenChange?.(false);
    if (refocus) (returnFocus?.() ?? buttonRef.current)?.focus();
  };

  useEffect(() => {
    if (!open) return;
    menuRef.current?.querySelectorAll<HTMLElement>("[role='menuitem']")[active]?.focus();
  }, [open, active]);

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (wrapRef.current && !wrapRef.current.contains(e.target as Node)) {
        setOpen(false);
        onOpenChange?.(false);
      }
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, [open, onOpenChange]);

  const choose = (item: MenuItem) => {
    if (item.disabled) return;
    close(true);
    item.onSelect();
  };

  const onButtonKey = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown" || e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      e.stopPropagation();
      show(0);
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      e.stopPropagation();
      show(items.length - 1);
    }
  };

  const onMenuKey = (e: KeyboardEvent) => {
    const n = items.length;
    // The menu's keys are its own: nothing around it (a tree, the page) reacts to them.
    e.stopPropagation();
    if (e.key === "ArrowDown") setActive((a) => (a + 1) % n);
    else if (e.key === "ArrowUp") setActive((a) => (a - 1 + n) % n);
    else if (e.key === "Home") setActive(0);
    else if (e.key === "End") setActive(n - 1);
    else if (e.key === "Escape") close(true);
    else if (e.key === "Tab") {
      close(false);
      return;
    } else if (e.key === "Enter" || e.key === " ") {
      const item = items[active];
      if (item) choose(item);
    } else return;
    e.preventDefault();
  };

  return (
    <span className="menu-wrap" ref={wrapRef}>
      <button
        ref={buttonRef}
        id={buttonId}
        type="button"
        className={className}
        aria-label={label}
        title={label}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        data-testid={testId}
        tabIndex={tabIndex}
        onClick={(e) => {
          e.stopPropagation();
          if (open) close(false);
          else show(0);
        }}
        onKeyDown={onButtonKey}
      >
        {children ?? "⋯"}
      </button>
      {open && (
        <ul className="menu" role="menu" id={id} aria-label={label} ref={menuRef} onKeyDown={onMenuKey}>
          {items.map((item, i) => (
            <li
              key={item.label}
              role="menuitem"
              tabIndex={i === active ? 0 : -1}
              aria-disabled={item.disabled ? true : undefined}
              className={`menu-item${i === active ? " active" : ""}`}
              data-testid={item.testId}
              onMouseEnter={() => setActive(i)}
              onClick={(e) => {
                e.stopPropagation();
                choose(item);
              }}
            >
              <span>{item.label}</span>
              {item.disabled && <span className="muted small menu-note">{item.disabled}</span>}
            </li>
          ))}
        </ul>
      )}
    </span>
  );
}
