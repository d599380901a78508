import { describe, expect, it } from "vitest";
import { dropMentions, mentionText } from "./dropMentions";

const files = ["src/main.rs", "src/lib.rs", "README.md", "docs/README.md", "tests/lib.rs"];

describe("dropped files as mentions", () => {
  it("with paths (desktop): relative to the project, outside ones skipped with why", () => {
    const r = dropMentions(
      [
        { name: "main.rs", path: "/home/me/proj/src/main.rs" },
        { name: "x.txt", path: "/home/me/other/x.txt" },
        { name: "a.ts", path: "C:\\Users\\me\\proj\\a.ts" },
      ],
      [],
      "/home/me/proj/",
    );
    expect(r.mentions).toEqual(["src/main.rs"]);
    expect(r.skipped).toEqual(["x.txt is outside the project", "a.ts is outside the project"]);
    expect(dropMentions([{ name: "a.ts", path: "C:\\Users\\me\\proj\\src\\a.ts" }], [], "C:\\Users\\me\\proj").mentions).toEqual(["src/a.ts"]);
  });

  it("with names only (browser): a unique match in the project, else why not", () => {
    const r = dropMentions([{ name: "main.rs" }, { name: "README.md" }, { name: "nope.txt" }], files, null);
    expect(r.mentions).toEqual(["src/main.rs"]);
    expect(r.skipped[0]).toMatch(/^README\.md matches 2 files \(README\.md, docs\/README\.md\): type @ to pick one$/);
    expect(r.skipped[1]).toBe("nope.txt is not a file of the project");
    expect(mentionText(["src/main.rs", "a b.ts"])).toBe("@src/main.rs @a b.ts ");
    expect(mentionText([])).toBe("");
  });
});
