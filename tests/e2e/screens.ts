import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page, TestInfo } from "@playwright/test";
import { repoRoot } from "./harness";

/** Saves a screenshot as a test artifact and under target/e2e/screens/ (kept by CI). */
export async function shot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const dir = join(repoRoot, "target/e2e/screens");
  mkdirSync(dir, { recursive: true });
  const file = `${name}.png`;
  await page.screenshot({ path: join(dir, file), fullPage: false });
  await testInfo.attach(name, { path: join(dir, file), contentType: "image/png" });
}
