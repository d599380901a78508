import type { CommandSegment } from "../../protocol/generated";

/** The parsed pieces of a shell command, one per line, each with its decision. */
export function SegmentList({ segments }: { segments: CommandSegment[] }) {
  return (
    <ul className="mia-perm-segments" aria-label="Command segments">
      {segments.map((seg, i) => {
        const dangerous = seg.dangerous === true;
        return (
          <li
            // Segments have no id; the same command may appear twice, so the position is part of the key.
            key={`${i}:${seg.command}`}
            className={`mia-perm-segment${dangerous ? " mia-perm-segment-danger" : ""}`}
            data-testid="permission-segment"
            data-dangerous={dangerous ? "true" : "false"}
          >
            <code className="mia-perm-segment-cmd">{seg.command}</code>
            <span className={`mia-perm-decision mia-perm-decision-${decisionTone(seg.decision)}`}>
              {seg.decision}
            </span>
            {dangerous && <span className="mia-perm-danger-tag">dangerous</span>}
            {seg.reason && <span className="mia-perm-segment-reason">{seg.reason}</span>}
          </li>
        );
      })}
    </ul>
  );
}

function decisionTone(decision: string): "allow" | "deny" | "ask" | "other" {
  switch (decision) {
    case "allow":
    case "deny":
    case "ask":
      return decision;
    default:
      return "other";
  }
}
