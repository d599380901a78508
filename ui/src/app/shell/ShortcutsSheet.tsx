import { HelpText } from "../Help";
import { Modal } from "../Modal";

/** The keyboard shortcuts (`?` outside a text field, or the palette), with the `/` commands' help under them. */
export function ShortcutsSheet({ onClose }: { onClose: () => void }) {
  return (
    <Modal title="Keyboard shortcuts" onClose={onClose} testId="shortcuts">
      <ul className="help">
        <li>
          <kbd>Ctrl/Cmd</kbd>+<kbd>K</kbd> command palette · <kbd>?</kbd> this sheet
        </li>
        <li>
          <kbd>Ctrl/Cmd</kbd>+<kbd>Shift</kbd>+<kbd>A</kbd> answer the asks waiting in other sessions
        </li>
        <li>
          <kbd>Esc</kbd> in the input stops a running turn (twice with a draft) · <kbd>Enter</kbd> during a turn
          queues a follow-up
        </li>
        <li>
          <kbd>Ctrl/Cmd</kbd>+<kbd>F</kbd> search this session (<kbd>Enter</kbd> next, <kbd>Shift</kbd>+<kbd>Enter</kbd>{" "}
          previous, <kbd>Esc</kbd> close)
        </li>
        <li>
          <kbd>Ctrl/Cmd</kbd>+<kbd>+</kbd> / <kbd>−</kbd> / <kbd>0</kbd> zoom
        </li>
        <li>
          <kbd>Ctrl/Cmd</kbd>+<kbd>B</kbd> hide or show the sidebar; drag a panel's edge to resize it (or focus
          the edge: arrow keys, <kbd>Enter</kbd> hides or shows)
        </li>
      </ul>
      <HelpText />
    </Modal>
  );
}
