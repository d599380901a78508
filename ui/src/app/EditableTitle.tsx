import { useState } from "react";

/**
 * The session title; click it (or press Enter on it) to rename. Enter saves,
 * Escape cancels; an empty title is not sent (the runtime refuses it).
 */
export function EditableTitle({
  title,
  hint,
  onRename,
}: {
  title: string;
  hint?: string;
  onRename: (title: string) => Promise<void>;
}) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(title);
  const [saving, setSaving] = useState(false);
  if (!editing) {
    return (
      <h1 className="conv-title">
        <button
          type="button"
          className="title-btn"
          data-testid="session-title"
          title={hint ? `${hint} — click to rename` : "Click to rename"}
          onClick={() => {
            setValue(title);
            setEditing(true);
          }}
        >
          {title}
        </button>
      </h1>
    );
  }
  const save = async () => {
    const next = value.trim();
    if (!next || next === title) {
      setEditing(false);
      return;
    }
    setSaving(true);
    try {
      await onRename(next);
      setEditing(false);
    } finally {
      setSaving(false);
    }
  };
  return (
    <input
      className="input conv-title-input"
      data-testid="session-title-input"
      aria-label="Session title"
      autoFocus
      value={value}
      disabled={saving}
      maxLength={200}
      onChange={(e) => setValue(e.target.value)}
      onBlur={() => void save()}
      onKeyDown={(e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          void save();
        } else if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          setEditing(false);
        }
      }}
    />
  );
}
