import { useState } from "react";
import type { AgentInfo } from "../protocol/generated";
import { useServices, useToast } from "./context";
import { AgentPicker, ModeBadge, primaryAgents, toggleTarget } from "./ModeBadge";
import { PromptInput, restoreDraft } from "./PromptInput";
import { NewSessionHome } from "./NewSessionHome";
import { useCustomCommands } from "./session/composerOptions";
import type { SessionSummary } from "../protocol/generated";

/** A project with no session open: the first message creates one (with the chosen agent). */
export function DraftView({
  directory,
  agents,
  onStart,
  onWorktrees,
  onCompare,
  onForkTree,
  onCreateAgent,
  sessions = [],
  onOpenSession,
}: {
  directory: string;
  agents: AgentInfo[];
  onStart: (text: string, agent: string | null) => Promise<boolean>;
  onWorktrees?: () => void;
  onCompare?: () => void;
  onForkTree?: () => void;
  onCreateAgent?: (description?: string) => void;
  /** The project's sessions (the page lists the recent ones). */
  sessions?: SessionSummary[];
  onOpenSession?: (id: string) => void;
}) {
  const { api } = useServices();
  const customCommands = useCustomCommands(directory);
  const toast = useToast();
  const [agent, setAgent] = useState<string | null>(null);
  const [picker, setPicker] = useState(false);
  const [inputKey, setInputKey] = useState(0);
  const draftKey = `new:${directory}`;
  // A suggestion or a file goes into the composer (mounted again to show it).
  const prompt = (text: string) => {
    restoreDraft(draftKey, text);
    setInputKey((k) => k + 1);
  };
  const current = agent ?? "build";
  const toggle = () => {
    if (primaryAgents(agents).length >= 3) setPicker(true);
    else setAgent(toggleTarget(current, agents));
  };
  return (
    <div className="session-layout draft-layout">
      <section className="main-col">
        <header className="conv-header">
          <h1 className="conv-title">New session</h1>
        </header>
        <div className="conversation" data-testid="conversation" role="region" aria-label="Conversation" tabIndex={0}>
          <NewSessionHome sessions={sessions} onOpenSession={onOpenSession} onPrompt={prompt} />
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
            draftKey={draftKey}
            key={inputKey}
            running={false}
            disabledCommands={{ fork: "no session yet", promote: "no session yet", model: "no session yet", cost: "no session yet" }}
            customCommands={customCommands}
            mentionAgents={agents
              .filter((a) => a.mode === "subagent" || a.mode === "all")
              .map((a) => ({ name: a.name, description: a.description }))}
          />
        </div>
      </section>
    </div>
  );
}
