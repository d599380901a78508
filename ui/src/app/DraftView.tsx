import { useState } from "react";
import type { AgentInfo } from "../protocol/generated";
import { useServices, useToast } from "./context";
import { AgentPicker, ModeBadge, primaryAgents, toggleTarget } from "./ModeBadge";
import { PromptInput } from "./PromptInput";

/** A project with no session open: the first message creates one (with the chosen agent). */
export function DraftView({
  directory,
  agents,
  onStart,
  onWorktrees,
  onCompare,
  onForkTree,
  onCreateAgent,
}: {
  directory: string;
  agents: AgentInfo[];
  onStart: (text: string, agent: string | null) => Promise<boolean>;
  onWorktrees?: () => void;
  onCompare?: () => void;
  onForkTree?: () => void;
  onCreateAgent?: (description?: string) => void;
}) {
  const { api } = useServices();
  const toast = useToast();
  const [agent, setAgent] = useState<string | null>(null);
  const [picker, setPicker] = useState(false);
  const current = agent ?? "build";
  const toggle = () => {
    if (primaryAgents(agents).length >= 3) setPicker(true);
    else setAgent(toggleTarget(current, agents));
  };
  return (
    <div className="session-layout">
      <section className="main-col">
        <header className="conv-header">
          <h1 className="conv-title">New session</h1>
        </header>
        <div className="conversation" data-testid="conversation" role="region" aria-label="Conversation" tabIndex={0}>
          <div className="empty muted">Ask for something to start. Type @ to mention a file, / for commands.</div>
        </div>
        <div className="input-row">
          <div className="input-tools">
            <ModeBadge agent={current} queued={null} onClick={toggle} />
            {picker && (
              <AgentPicker
                agents={agents}
                current={current}
                onPick={(a) => {
                  setAgent(a);
                  setPicker(false);
                }}
                onClose={() => setPicker(false)}
              />
            )}
          </div>
          <PromptInput
            loadFiles={() => api.files(directory)}
            history={[]}
            onSend={(text) => onStart(text, agent)}
            onCommand={(name, args) => {
              if (name === "plan" || name === "build") setAgent(name);
              else if (name === "agent") {
                const m = /^create\b\s*([\s\S]*)$/.exec(args?.trim() ?? "create");
                if (m) onCreateAgent?.(m[1]?.trim() || undefined);
                else toast("Usage: /agent create [what the agent should do]", "info");
              } else if (name === "model" || name === "cost")
                toast(`/${name} needs a session: send a first message.`, "info");
              else if (name === "worktrees") onWorktrees?.();
              else if (name === "compare") onCompare?.();
              else if (name === "forks") onForkTree?.();
              else if (name === "fork" || name === "promote") toast(`/${name} needs a session: send a first message.`, "info");
            }}
            onToggleMode={toggle}
            draftKey={`new:${directory}`}
            running={false}
            disabledCommands={{ fork: "no session yet", promote: "no session yet", model: "no session yet", cost: "no session yet" }}
            mentionAgents={agents
              .filter((a) => a.mode === "subagent" || a.mode === "all")
              .map((a) => ({ name: a.name, description: a.description }))}
          />
        </div>
      </section>
    </div>
  );
}
