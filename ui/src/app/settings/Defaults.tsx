import { useState } from "react";
import type { SettingsView } from "../../protocol/generated";
import { errorMessage } from "../../lib/api";
import { useServices, useToast } from "../context";

export function Defaults({ view, onSaved }: { view: SettingsView; onSaved: (v: SettingsView) => void }) {
  const { api } = useServices();
  const toast = useToast();
  const [agent, setAgent] = useState(view.default_agent);
  const [model, setModel] = useState(view.model ?? "");
  const [perAgent, setPerAgent] = useState<Record<string, string>>(() =>
    Object.fromEntries(view.agents.map((a) => [a.name, a.model ?? ""])),
  );
  const models = view.providers.flatMap((p) => (p.models ?? []).map((m) => `${p.id}/${m}`));
  const save = async () => {
    try {
      const agent_models: Record<string, string> = {};
      for (const a of view.agents)
        if ((a.model ?? "") !== (perAgent[a.name] ?? "")) agent_models[a.name] = perAgent[a.name] ?? "";
      const next = await api.updateSettings({ default_agent: agent, model, agent_models });
      onSaved(next);
      toast("Settings saved", "info");
    } catch (e) {
      toast(errorMessage(e));
    }
  };
  return (
    <section>
      <h3>Defaults</h3>
      <datalist id="model-options">
        {models.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
      <div className="grid2">
        <label>
          Default agent
          <select className="input" value={agent} onChange={(e) => setAgent(e.target.value)} data-testid="default-agent">
            {view.agents
              .filter((a) => a.mode !== "subagent")
              .map((a) => (
                <option key={a.name} value={a.name}>
                  {a.name}
                </option>
              ))}
          </select>
        </label>
        <label>
          Default model
          <input
            className="input mono"
            list="model-options"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            placeholder="provider/model"
            data-testid="default-model"
          />
        </label>
        {view.agents.map((a) => (
          <label key={a.name}>
            Model for {a.name}
            <input
              className="input mono"
              list="model-options"
              value={perAgent[a.name] ?? ""}
              placeholder="(default)"
              onChange={(e) => setPerAgent({ ...perAgent, [a.name]: e.target.value })}
            />
          </label>
        ))}
      </div>
      <div className="row-end">
        <button type="button" className="btn primary" onClick={() => void save()} data-testid="save-settings">
          Save defaults
        </button>
      </div>
    </section>
  );
}
