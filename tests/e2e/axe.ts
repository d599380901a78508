import type { Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

/** Serious and critical axe violations (WCAG 2.1 A/AA) of what is on screen, kept as JSON in `outDir`. */
export async function scan(page: Page, name: string, outDir: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, `axe-${name}.json`), JSON.stringify(bad, null, 2));
  return bad.map(
    (v) =>
      `${name}: ${v.id} (${v.impact}) ×${v.nodes.length}: ${v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(" "))
        .join(" | ")}`,
  );
}
