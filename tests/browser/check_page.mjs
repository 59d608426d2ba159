// Opens an HTML transcript (python -m <package>.trace show --format html) in Debian's headless
// chromium, driven by playwright-core, and prints what a reader sees as JSON on stdout: the
// counts of messages, tool calls, diff lines, terminal outputs, plan entries and permission
// decisions; each tool call's terminal output and exit; where each turn's end sits; file paths
// and titles as rendered (their text-transform); the state tables; who spoke; the times shown;
// whether a script or an event handler made it into the page; whether a closed tool call opens
// on a click; every request the page made besides its own file (there must be none); console
// errors; and a screenshot at argv[3].
//
//   node check_page.mjs PAGE.html SHOT.png
//
// The browser is $CHROMIUM (the test passes the one tests/support/find_browser.py finds), else
// /usr/bin/chromium; a missing browser is an error here (exit 2): the test decides on a skip.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { chromium } from "playwright-core";

const [page_path, shot] = process.argv.slice(2);
const executable = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(executable)) {
  process.stderr.write(`check_page: no browser at ${executable}: run make browser-deps\n`);
  process.exit(2);
}
const profile = mkdtempSync(path.join(tmpdir(), "acpgen-chromium-"));
// A fresh profile: playwright passes it to chromium as its --user-data-dir.
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: executable,
  headless: true,
  timeout: 60000,
  viewport: { width: 1280, height: 900 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const page = await browser.newPage();
  const url = pathToFileURL(path.resolve(page_path)).href;
  const requests = [];
  const errors = [];
  page.on("request", (request) => {
    if (request.url() !== url) requests.push(request.url());
  });
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(url, { waitUntil: "load", timeout: 60000 });
  const count = (selector) => page.locator(selector).count();
  const tool = page.locator("details.tool").first();
  const tools = await count("details.tool");
  let opens = null;
  if (tools > 0) {
    const before = await tool.evaluate((node) => node.open);
    await tool.locator("summary").click();
    opens = { before, after: await tool.evaluate((node) => node.open) };
  }
  const visibleToolBodyAfterClick = tools > 0 ? await tool.locator("pre").first().isVisible() : null;
  // Every collapsed section open, so that what is measured below is what a reader sees in it.
  await page.evaluate(() => document.querySelectorAll("details").forEach((node) => (node.open = true)));
  const result = {
    title: await page.title(),
    sessions: await count("section.session"),
    messages: await count(".message"),
    userMessages: await count(".message.user"),
    agentText: (await page.locator(".message.agent .text").allInnerTexts()).join(""),
    tools,
    toolStatuses: await page.locator("details.tool").evaluateAll((nodes) => nodes.map((n) => n.dataset.status)),
    diffAdded: await count("pre.diff span.add"),
    diffRemoved: await count("pre.diff span.del"),
    terminalText: (await page.locator("pre.terminal").allTextContents()).join("\n"),
    planEntries: await count("ul.plan li"),
    permissions: (await page.locator(".permission .decision").allInnerTexts()),
    toolTerminals: await page.locator("details.tool").evaluateAll((nodes) =>
      nodes.map((n) => ({
        title: n.querySelector("summary .title")?.textContent ?? null,
        terminal: Array.from(n.querySelectorAll("pre.terminal"), (pre) => pre.textContent),
        exit: Array.from(n.querySelectorAll(".label .exit"), (e) => e.textContent),
      })),
    ),
    turnEnds: await page.locator(".turn-end").evaluateAll((nodes) =>
      nodes.map((n) => ({
        reason: n.dataset.stopReason,
        text: n.textContent,
        insideMessage: n.closest(".message") !== null,
        after: n.previousElementSibling?.dataset.kind ?? n.previousElementSibling?.className ?? null,
      })),
    ),
    paths: await page.locator(".path, .title").evaluateAll((nodes) =>
      nodes.map((n) => ({
        text: n.textContent,
        shown: n.innerText,
        transform: getComputedStyle(n).textTransform,
      })),
    ),
    tables: await page.locator(".record").evaluateAll((nodes) =>
      nodes.map((n) => ({
        slot: n.dataset.slot,
        tables: n.querySelectorAll("table").length,
        rows: n.querySelectorAll("table.rows > tbody > tr").length,
        current: Array.from(n.querySelectorAll("tr.current > td:first-child"), (td) => td.textContent),
        json: n.querySelectorAll("pre").length,
      })),
    ),
    peers: await page.locator(".connection .peer").evaluateAll((nodes) =>
      nodes.map((n) => [n.dataset.side, n.querySelector("b").textContent]),
    ),
    times: await page.locator("time.at").evaluateAll((nodes) =>
      nodes.map((n) => [n.textContent, n.getAttribute("datetime")]),
    ),
    scripts: await count("script"),
    handlers: await page.evaluate(
      () => Array.from(document.querySelectorAll("*")).filter((n) => n.getAttributeNames().some((a) => a.startsWith("on"))).length,
    ),
    pwned: await page.evaluate(() => window.__pwned ?? null),
    userText: (await page.locator(".message.user .text").allTextContents()).join("\n"),
    opens,
    visibleToolBodyAfterClick,
    requests,
    errors,
  };
  await page.screenshot({ path: shot, fullPage: true });
  process.stdout.write(JSON.stringify(result) + "\n");
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
