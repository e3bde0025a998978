#!/usr/bin/env node
// Browser-mode end-to-end test of search and Ask: `inkstone-cli serve` + the scripted
// OpenAI-compatible TEST server `inkstone-fake-model` (never a model) + Debian's
// Chromium via playwright-core.
//
//   node tests/e2e/browser/search.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// The sidebar's search box finds content (a two-character Chinese query that is in no
// title) and a hit opens its project with the match selected; Ask, a mode of the AI
// panel, answers from the person's writing: the answer's citation [1] opens its source
// (another project) at the quoted span, a citation naming no source is marked, the
// footer carries the engine's counts, the route is shown, and a repeated question is a
// cached answer that can be asked again fresh (a second model call, seen on the wire).
//
// Prints `browser-e2e-search: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, sleep, startChild, startFakeModel, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 180_000;
const STEP_TIMEOUT_MS = 15_000;

const args = parseArgs(process.argv.slice(2), {
  script: "search.mjs",
  usage: "node tests/e2e/browser/search.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-search-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("search.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "search.mjs", summary: "browser-e2e-search", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-search-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

const COFFEE = "# 手冲咖啡笔记\n\n第一次做手冲，水温九十度左右最好，研磨要均匀。\n\n滤杯先用热水冲一遍。\n";
const WEEKEND = "# 周末计划\n\n周六去爬山，周日在家读书。\n";
const QUOTE = "水温九十度左右最好";

async function main() {
  let model;
  const fakeOk = await check("the fake model server starts", async () => {
    model = await startFakeModel(suite, fakeModelPath);
  });
  if (!fakeOk) return;
  const { url: modelUrl, origin: modelOrigin, script } = model;
  const chatRequests = async () => (await (await fetch(`${modelOrigin}/_test/requests`)).json()).requests;

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

  const coffee = await call("project.create", { title: "手冲咖啡笔记", source: COFFEE });
  await call("version.create", { projectId: coffee.id, message: "first" });
  await call("project.create", { title: "周末计划", source: WEEKEND });
  await call("llmProfile.create", { name: "Fake model", baseUrl: modelUrl, model: "fake-model", contextWindow: 32768 });
  // The index follows the store on its own thread: wait until it has everything.
  for (let i = 0; ; i++) {
    const status = await call("search.status", {});
    if (status.pending === 0 && !status.building && status.documents >= 3) break;
    assert(i < 100, `the index did not catch up: ${JSON.stringify(status)}`);
    await sleep(100);
  }

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const context = await browser.newContext({ locale: "en-US", colorScheme: "light", viewport: { width: 1440, height: 900 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  await context.addInitScript(() => window.localStorage.setItem("inkstone.localModelOffer", "dismissed"));
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
  });
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
  suite.onFailure = shot;
  const tid = (id) => page.locator(`[data-testid=${id}]`);
  const mod = process.platform === "darwin" ? "Meta" : "Control";
  const selectionIs = (text) => page.waitForFunction((t) => window.getSelection()?.toString() === t, text);
  const openTitle = () => tid("title-input").inputValue();

  await check("the sidebar search finds content by a two-character Chinese query; a hit opens the project at the match", async () => {
    await page.goto(url, { waitUntil: "commit" });
    await tid("project-search").fill("水温");
    const hit = tid("search-hit").filter({ hasText: "手冲咖啡笔记" });
    await hit.first().waitFor();
    const snippet = await hit.first().locator("mark").first().innerText();
    assert(snippet === "水温", `the snippet marks the match: ${snippet}`);
    assert((await tid("search-hit").filter({ hasText: "周末计划" }).count()) === 0, "a project without the text is a hit");
    await shot("search-01-sidebar-hits-en-light");
    await hit.first().click();
    await tid("project-view").waitFor();
    await selectionIs("水温");
    const focused = await page.evaluate(() => document.activeElement?.getAttribute("data-testid"));
    assert(focused === "editor-content", `focus after opening the hit: ${focused}`);
  });

  await check("Ask in the AI panel: the route, a citation that opens its source (another project) at the span, a marked failed citation, the footer counts", async () => {
    await tid("project-search").fill("");
    await page.locator("[data-testid=project-item]").filter({ hasText: "周末计划" }).locator("button").first().click();
    await page.waitForFunction(() => !window.getSelection()?.toString().includes("水温"));
    await page.keyboard.press(`${mod}+j`);
    await tid("ai-mode-ask").click();
    await script({ type: "text", content: `你写过：「${QUOTE}」[1]，还要**研磨均匀**。另见 [7]。` });
    const before = (await chatRequests()).length;
    await tid("ask-question").fill("我写过的手冲水温是多少？");
    await page.keyboard.press("Enter");
    await tid("ask-result").waitFor();
    assert((await chatRequests()).length === before + 1, "one model call");
    const sent = JSON.stringify((await chatRequests()).at(-1));
    assert(sent.includes("《手冲咖啡笔记》") && sent.includes(QUOTE), `the sources were not sent: ${sent.slice(0, 300)}`);
    assert((await tid("ask-route").getAttribute("data-route")) === "material", "routed to the person's writing");
    assert((await tid("ask-route").innerText()).startsWith("From your writing"), await tid("ask-route").innerText());
    assert((await tid("ask-answer-text").locator("strong").innerText()) === "研磨均匀", "the answer is Markdown");
    assert((await tid("cite-failed").innerText()) === "[7]", "the citation naming no source is marked");
    assert((await tid("ask-check-failed").innerText()).includes("[7]"), "and said in words");
    // The footer is the engine's count: as many retrieved as sources listed, one cited.
    const footer = await tid("ask-footer").innerText();
    const n = await tid("ask-source").count();
    assert(footer === `Retrieved ${n}, cited 1`, `footer: ${footer} (sources listed: ${n})`);
    await shot("search-02-ask-answer-en-light");
    // Keyboard: the citation is a button reached with Tab and opened with Enter.
    await tid("cite").first().focus();
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector("[data-testid=project-view]") && window.getSelection()?.toString().length > 0);
    await selectionIs(QUOTE);
    assert((await openTitle()) === "手冲咖啡笔记", `the open project: ${await openTitle()}`);
  });

  await check("the same question again is a cached answer, marked; ask again fresh calls the model", async () => {
    if ((await tid("ai-mode-ask").count()) === 0) await page.keyboard.press(`${mod}+j`);
    await tid("ai-mode-ask").click();
    const before = (await chatRequests()).length;
    await tid("ask-question").fill("我写过的手冲水温是多少？");
    await tid("ask-submit").click();
    await tid("ask-cached").waitFor();
    assert((await chatRequests()).length === before, "a cached answer called the model");
    await script({ type: "text", content: `还是「${QUOTE}」[1]。` });
    await tid("ask-fresh").click();
    await tid("ask-cached").waitFor({ state: "detached" });
    await tid("ask-answer-text").filter({ hasText: "还是" }).waitFor();
    assert((await chatRequests()).length === before + 1, "asking again fresh called the model once");
    assert((await tid("cite-failed").count()) === 0, "no failed citation in the fresh answer");
    await shot("search-03-ask-fresh-en-light");
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[49]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
