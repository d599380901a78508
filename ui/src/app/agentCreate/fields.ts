import type { AgentProposal, ProposedRule } from "../../protocol/generated";

/** The fields of a definition, in the order they are shown (and diffed). */
const FIELDS = ["key", "name", "description", "mode", "model", "model_reason", "permissions", "prompt"] as const;
export type Field = (typeof FIELDS)[number];

export const FIELD_LABEL: Record<Field, string> = {
  key: "Key",
  name: "Name",
  description: "Description",
  mode: "Mode",
  model: "Model",
  model_reason: "Why this model",
  permissions: "Permissions",
  prompt: "Prompt",
};

export const MODES: { value: string; label: string }[] = [
  { value: "subagent", label: "subagent — called by other agents (task, @mention)" },
  { value: "primary", label: "primary — a session's agent (Tab)" },
  { value: "all", label: "all — both" },
];

function ruleText(r: ProposedRule): string {
  return `${r.action} ${r.permission}${r.pattern ? ` ${r.pattern}` : ""}${r.reason ? ` — ${r.reason}` : ""}`;
}

/** A field as text (what the refinement diff compares). */
export function fieldText(p: AgentProposal, f: Field): string {
  switch (f) {
    case "model":
      return p.model ?? "(the session's model)";
    case "model_reason":
      return p.model_reason ?? "";
    case "permissions":
      return p.permissions.map(ruleText).join("\n");
    default:
      return p[f];
  }
}

function isField(s: string): s is Field {
  return (FIELDS as readonly string[]).includes(s);
}

/** The fields a refinement changed: as the server says, else those whose text differs. */
export function changedFields(before: AgentProposal, after: AgentProposal): Field[] {
  const said = (after.changed ?? []).filter(isField);
  if (said.length) return FIELDS.filter((f) => said.includes(f));
  return FIELDS.filter((f) => fieldText(before, f) !== fieldText(after, f));
}
