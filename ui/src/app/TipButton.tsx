import type { ReactNode } from "react";
import { Button, Tooltip, TooltipTrigger, type ButtonProps } from "react-aria-components";

/**
 * A button with a tooltip (react-aria-components): shown on hover after a short delay and at
 * once when the button gets the keyboard focus, hidden with Escape, announced through
 * `aria-describedby`. For icon buttons (settings, delete, close, download), whose name is their `aria-label`, the
 * tooltip says the same to sighted users; native `title` tooltips show neither on focus nor on
 * touch.
 */
export function TipButton({
  tip,
  children,
  placement = "bottom",
  ...props
}: Omit<ButtonProps, "children"> & {
  tip: string;
  children: ReactNode;
  placement?: "top" | "bottom" | "start" | "end";
  "data-testid"?: string;
}) {
  return (
    <TooltipTrigger delay={600} closeDelay={100}>
      <Button {...props}>{children}</Button>
      <Tooltip className="tooltip" placement={placement} offset={6}>
        {tip}
      </Tooltip>
    </TooltipTrigger>
  );
}
