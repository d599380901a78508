import { describe, expect, it } from "vitest";
import { render } from "@testing-library/react";
import { MarkdownImpl } from "./MarkdownImpl";

/** A long answer: headings, paragraphs, lists and code, well over one chunk of blocks. */
function answer(parts: number): string {
  const out: string[] = [];
  for (let i = 0; i < parts; i++) {
    if (i % 10 === 0) out.push(`## Part ${i}`);
    else if (i % 10 === 5) out.push("```rust\nfn step() {}\n```");
    else if (i % 10 === 7) out.push(`- item ${i} with **bold**\n- and \`code_${i}\``);
    else out.push(`Sentence ${i} explains one more detail.`);
  }
  return out.join("\n\n");
}

describe("MarkdownImpl", () => {
  it.each([
    ["a short answer", 90],
    ["a long one", 400],
  ])("streams %s block by block and ends the turn without drawing the finished blocks again", (_, parts) => {
    const full = answer(parts);
    const { container, rerender } = render(<MarkdownImpl text={full.slice(0, 600)} streaming />);
    const first = container.querySelector("h2");
    expect(first?.textContent).toBe("Part 0");
    // It grows, a few characters at a time, the last block still being written.
    for (let at = 600; at < full.length; at += 397 + parts) rerender(<MarkdownImpl text={full.slice(0, at)} streaming />);
    rerender(<MarkdownImpl text={`${full}\n\nThe last **unfini`} streaming />);
    // The half-written bold shows as bold, not as raw markers.
    expect(container.querySelector(".md > :last-child strong")?.textContent).toBe("unfini");
    expect(container.querySelector("h2")).toBe(first);
    // The turn ends: the same text, finished. The blocks drawn while streaming are the same
    // elements (kept, not drawn again), and the whole answer is there once, in order.
    const end = `${full}\n\nThe last **unfinished** line.`;
    const paragraph = [...container.querySelectorAll("p")].find((p) => p.textContent === "Sentence 41 explains one more detail.");
    rerender(<MarkdownImpl text={end} streaming={false} />);
    expect(container.querySelector("h2")).toBe(first);
    expect([...container.querySelectorAll("p")].find((p) => p.textContent === "Sentence 41 explains one more detail.")).toBe(paragraph);
    expect([...container.querySelectorAll("h2")].map((h) => h.textContent)).toEqual(
      Array.from({ length: parts / 10 }, (_, k) => `Part ${k * 10}`),
    );
    expect(container.querySelectorAll("pre")).toHaveLength(parts / 10);
    expect(container.querySelector(".md > :last-child")?.textContent).toBe("The last unfinished line.");
    expect(container.textContent).not.toContain("**");
  });
});
