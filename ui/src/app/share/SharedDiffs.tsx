import type { Redaction, SharedDiff } from "../../protocol/generated";
import { redactionsAt } from "../../lib/share";
import { Marked } from "./Marked";

/** The payload's changed files, each patch folded. */
export function Diffs({ diffs, redactions }: { diffs: SharedDiff[]; redactions: Redaction[] }) {
  return (
    <section aria-label="Changed files" className="share-diffs">
      <h3>Changed files ({diffs.length})</h3>
      <ul className="share-diff-list">
        {diffs.map((d) => {
          const here = redactionsAt(redactions, { in: "diff", file: d.file });
          return (
            <li key={d.file} data-testid="share-diff">
              <details>
                <summary>
                  <span className="mono">
                    <Marked text={d.file} redactions={here} />
                  </span>{" "}
                  <span className="muted">{d.status}</span> <span className="add">+{d.additions}</span>{" "}
                  <span className="del">−{d.deletions}</span>
                  {here.length > 0 ? ` · ${here.length} redacted` : ""}
                </summary>
                {d.binary ? (
                  <p className="muted small">Binary file</p>
                ) : (
                  <pre className="share-code">
                    <Marked text={d.patch} redactions={here} />
                  </pre>
                )}
              </details>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
