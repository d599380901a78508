import { useMemo } from "react";
import type { AgentInfo, ModelChoice } from "../../protocol/generated";
import type { SessionState } from "../../state/session";
import { ContextMeter } from "../ContextMeter";
import { AgentPicker, ModeBadge } from "../ModeBadge";
import { ModelPicker, modelHint } from "../ModelPicker";
import { ChevronDown, Square } from "lucide-react";
import { RunningIndicator } from "./RunningIndicator";

/**
 * What sits above the composer: the agent (a click switches plan/build, or picks among three or
 * more), the model (its picker), the context meter, Stop, and what the session is doing.
 */
export function InputTools({
  state,
  agents,
  compacting,
  picker,
  onClosePicker,
  onSwitch,
  onToggleMode,
  modelPicker,
  onModelPicker,
  loadModels,
  setModel,
  onStop,
}: {
  state: SessionState;
  agents: AgentInfo[];
  compacting: boolean;
  /** The agent picker is open. */
  picker: boolean;
  onClosePicker: () => void;
  onSwitch: (agent: string) => void;
  onToggleMode: () => void;
  modelPicker: boolean;
  onModelPicker: (open: boolean) => void;
  loadModels: () => Promise<ModelChoice[]>;
  setModel: (model: string | null) => Promise<void>;
  onStop: () => void;
}) {
  return (
    <div className="input-tools">
      <ModeBadge agent={state.agent} queued={state.queuedAgent} onClick={onToggleMode} />
      {picker && <AgentPicker agents={agents} current={state.agent} onPick={onSwitch} onClose={onClosePicker} />}
      <ModelButton
        state={state}
        agents={agents}
        open={modelPicker}
        onOpen={onModelPicker}
        loadModels={loadModels}
        setModel={setModel}
      />
      {state.context && <ContextMeter usage={state.context} />}
      {state.running && (
        <button type="button" className="btn danger small" data-testid="stop" onClick={onStop}>
          <Square size={11} fill="currentColor" aria-hidden />
          Stop
        </button>
      )}
      {state.running && !compacting && <RunningIndicator label="Working" since={turnStart(state)} />}
      {compacting && <RunningIndicator label="Compacting" />}
    </div>
  );
}

/** When the running turn started: the last user message's time (undefined when there is none). */
function turnStart(state: SessionState): number | undefined {
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i]!;
    if (m.role === "user") return m.created_at;
  }
  return undefined;
}

/** The model the next turn uses (and whose choice it is), with the model picker under it. */
function ModelButton({
  state,
  agents,
  open,
  onOpen,
  loadModels,
  setModel,
}: {
  state: SessionState;
  agents: AgentInfo[];
  open: boolean;
  onOpen: (open: boolean) => void;
  loadModels: () => Promise<ModelChoice[]>;
  setModel: (model: string | null) => Promise<void>;
}) {
  const agentModel = agents.find((a) => a.name === state.agent)?.model ?? null;
  const sessionModel = state.session?.model ?? null;
  // /model's pick for the current agent comes first (the runtime's order).
  const picked = state.session?.agent_models?.[state.agent] ?? null;
  const lastModel = useMemo(() => {
    for (let i = state.messages.length - 1; i >= 0; i--) {
      const m = state.messages[i]!.metadata.model;
      if (m) return m;
    }
    return null;
  }, [state.messages]);
  return (
    <span className="model-wrap">
      <button
        type="button"
        className="model-btn small"
        data-testid="model-button"
        aria-haspopup="listbox"
        aria-expanded={open}
        title={modelHint(picked, agentModel, sessionModel, state.agent)}
        onClick={() => onOpen(!open)}
      >
        <span className="mono">{picked ?? agentModel ?? sessionModel ?? lastModel ?? "default model"}</span>
        {!picked && !agentModel && !sessionModel && lastModel && <span className="muted"> (default)</span>}
        {picked && <span className="muted"> (picked)</span>}
        {!picked && agentModel && <span className="muted"> ({state.agent}'s)</span>} <ChevronDown size={12} aria-hidden />
      </button>
      {open && (
        <ModelPicker
          load={loadModels}
          current={picked}
          onPick={async (m) => {
            await setModel(m);
            onOpen(false);
          }}
          onClose={() => onOpen(false)}
        />
      )}
    </span>
  );
}
