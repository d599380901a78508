import { describe, expect, it } from "vitest";
import { diffStatus, parseUnifiedDiff, unquote } from "./unifiedDiff";

// Real `git diff --no-ext-diff BASE TREE` output: a modified, a binary, a deleted file, a change
// without a final newline, and a new file whose quoted name has a space and a non-ASCII letter.
const GIT = [
  "diff --git a/a.txt b/a.txt",
  "index 4cb29ea..ea14db2 100644",
  "--- a/a.txt",
  "+++ b/a.txt",
  "@@ -1,3 +1,4 @@",
  " one",
  "-two",
  "+2",
  " three",
  "+four",
  "diff --git a/bin.dat b/bin.dat",
  "new file mode 100644",
  "index 0000000..bdc955b",
  "Binary files /dev/null and b/bin.dat differ",
  "diff --git a/d.txt b/d.txt",
  "deleted file mode 100644",
  "index 286c5f5..0000000",
  "--- a/d.txt",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-gone",
  "diff --git a/nonl.txt b/nonl.txt",
  "index c1b0730..e25f181 100644",
  "--- a/nonl.txt",
  "+++ b/nonl.txt",
  "@@ -1 +1 @@",
  "-x",
  "\\ No newline at end of file",
  "+y",
  "\\ No newline at end of file",
  'diff --git "a/sp \\303\\244.txt" "b/sp \\303\\244.txt"',
  "new file mode 100644",
  "index 0000000..3e75765",
  "--- /dev/null",
  '+++ "b/sp \\303\\244.txt"\t',
  "@@ -0,0 +1 @@",
  "+new",
  "",
].join("\n");

describe("parseUnifiedDiff", () => {
  const files = parseUnifiedDiff(GIT);

  it("finds every file with its path, status and counts", () => {
    expect(files.map((f) => [f.file, f.status, f.additions, f.deletions, f.binary === true])).toEqual([
      ["a.txt", "modified", 2, 1, false],
      ["bin.dat", "added", 0, 0, true],
      ["d.txt", "deleted", 0, 1, false],
      ["nonl.txt", "modified", 1, 1, false],
      ["sp ä.txt", "added", 1, 0, false],
    ]);
  });

  it("numbers the lines of a hunk on both sides", () => {
    const [h] = files[0]!.hunks;
    expect(h).toMatchObject({ startBefore: 1, linesBefore: 3, startAfter: 1, linesAfter: 4 });
    expect(h!.lines.map((l) => [l.type, l.content, l.oldLine ?? null, l.newLine ?? null])).toEqual([
      ["context", "one", 1, 1],
      ["delete", "two", 2, null],
      ["add", "2", null, 2],
      ["context", "three", 3, 3],
      ["add", "four", null, 4],
    ]);
    expect(files[0]).toMatchObject({ oldMode: "100644", newMode: "100644", oldId: "4cb29ea", newId: "ea14db2" });
  });

  it("handles empty sides, omitted counts and missing final newlines", () => {
    expect(files[2]!.hunks[0]).toMatchObject({ startBefore: 1, linesBefore: 1, startAfter: 0, linesAfter: 0 });
    expect(files[2]!.hunks[0]!.lines).toEqual([{ type: "delete", content: "gone", lineNumber: 1, oldLine: 1 }]);
    expect(files[3]!.hunks[0]!.lines.map((l) => [l.type, l.noNewline === true])).toEqual([
      ["delete", true],
      ["add", true],
    ]);
    expect(files[4]!.hunks[0]!.lines).toEqual([{ type: "add", content: "new", lineNumber: 1, newLine: 1 }]);
  });

  it("content that looks like a header stays in its hunk", () => {
    const text = ["--- a/x.md", "+++ b/x.md", "@@ -1,2 +1,2 @@", "--- a/old", "+++ b/new", " @@ keep"].join("\n");
    const [f] = parseUnifiedDiff(text);
    expect(parseUnifiedDiff(text)).toHaveLength(1);
    expect(f!.file).toBe("x.md");
    expect(f!.hunks[0]!.lines.map((l) => [l.type, l.content])).toEqual([
      ["delete", "-- a/old"],
      ["add", "++ b/new"],
      ["context", "@@ keep"],
    ]);
  });

  it("an empty diff has no files; a rename takes the new name", () => {
    expect(parseUnifiedDiff("")).toEqual([]);
    const [f] = parseUnifiedDiff(
      ["diff --git a/old.txt b/new.txt", "similarity index 100%", "rename from old.txt", "rename to new.txt", ""].join("\n"),
    );
    expect(f!.file).toBe("new.txt");
  });

  it("unquotes git's C-style paths and maps attempt statuses", () => {
    expect(unquote('"tab\\there"')).toBe("tab\there");
    expect(unquote("plain")).toBe("plain");
    expect(diffStatus("type_changed")).toBe("modified");
    expect(diffStatus("added")).toBe("added");
  });
});
