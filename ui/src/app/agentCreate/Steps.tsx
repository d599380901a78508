import type { AgentProposal } from "../../protocol/generated";
import { Loader2 } from "lucide-react";

/** The first step: what the agent should do (Ctrl/Cmd+Enter or Generate sends it). */
export function DescribeStep({
  description,
  onDescription,
  agent,
  onGenerate,
  onClose,
}: {
  description: string;
  onDescription: (text: string) => void;
  /** The agent creating it (its limits bound the new one). */
  agent?: string;
  onGenerate: () => void;
  onClose: () => void;
}) {
  return (
    <form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        onGenerate();
      }}
    >
      <label className="stack">
        <span>What should the agent do?</span>
        <textarea
          className="input"
          rows={4}
          autoFocus
          value={description}
          placeholder="e.g. reviews changes for security problems and reports them; never edits files"
          data-testid="agent-description"
          onChange={(e) => onDescription(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              onGenerate();
            }
          }}
        />
      </label>
      <p className="muted small">
        The model proposes a definition: a name, a mode, a model and why, permission rules each with a reason, and
        the prompt. It is checked (never broader than {agent ? <strong>{agent}</strong> : "the agent creating it"})
        and shown to you; nothing is saved until you choose Save.
      </p>
      <div className="row-end">
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className="btn primary" data-testid="agent-generate" disabled={!description.trim()}>
          Generate
        </button>
      </div>
    </form>
  );
}

/** While the model writes the definition (and the server checks it). */
export function GeneratingStep({ description, onClose }: { description: string; onClose: () => void }) {
  return (
    <div className="stack">
      <div className="agent-progress" role="status" data-testid="agent-progress">
        <span className="compaction-dot" aria-hidden>
          <Loader2 size={13} className="spin" />
        </span>{" "}
        Generating the agent… the model writes a definition, then it is checked against your rules.
      </div>
      <p className="muted small">“{description.trim()}”</p>
      <div className="row-end">
        <button type="button" className="btn" onClick={onClose} data-testid="agent-cancel">
          Cancel
        </button>
      </div>
    </div>
  );
}

/** What should change: sent to the model with the definition as it is now. */
export function RefineForm({
  text,
  onText,
  busy,
  onRefine,
  onBack,
}: {
  text: string;
  onText: (text: string) => void;
  busy: null | "refine" | "save";
  onRefine: () => void;
  onBack: () => void;
}) {
  return (
    <form
      className="agent-refine"
      onSubmit={(e) => {
        e.preventDefault();
        onRefine();
      }}
    >
      <label className="stack">
        <span>What should change?</span>
        <textarea
          className="input"
          rows={2}
          autoFocus
          value={text}
          placeholder="e.g. also allow running the tests"
          data-testid="agent-refine-input"
          onChange={(e) => onText(e.target.value)}
        />
      </label>
      <div className="row-end">
        <button type="button" className="btn" onClick={onBack}>
          Back
        </button>
        <button
          type="submit"
          className="btn primary"
          data-testid="agent-refine-send"
          disabled={!text.trim() || busy !== null}
        >
          {busy === "refine" ? "Refining…" : "Refine"}
        </button>
      </div>
      {busy === "refine" && (
        <div className="muted small" role="status">
          Asking the model to change the definition…
        </div>
      )}
    </form>
  );
}

/** Saved: where, and how to use the new agent. */
export function SavedStep({ saved, onClose }: { saved: { path: string; proposal: AgentProposal }; onClose: () => void }) {
  return (
    <div className="stack" data-testid="agent-saved">
      <p role="status">
        Saved <strong>{saved.proposal.name || saved.proposal.key}</strong> to <span className="mono">{saved.path}</span>.
      </p>
      <p className="muted small">
        {saved.proposal.mode === "primary"
          ? "It is a primary agent: pick it with Tab in the input."
          : saved.proposal.mode === "all"
            ? `Pick it with Tab, or delegate to it with @${saved.proposal.key}.`
            : `Delegate to it with @${saved.proposal.key} in a message (or let an agent call it).`}
      </p>
      <div className="row-end">
        <button type="button" className="btn primary" onClick={onClose} autoFocus>
          Close
        </button>
      </div>
    </div>
  );
}
