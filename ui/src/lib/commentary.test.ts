import { describe, expect, it } from "vitest";
import { splitCommentary } from "./commentary";

describe("splitCommentary", () => {
  it("takes 🧠/🌸 lines out of the text like the runtime", () => {
    const { body, notes } = splitCommentary("Done.\n🧠 Mia: one module.\n- 🌸 **Miette**: a warm hello\n🧠 Mia:\nend");
    expect(body).toBe("Done.\n🧠 Mia:\nend");
    expect(notes).toEqual([
      { perspective: "mia", text: "one module." },
      { perspective: "miette", text: "a warm hello" },
    ]);
  });
  it("leaves other text alone", () => {
    expect(splitCommentary("🧠 brain emoji in prose")).toEqual({ body: "🧠 brain emoji in prose", notes: [] });
  });
});
