import { COMMANDS } from "./commands";

export function HelpText() {
  return (
    <div className="help">
      <h3>Keys</h3>
      <ul>
        <li>
          <kbd>Enter</kbd> send · <kbd>Shift</kbd>+<kbd>Enter</kbd> new line
        </li>
        <li>
          <kbd>Tab</kbd> in an empty prompt (or with the caret at its start, or with nothing focused): switch plan ↔ build (a
          picker with 3+ agents)
        </li>
        <li>
          <kbd>↑</kbd>/<kbd>↓</kbd> on the first/last line: walk through your previous messages
        </li>
        <li>
          <kbd>@</kbd> mention a file · <kbd>/</kbd> at the start: commands
        </li>
        <li>
          A message's <kbd>⋯</kbd> menu: fork from there (with or without its files)
        </li>
        <li>
          Fork tree: <kbd>←</kbd>/<kbd>→</kbd> parent/fork · <kbd>↑</kbd>/<kbd>↓</kbd> neighbours · <kbd>Enter</kbd> open ·{" "}
          <kbd>+</kbd>/<kbd>−</kbd> expand/collapse · <kbd>Shift</kbd>+<kbd>F10</kbd> actions
        </li>
      </ul>
      <h3>Compaction</h3>
      <p>
        A long conversation is compacted: its older messages are summarised for the model and archived (automatically, or
        now with <code>/compact</code>, once no turn is running). The <em>Compacted N messages</em> marker in the
        conversation shows the summary and, on request, the archived messages; nothing is lost.
      </p>
      <h3>Commands</h3>
      <ul>
        {COMMANDS.map((c) => (
          <li key={c.name}>
            <code>/{c.name}</code> — {c.description}
          </li>
        ))}
      </ul>
    </div>
  );
}
