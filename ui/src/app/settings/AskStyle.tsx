import "./AskStyle.css";
import { setAsksAsDialog, useAsksAsDialog } from "../askStyle";

/** "Show permission asks as a dialog": the dialog over the page instead of the ask at its tool card. */
export function AskStyle() {
  const asDialog = useAsksAsDialog();
  return (
    <label className="settings-switch" data-testid="asks-as-dialog-label">
      <input
        type="checkbox"
        role="switch"
        checked={asDialog}
        aria-checked={asDialog}
        data-testid="asks-as-dialog"
        onChange={(e) => setAsksAsDialog(e.target.checked)}
      />
      <span>
        Show permission asks as a dialog
        <span className="muted small"> (otherwise they appear in the conversation, at the tool that asks)</span>
      </span>
    </label>
  );
}
