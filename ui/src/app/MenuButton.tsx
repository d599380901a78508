import { useState, type ReactNode } from "react";
import { Button, Menu, MenuItem as AriaMenuItem, MenuTrigger, Popover, Text } from "react-aria-components";
import { Ellipsis } from "lucide-react";

export interface MenuItem {
  label: string;
  onSelect: () => void;
  /** Shown but not selectable; the text says why (as the item's description). */
  disabled?: string | false;
  testId?: string;
}

/**
 * A menu button on react-aria-components (the WAI-ARIA menu button pattern): Enter, Space or
 * ArrowDown opens the menu on its first item, ArrowUp on its last; the arrows, Home/End and
 * typing a letter move, Enter/Space choose, Escape closes and gives the focus back, Tab or a
 * click outside closes.
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
  /** What the button shows (default: a three-dots icon). */
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
  const change = (o: boolean) => {
    setOpen(o);
    onOpenChange?.(o);
    if (!o && returnFocus) {
      // After the popover's own focus restoring.
      requestAnimationFrame(() => returnFocus()?.focus());
    }
  };
  const disabledKeys = items.filter((i) => i.disabled).map((i) => i.label);
  return (
    <span className="menu-wrap">
      <MenuTrigger isOpen={open} onOpenChange={change}>
        <Button
          id={buttonId}
          className={className}
          aria-label={label}
          data-testid={testId}
          excludeFromTabOrder={tabIndex === -1}
        >
          <span title={label} className="menu-btn-face">{children ?? <Ellipsis size={16} aria-hidden />}</span>
        </Button>
        <Popover placement="bottom end" offset={2} className="menu-popover">
          <Menu
            className="menu"
            aria-label={label}
            disabledKeys={disabledKeys}
            // Opened by the trigger's keys, the trigger says where focus goes; mounted open, the first item.
            {...(initiallyOpen ? { autoFocus: "first" as const } : {})}
            onAction={(key) => items.find((i) => i.label === key)?.onSelect()}
          >
            {items.map((item) => (
              <AriaMenuItem
                key={item.label}
                id={item.label}
                textValue={item.label}
                className="menu-item"
                data-testid={item.testId}
              >
                <Text slot="label">{item.label}</Text>
                {item.disabled && (
                  <Text slot="description" className="muted small menu-note">
                    {item.disabled}
                  </Text>
                )}
              </AriaMenuItem>
            ))}
          </Menu>
        </Popover>
      </MenuTrigger>
    </span>
  );
}
