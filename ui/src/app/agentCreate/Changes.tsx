import type { AgentProposal } from "../../protocol/generated";
import { lineDiff } from "../../lib/lineDiff";
import { FIELD_LABEL, fieldText, type Field } from "./fields";

/** What a refinement changed: each changed field's text before and after, as a line diff. */
export function Changes({ before, after, fields }: { before: AgentProposal; after: AgentProposal; fields: Field[] }) {
  return (
    <section className="agent-changes" data-testid="agent-changes" aria-label="What the refinement changed">
      <h3>What changed</h3>
      {fields.map((f) => {
        const a = fieldText(before, f);
        const b = fieldText(after, f);
        return (
          <div key={f} className="agent-change" data-testid="agent-change" data-field={f}>
            <div className="agent-change-field">{FIELD_LABEL[f]}</div>
            {a === b ? (
              <div className="muted small">(the same value as before)</div>
            ) : (
              <pre className="agent-diff" aria-label={`${FIELD_LABEL[f]}: before and after`}>
                {lineDiff(a, b).map((r, i) => (
                  <div key={i} className={`agent-diff-${r.type}`} data-diff={r.type}>
                    <span aria-hidden className="agent-diff-sign">
                      {r.type === "add" ? "+" : r.type === "del" ? "−" : " "}
                    </span>
                    <span className="sr-only">{r.type === "add" ? "after: " : r.type === "del" ? "before: " : ""}</span>
                    {r.text || " "}
                  </div>
                ))}
              </pre>
            )}
          </div>
        );
      })}
    </section>
  );
}
