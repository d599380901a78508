import { COMMANDS } from "./commands";
import { Ellipsis } from "lucide-react";

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
          A message's <Ellipsis size={14} aria-label="actions" className="help-icon" /> menu: fork from there (with or without its files)
        </li>
        <li>
          Fork tree: arrows to the parent, a fork, the neighbours · <kbd>Enter</kbd> open · <kbd>Space</kbd> expand/collapse ·{" "}
          <kbd>+</kbd>/<kbd>−</kbd> zoom (or <kbd>Ctrl</kbd>/<kbd>Cmd</kbd>+wheel) · <kbd>0</kbd> fit · <kbd>Shift</kbd>+<kbd>F10</kbd> actions
        </li>
      </ul>
      <h3>Compaction</h3>
      <p>
        A long conversation is compacted: its older messages are summarised for the model and archived (automatically, or
        now with <code>/compact</code>, once no turn is running). The <em>Compacted N messages</em> marker in the
        conversation shows the summary and, on request, the archived messages; <code>/history --full</code> (the History
        tab) lists the whole conversation with the archived messages marked. Nothing is lost.
      </p>
      <h3>Subagents</h3>
      <p>
        An agent can delegate a task to a subagent (<em>explore</em>, <em>general</em>, or one you created); type{" "}
        <code>@name</code> in a message to ask for it. Each delegation is a card in the conversation: the subagent, its
        task, its status (queued, running, blocked on an ask, completed, timed out, error, cancelled), its steps and tool
        calls as they happen, then its duration, cost and answer. <strong>Open as session</strong> shows the subagent's own
        session (it links back to yours). A subagent's permission asks appear here, marked <em>(subagent)</em>.
      </p>
      <h3>Models and cost</h3>
      <p>
        The model button next to the agent badge (or <code>/model</code>) picks this session's model, with each model's
        context window and price; <code>/model provider/model</code> sets it directly, <code>/model default</code> goes
        back to the agent's or the configured model. A pick is per agent and comes before the agent's own model. A message's model shows, on hover, where it came
        from. <code>/cost</code> (or the total in the header) shows the cost per agent and model, with and without
        subagents.
      </p>
      <h3>Creating agents</h3>
      <p>
        <code>/agent create</code> (also in Settings → Agents) describes an agent in your words; the model proposes a
        definition (mode, model and why, permission rules each with a reason, the prompt) that is checked against your
        rules and shown before anything is saved: <strong>Edit</strong> it, <strong>Refine</strong> it (“also allow running
        the tests”; what changed is shown before/after), then <strong>Save</strong> to the project or globally.
      </p>
      <h3>Commands</h3>
      <ul>
        {COMMANDS.map((c) => (
          <li key={c.name}>
            <code>
              /{c.name}
              {c.args ? ` ${c.args}` : ""}
            </code>{" "}
            — {c.description}
          </li>
        ))}
      </ul>
    </div>
  );
}
