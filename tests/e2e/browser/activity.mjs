#!/usr/bin/env node
// Browser-mode end-to-end test of the AI activity view: `inkstone-cli serve` + the
// scripted OpenAI-compatible TEST server `inkstone-fake-model` (never a model) +
// Debian's Chromium via playwright-core.
//
//   node tests/e2e/browser/activity.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// The scripted model proposes two changes in a drafting session; the person rejects
// the first with a reason and accepts the second in the AI panel's review. History →
// AI activity lists both, newest first, with the model and the reason; the decision
// filter narrows it to the rejection; the arrow keys and Enter open a row's diff; Export
// CSV downloads a file with the rows the filter shows. Screenshots in English and
// Chinese.
//
// Prints `browser-e2e-activity: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, startChild, startFakeModel, uiDistOrExit, waitFor } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 240_000;
const STEP_TIMEOUT_MS = 30_000;

const args = parseArgs(process.argv.slice(2), {
  script: "activity.mjs",
  usage: "node tests/e2e/browser/activity.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-activity-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("activity.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "activity.mjs", summary: "browser-e2e-activity", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-activity-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
const downloads = mkdtempSync(join(tmpdir(), "inkstone-browser-activity-downloads-"));
suite.onCleanup(() => rmSync(downloads, { recursive: true, force: true }));

const TITLE = "春晓";
const POEM = `# ${TITLE}\n\n春眠不觉晓，\n处处闻啼鸟。\n夜来风雨声，\n花落知多少。\n`;
const REASON = "不要改诗句，保持原样";

async function main() {
  let model;
  const fakeOk = await check("the fake model server starts", async () => {
    model = await startFakeModel(suite, fakeModelPath);
  });
  if (!fakeOk) return;
  const { url: modelUrl, script } = model;
  const toolCall = (id, name, input) => ({ type: "toolCalls", calls: [{ id, name, arguments: JSON.stringify(input) }] });

  let url;
  const serverOk = await check("inkstone-cli serve starts", async () => {
    const env = { ...process.env, RUST_BACKTRACE: "1" };
    delete env.INKSTONE_LLM_API_KEY;
    const serveArgs = ["--data-dir", dataDir, "serve", "--port", "0"];
    if (args.uiDir) serveArgs.push("--ui-dir", uiDist);
    url = await startChild(suite, "inkstone-cli serve", cliPath, serveArgs, env, /^INKSTONE_URL=(\S+)$/);
  });
  if (!serverOk) return;
  const origin = new URL(url).origin;
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  const call = (method, params) => api(origin, token, method, params);
  console.log(`# ${origin}; fake model at ${modelUrl}; screenshots in ${shots}`);

  await call("llmProfile.create", { name: "写作助手", baseUrl: modelUrl, model: "fake-model", contextWindow: 65536 });
  const project = await call("project.create", { title: TITLE, source: POEM });

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const pageErrors = [];
  let page;
  const open = async (locale) => {
    const context = await browser.newContext({ locale, colorScheme: "light", viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    await context.addInitScript(() => window.localStorage.setItem("inkstone.localModelOffer", "dismissed"));
    page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(url, { waitUntil: "commit" });
    await page.locator("[data-testid=project-item]").filter({ hasText: TITLE }).first().locator("button").first().click();
    await page.locator(`[data-testid=project-view][data-project='${project.id}']`).waitFor();
  };
  await open("en-US");
  const tid = (id) => page.locator(`[data-testid=${id}]`);
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
  suite.onFailure = shot;
  const mod = process.platform === "darwin" ? "Meta" : "Control";

  // The model proposes in a turn of the panel's session; the person opens its review.
  const propose = async (callId, find, replace) => {
    await script(toolCall(callId, "propose_source_patch", { summary: `${find} → ${replace}`, edits: [{ find, replace }] }), { type: "text", content: "提好了。" });
    await tid("composer-input").fill("改一改");
    await page.keyboard.press(`${mod}+Enter`);
    const proposals = await waitFor("the proposal", async () => {
      const listed = (await call("proposal.list", { projectId: project.id, status: "proposed" })).proposals;
      return listed.length === 1 ? listed : null;
    });
    const id = proposals[0].id;
    await tid("stop").waitFor({ state: "detached" });
    await page.locator(`[data-testid=proposal-chip][data-proposal='${id}']`).first().click();
    await page.locator(`[data-testid=proposal-review][data-proposal='${id}'][data-status=proposed]`).waitFor();
    return id;
  };

  let rejected;
  let accepted;
  await check("the person rejects one scripted proposal with a reason and accepts another in the AI panel", async () => {
    await page.keyboard.press(`${mod}+j`);
    await tid("composer-input").waitFor();
    rejected = await propose("call_1", "处处闻啼鸟", "处处闻鸟啼");
    await tid("review-reject-all").click();
    await tid("reject-reason").fill(REASON);
    await tid("reject-confirm").click();
    await page.locator(`[data-testid=proposal-review][data-proposal='${rejected}'][data-status=rejected]`).waitFor();
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });

    accepted = await propose("call_2", "花落知多少", "花落知几多");
    await tid("review-accept-all").click();
    await page.locator(`[data-testid=proposal-review][data-proposal='${accepted}'][data-status=accepted]`).waitFor();
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });
    const stored = (await call("aiActivity.list", { filter: {} })).rows;
    assert(stored.length === 2 && stored[0].proposalId === accepted && stored[1].proposalId === rejected, `rows: ${JSON.stringify(stored.map((r) => r.proposalId))}`);
    assert(stored[1].reason === REASON, `reason: ${stored[1].reason}`);
  });

  await check("History → AI activity lists both, newest first, with the model and the reason", async () => {
    await tid("tab-history").click();
    await tid("history-ai-activity").click();
    await tid("ai-activity-list").waitFor();
    await waitFor("two rows", async () => (await tid("ai-activity-row").count()) === 2);
    const decisions = await tid("row-decision").allTextContents();
    assert(JSON.stringify(decisions) === JSON.stringify(["Accepted", "Rejected"]), `decisions: ${decisions}`);
    assert((await tid("row-model").first().textContent()).includes("fake-model"), "the model id");
    assert((await tid("row-reason").first().textContent()).includes(REASON), "the reason");
    await shot("activity-01-list-en-light");
  });

  await check("the decision filter narrows the list to the rejection", async () => {
    await tid("filter-decision").selectOption("rejected");
    await waitFor("one row", async () => (await tid("ai-activity-row").count()) === 1);
    assert((await tid("row-decision").textContent()) === "Rejected", "the rejected row");
    await shot("activity-02-rejected-en-light");
    await tid("filter-decision").selectOption("");
    await waitFor("both rows again", async () => (await tid("ai-activity-row").count()) === 2);
  });

  await check("the arrow keys move the selection and Enter opens the row's diff; Escape closes it", async () => {
    await tid("ai-activity-list").focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    const diff = tid("ai-activity-diff");
    await diff.waitFor();
    const text = await diff.textContent();
    assert(text.includes("啼鸟") || text.includes("鸟啼"), `the rejected change's diff: ${text}`);
    assert((await tid("ai-activity-row").nth(1).locator("[data-testid=ai-activity-diff]").count()) === 1, "the diff opens under the second row");
    await shot("activity-03-diff-en-light");
    await page.keyboard.press("Escape");
    await diff.waitFor({ state: "detached" });
  });

  await check("Export CSV downloads the rows shown", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), tid("ai-activity-export").click()]);
    assert(/^ai-activity-\d{4}-\d{2}-\d{2}\.csv$/.test(download.suggestedFilename()), `file name: ${download.suggestedFilename()}`);
    const path = join(downloads, download.suggestedFilename());
    await download.saveAs(path);
    const lines = readFileSync(path, "utf8").trim().split(/\r?\n/);
    assert(lines.length === 3, `a header and two rows: ${lines.length}`);
    assert(lines.some((l) => l.includes(rejected) && l.includes(REASON)) && lines.some((l) => l.includes(accepted)), `csv: ${lines.join(" / ")}`);
  });

  await check("the view in Chinese: filtered to the rejection, a diff open", async () => {
    await page.context().close();
    await open("zh-CN");
    suite.onFailure = shot;
    await tid("tab-history").click();
    await tid("history-ai-activity").click();
    await waitFor("two rows", async () => (await tid("ai-activity-row").count()) === 2);
    assert(JSON.stringify(await tid("row-decision").allTextContents()) !== JSON.stringify(["Accepted", "Rejected"]), "the decisions are in Chinese");
    await shot("activity-04-list-zh-light");
    await tid("filter-decision").selectOption("rejected");
    await waitFor("one row", async () => (await tid("ai-activity-row").count()) === 1);
    await tid("ai-activity-list").focus();
    await page.keyboard.press("Enter");
    await tid("ai-activity-diff").waitFor();
    await shot("activity-05-diff-zh-light");
  });

  await check("no page errors", async () => {
    assert(pageErrors.length === 0, `page errors: ${pageErrors.join(" | ")}`);
  });
}

await suite.run(main);
