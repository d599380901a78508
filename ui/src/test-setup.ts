import "@testing-library/jest-dom/vitest";

// jsdom has no layout: every box is 0×0 at the page's origin, where user-event's pointer also is.
// react-resizable-panels hit-tests its resize handles on every pointerdown (with a margin around
// each), so each click would start a resize and never reach its button. The handles are put out
// of the pointer's way here; resizing itself is tested in the browser (Playwright).
const original = Object.getOwnPropertyDescriptor(Element.prototype, "getBoundingClientRect")?.value as (
  this: Element,
) => DOMRect;
Object.defineProperty(Element.prototype, "getBoundingClientRect", {
  configurable: true,
  value(this: Element): DOMRect {
    if (this.hasAttribute("data-panel-resize-handle-id")) return new DOMRect(-10_000, -10_000, 5, 5);
    return original.call(this);
  },
});
