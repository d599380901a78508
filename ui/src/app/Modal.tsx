import { useEffect, useRef, type ReactNode } from "react";
import { TipButton } from "./TipButton";
import { useOverflows } from "./useOverflows";
import { Dialog, Heading, Modal as AriaModal, ModalOverlay } from "react-aria-components";
import { X } from "lucide-react";

/**
 * A modal dialog on react-aria-components: focus kept inside and restored on close, Escape
 * and a click outside close it, the page behind is hidden from screen readers and does not
 * scroll. The first field (else the first button) takes the focus when it opens.
 */
export function Modal({
  title,
  onClose,
  children,
  wide,
  testId,
  className,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
  testId?: string;
  /** Extra classes on the dialog (a width of its own). */
  className?: string;
}) {
  const ref = useRef<HTMLElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const bodyScrolls = useOverflows(bodyRef);
  useEffect(() => {
    const el = ref.current;
    const first = el?.querySelector<HTMLElement>("[autofocus], input, select, textarea, button:not(.modal-close)");
    first?.focus();
  }, []);
  return (
    <ModalOverlay
      isOpen
      isDismissable
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
      className="modal-backdrop"
    >
      <AriaModal className={`modal${wide ? " modal-wide" : ""}${className ? ` ${className}` : ""}`}>
        <Dialog ref={ref} aria-label={title} data-testid={testId} className="modal-dialog">
          <header className="modal-header">
            <Heading slot="title">{title}</Heading>
            <TipButton className="icon-btn modal-close" aria-label="Close" tip="Close (Esc)" onPress={onClose}>
              <X size={16} aria-hidden />
            </TipButton>
          </header>
          {/* Reachable by Tab while it scrolls (the shortcut sheet), to scroll it without a mouse. */}
          <div className="modal-body" ref={bodyRef} role="region" aria-label={title} tabIndex={bodyScrolls ? 0 : undefined}>
            {children}
          </div>
        </Dialog>
      </AriaModal>
    </ModalOverlay>
  );
}
