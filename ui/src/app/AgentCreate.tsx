import { useEffect, useRef, useState } from "react";
import type { AgentProposal, ModelChoice } from "../protocol/generated";
import { errorMessage } from "../lib/api";
import { useServices } from "./context";
import { Modal } from "./Modal";
import { Changes } from "./agentCreate/Changes";
import { changedFields } from "./agentCreate/fields";
import { ProposalEditor } from "./agentCreate/ProposalEditor";
import { ProposalView } from "./agentCreate/ProposalView";
import { DescribeStep, GeneratingStep, RefineForm, SavedStep } from "./agentCreate/Steps";
import { TriangleAlert } from "lucide-react";

export { fieldText } from "./agentCreate/fields";

type Phase = "describe" | "generating" | "preview" | "saved";

/**
 * `/agent create`: a description → Generate (the model proposes a definition, validated by the
 * server) → the preview (key, name, description, mode, model and why, each rule and why, the full
 * prompt, notes) → Save (project or global), Edit (inline), Refine (what changed shown as a
 * before/after diff of the changed fields) or Cancel. Errors show the server's text.
 */
export function AgentCreate({
  directory,
  agent,
  initialDescription,
  onClose,
  onSaved,
}: {
  directory: string;
  /** The agent creating it (its limits bound the new one); default: the project's default agent. */
  agent?: string;
  initialDescription?: string;
  onClose: () => void;
  /** The agent is saved: refresh the agent lists. */
  onSaved: (proposal: AgentProposal, path: string) => void;
}) {
  const { api } = useServices();
  const [phase, setPhase] = useState<Phase>("describe");
  const [description, setDescription] = useState(initialDescription ?? "");
  const [proposal, setProposal] = useState<AgentProposal | null>(null);
  const [before, setBefore] = useState<AgentProposal | null>(null);
  const [draft, setDraft] = useState<AgentProposal | null>(null);
  const [refineOpen, setRefineOpen] = useState(false);
  const [refineText, setRefineText] = useState("");
  const [busy, setBusy] = useState<null | "refine" | "save">(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<{ path: string; proposal: AgentProposal } | null>(null);
  const [models, setModels] = useState<ModelChoice[]>([]);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  // The models (for the editor's suggestions) load the first time the editor opens.
  const editing = draft !== null;
  useEffect(() => {
    if (!editing || models.length) return;
    api.models(directory).then(
      (m) => alive.current && setModels(m),
      () => undefined,
    );
  }, [api, directory, editing, models.length]);

  const generate = async () => {
    const d = description.trim();
    if (!d) return;
    setError(null);
    setPhase("generating");
    try {
      const p = await api.proposeAgent(directory, d, agent);
      if (!alive.current) return;
      setProposal(p);
      setBefore(null);
      setPhase("preview");
    } catch (e) {
      if (!alive.current) return;
      setError(errorMessage(e));
      setPhase("describe");
    }
  };

  const current = draft ?? proposal;

  const refine = async () => {
    const r = refineText.trim();
    if (!r || !current) return;
    setError(null);
    setBusy("refine");
    try {
      const next = await api.refineAgent(directory, current, r, agent);
      if (!alive.current) return;
      setBefore(current);
      setProposal(next);
      setDraft(null);
      setRefineText("");
      setRefineOpen(false);
    } catch (e) {
      if (alive.current) setError(errorMessage(e));
    } finally {
      if (alive.current) setBusy(null);
    }
  };

  const save = async (to: "project" | "global") => {
    if (!current) return;
    setError(null);
    setBusy("save");
    try {
      const r = await api.saveAgent(directory, { ...current, changed: [] }, to, agent);
      if (!alive.current) return;
      setSaved(r);
      setPhase("saved");
      onSaved(r.proposal, r.path);
    } catch (e) {
      if (alive.current) setError(errorMessage(e));
    } finally {
      if (alive.current) setBusy(null);
    }
  };

  const changed = proposal && before ? changedFields(before, proposal) : [];

  return (
    <Modal title="Create an agent" onClose={onClose} className="modal-agent" testId="agent-create">
      <div className="agent-create">
        {error && (
          <div className="error-banner agent-error" role="alert" data-testid="agent-error">
            <span>{error}</span>
            <button type="button" className="icon-btn" aria-label="Dismiss the error" onClick={() => setError(null)}>
              ×
            </button>
          </div>
        )}
        {phase === "describe" && (
          <DescribeStep
            description={description}
            onDescription={setDescription}
            agent={agent}
            onGenerate={() => void generate()}
            onClose={onClose}
          />
        )}
        {phase === "generating" && <GeneratingStep description={description} onClose={onClose} />}
        {phase === "preview" && current && (
          <div className="stack">
            {(current.notes ?? []).length > 0 && (
              <ul className="agent-notes" data-testid="agent-notes" aria-label="Notes from the checks">
                {(current.notes ?? []).map((n, i) => (
                  <li key={i} className="warning small">
                    <TriangleAlert size={12} aria-hidden /> {n}
                  </li>
                ))}
              </ul>
            )}
            {before && proposal && changed.length > 0 && <Changes before={before} after={proposal} fields={changed} />}
            {before && proposal && changed.length === 0 && (
              <p className="muted small" data-testid="agent-changes-none">
                The refinement changed nothing.
              </p>
            )}
            {draft ? (
              <ProposalEditor draft={draft} onChange={setDraft} models={models} />
            ) : (
              <ProposalView p={current} changed={changed} />
            )}
            {refineOpen && (
              <RefineForm
                text={refineText}
                onText={setRefineText}
                busy={busy}
                onRefine={() => void refine()}
                onBack={() => setRefineOpen(false)}
              />
            )}
            <div className="row-end agent-actions">
              <button type="button" className="btn" onClick={onClose} data-testid="agent-cancel">
                Cancel
              </button>
              {!refineOpen && (
                <button
                  type="button"
                  className="btn"
                  data-testid="agent-refine"
                  disabled={busy !== null}
                  onClick={() => setRefineOpen(true)}
                >
                  Refine…
                </button>
              )}
              <button
                type="button"
                className={`btn${draft ? " toggle on" : ""}`}
                data-testid="agent-edit"
                aria-pressed={draft !== null}
                disabled={busy !== null}
                onClick={() => {
                  if (draft) {
                    setProposal(draft);
                    setBefore(null);
                    setDraft(null);
                  } else setDraft(proposal);
                }}
              >
                {draft ? "Done editing" : "Edit"}
              </button>
              <button
                type="button"
                className="btn"
                data-testid="agent-save-global"
                disabled={busy !== null}
                title="~/.config/mia-code/agents/<key>.md: every project"
                onClick={() => void save("global")}
              >
                Save globally
              </button>
              <button
                type="button"
                className="btn primary"
                data-testid="agent-save-project"
                disabled={busy !== null}
                title=".mia-code/agents/<key>.md in this project"
                onClick={() => void save("project")}
              >
                {busy === "save" ? "Saving…" : "Save to project"}
              </button>
            </div>
          </div>
        )}
        {phase === "saved" && saved && (
          <SavedStep saved={saved} onClose={onClose} />
        )}
      </div>
    </Modal>
  );
}
