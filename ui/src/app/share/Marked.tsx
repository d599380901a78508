import { useMemo } from "react";
import type { Redaction, SharedMessage } from "../../protocol/generated";
import { HOME_PATH, markRedactions, placeLabel, redactionSummary } from "../../lib/share";

/** What was redacted in the payload, and where. */
export function Redactions({ redactions, messages }: { redactions: Redaction[]; messages: SharedMessage[] }) {
  return (
    <section className="share-redaction-box" aria-label="Redactions">
      <p className="share-summary" data-testid="share-redaction-count">
        {redactionSummary(redactions)}
      </p>
      {redactions.length > 0 ? (
        <ul className="share-redactions" data-testid="share-redactions">
          {redactions.map((r, i) => (
            <li key={i} data-testid="share-redaction" data-kind={r.kind}>
              <span className={`redaction-kind${r.kind === HOME_PATH ? " home" : ""}`}>{r.kind}</span> in{" "}
              {placeLabel(r.place, messages)}
              {r.hint && (
                <>
                  {" "}
                  <span className="muted mono">{r.hint}</span>
                </>
              )}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted small">Nothing was found to redact.</p>
      )}
    </section>
  );
}

/** Plain text (never Markdown), each replacement of `redactions` marked. */
export function Marked({ text, redactions }: { text: string; redactions: Redaction[] }) {
  const segments = useMemo(() => markRedactions(text, redactions), [text, redactions]);
  return (
    <>
      {segments.map((s, i) =>
        s.mark ? (
          <mark
            key={i}
            className={`redaction${s.mark.kind === HOME_PATH ? " home" : ""}`}
            title={s.mark.hint ? `${s.mark.kind}: ${s.mark.hint}` : s.mark.kind}
            data-kind={s.mark.kind}
          >
            {s.text}
          </mark>
        ) : (
          s.text
        ),
      )}
    </>
  );
}
