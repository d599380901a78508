import { defineConfig } from "@playwright/test";

// Debian's Chromium through Playwright (no browser download). One worker:
// each test runs its own `mia-code serve` + mock model, on a 2-core machine.
export default defineConfig({
  testDir: ".",
  testMatch: /.*\.spec\.ts/,
  outputDir: "../../target/e2e/results",
  timeout: 90_000,
  expect: { timeout: 15_000 },
  retries: 1,
  workers: 1,
  reporter: [["list"], ["html", { outputFolder: "../../target/e2e/report", open: "never" }]],
  use: {
    browserName: "chromium",
    viewport: { width: 1400, height: 900 },
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
      ],
    },
  },
});
