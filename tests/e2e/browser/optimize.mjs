#!/usr/bin/env node
// Browser-mode end-to-end test of one-click optimize: `inkstone-cli serve` + the
// scripted OpenAI-compatible TEST server `inkstone-fake-model` (never a model) +
// Debian's Chromium via playwright-core.
//
//   node tests/e2e/browser/optimize.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// The "AI Optimize" button (and Ctrl/Cmd+Shift+O) → the dialog (platforms, goal,
// intensity, constraints) → progress by stage → the review (a tab per target, the
// diff, the fit report before → after) → apply two platforms and the source → the
// drafts have new revisions and the history shows the new version. Then a run whose
// server is killed mid-run (SIGKILL) is offered for resuming after a restart, and
// resumes to its review asking the model only for the step it had not finished; and a
// run whose model server refuses a step is offered for resuming in the same dialog;
// and a finished package left with "Decide later" is listed when the dialog opens
// after a page reload, and reopens in its review.
//
// Prints `browser-e2e-optimize: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, killGroup, launchChromium, parseArgs, playwrightChromium, startChild, startFakeModel, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 180_000;
/** Three Latin letters in a row: an English word where Chinese was expected. */
const ENGLISH = /[A-Za-z]{3,}/;
const STEP_TIMEOUT_MS = 15_000;

const args = parseArgs(process.argv.slice(2), {
  script: "optimize.mjs",
  usage: "node tests/e2e/browser/optimize.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-optimize-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("optimize.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "optimize.mjs", summary: "browser-e2e-optimize", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-optimize-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

const SOURCE = ["# 周报写短的办法", "", "很多人的周报写得很长。", "", "第一，先写结论。", "", "第二，只写变化。", ""].join("\n");
const NEW_SOURCE = ["# 周报写短的办法", "", "周报越长，越没人读。", "", "第一，先写结论。", "", "第二，只写变化。", "", "你的周报有多长？欢迎留言。", ""].join("\n");
const text = (value) => ({ type: "text", content: JSON.stringify(value) });

async function main() {
  let model;
  const fakeOk = await check("the fake model server starts", async () => {
    model = await startFakeModel(suite, fakeModelPath);
  });
  if (!fakeOk) return;
  const { url: modelUrl, origin: modelOrigin, script } = model;

  let url;
  const serve = { child: null };
  const startServe = async () => {
    const env = { ...process.env, RUST_BACKTRACE: "1" };
    delete env.INKSTONE_LLM_API_KEY;
    const serveArgs = ["--data-dir", dataDir, "serve", "--port", "0"];
    if (args.uiDir) serveArgs.push("--ui-dir", uiDist);
    url = await startChild(suite, "inkstone-cli serve", cliPath, serveArgs, env, /^INKSTONE_URL=(\S+)$/, serve);
  };
  const serverOk = await check("inkstone-cli serve starts", startServe);
  if (!serverOk) return;
  let origin = new URL(url).origin;
  let token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  const call = (method, params) => api(origin, token, method, params);
  console.log(`# ${origin}; fake model at ${modelUrl}; screenshots in ${shots}`);

  await call("llmProfile.create", { name: "Fake model", baseUrl: modelUrl, model: "fake-model", contextWindow: 32768 });
  const project = await call("project.create", { title: "周报", source: SOURCE, platforms: ["zhihu", "x"] });
  await call("version.create", { projectId: project.id, message: "first draft" });
  for (const platform of ["zhihu", "x"]) await call("platformDraft.save", { projectId: project.id, platform });

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const context = await browser.newContext({ locale: "zh-CN", colorScheme: "light", viewport: { width: 1440, height: 900 } });
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

  await check("the AI 优化 button and Ctrl/Cmd+Shift+O open the dialog", async () => {
    await page.goto(url, { waitUntil: "commit" });
    await page.locator(`[data-testid=project-item]`).filter({ hasText: "周报" }).locator("button").first().click();
    await tid("project-view").waitFor();
    const button = tid("optimize-open");
    assert((await button.innerText()).includes("AI 优化"), `button: ${await button.innerText()}`);
    await page.keyboard.press(`${mod}+Shift+O`);
    await tid("optimize-dialog").waitFor();
    await page.keyboard.press("Escape");
    await tid("optimize-dialog").waitFor({ state: "detached" });
    await button.click();
    await tid("optimize-dialog").waitFor();
    assert(await tid("optimize-platform-zhihu").isChecked(), "the project's platforms are chosen");
    assert(await tid("optimize-platform-x").isChecked(), "the project's platforms are chosen");
    assert(!(await tid("optimize-platform-wechat").isChecked()), "other platforms are not");
    await tid("optimize-goal").selectOption("completion");
    await tid("optimize-intensity-conservative").check();
    await shot("optimize-01-dialog-zh");
  });

  await check("progress by stage, then the review with a tab per target and the fit report", async () => {
    await script(
      { ...text({ summary: "加强开头，结尾提问。", changes: ["更有力的第一句", "结尾提问"], platforms: [{ platform: "zhihu", plan: "加小标题" }, { platform: "x", plan: "压成两条" }] }), delayMs: 600 },
      text({ source: NEW_SOURCE, titles: ["周报写短的三个办法"], summary: "加强了开头，并在结尾加了一个问题。" }),
      text({ text: "## 周报写短的办法\n\n周报越长，越没人读。\n\n第一，先写结论。\n\n你的周报有多长？欢迎留言。\n", summary: "加了小标题和结尾提问。" }),
      text({ text: "周报越长，越没人读。\n\n---\n\n先写结论，只写变化。你的周报有多长？", summary: "把帖子压成两条。" }),
    );
    await tid("optimize-start").click();
    await tid("optimize-progress").waitFor();
    await tid("optimize-stages").locator("li").first().waitFor();
    await shot("optimize-02-progress-zh");
    const stagesText = await tid("optimize-stages").innerText();
    assert(!ENGLISH.test(stagesText), `the stages are in Chinese: ${stagesText}`);
    await tid("optimize-review").waitFor({ timeout: 30_000 });
    for (const key of ["source", "zhihu", "x"]) await tid(`optimize-tab-${key}`).waitFor();
    await tid("optimize-tab-zhihu").click();
    const target = tid("optimize-target-zhihu");
    await target.waitFor();
    assert((await target.locator("[data-testid=optimize-summary]").innerText()).includes("小标题"), "the platform summary is shown");
    const scores = await target.locator("[data-testid=fit-scores]").innerText();
    assert(/\d+ → \d+/.test(scores), `fit before → after: ${scores}`);
    await target.locator(".cm-editor").first().waitFor();
    // Everything the app words itself is in Chinese: the fit table (but for profile
    // ids such as zhihu@draft-v1), the findings and the flags. The rule's profile
    // words stay as the tooltip.
    const fitText = (await target.locator("[data-testid=fit-report] table").innerText()).replace(/\S+@[\w.-]+/g, "");
    assert(!ENGLISH.test(fitText), `the fit table is in Chinese: ${fitText}`);
    assert((await target.locator("[data-testid=fit-report] tr[data-check=title_length]").innerText()).includes("标题 2 字"), "the title point is worded in Chinese");
    for (const list of ["optimize-risks", "optimize-flags"]) {
      const items = target.locator(`[data-testid=${list}]`);
      if ((await items.count()) === 0) continue;
      const text = await items.innerText();
      assert(!ENGLISH.test(text), `${list} is in Chinese: ${text}`);
    }
    assert((await target.locator("[data-testid=optimize-risks]").innerText()).includes("标题为 2 字"), "the title finding is worded in Chinese");
    await shot("optimize-03-review-zh");
  });

  await check("apply two platforms and the source: new draft revisions, and history shows the new version", async () => {
    await tid("optimize-tab-source").click();
    assert(await tid("optimize-select-source").isChecked(), "the source is selected");
    await tid("optimize-apply").click();
    await tid("optimize-review").waitFor({ state: "detached", timeout: 20_000 });
    const zhihu = await call("platformDraft.get", { projectId: project.id, platform: "zhihu" });
    const x = await call("platformDraft.get", { projectId: project.id, platform: "x" });
    assert(zhihu.revision === 2 && x.revision === 2, `draft revisions ${zhihu.revision}, ${x.revision}`);
    assert(zhihu.content.markdown.includes("周报越长，越没人读"), "the zhihu draft took the change");
    const p = await call("project.get", { projectId: project.id });
    assert(p.head === 2 && p.source === NEW_SOURCE, `head ${p.head}`);
    const runs = await call("optimize.list", { projectId: project.id });
    assert(runs.runs[0].status === "applied", `run status ${runs.runs[0].status}`);
    // The history tab lists version 2.
    await page.keyboard.press(`${mod}+3`);
    await page.locator("[data-testid=version-item][data-number='2']").waitFor({ timeout: 10_000 });
    assert((await tid("head").innerText()).includes("2"), `status bar: ${await tid("head").innerText()}`);
    await shot("optimize-04-applied-zh");
  });

  await check("a run killed mid-run is offered after a restart and resumes to its review", async () => {
    const chatCalls = async () => (await (await fetch(`${modelOrigin}/_test/requests`)).json()).requests.length;
    const before = await chatCalls();
    await script(
      text({ summary: "再加一个例子。", changes: ["加一个例子"], platforms: [{ platform: "zhihu", plan: "加例子" }, { platform: "x", plan: "两条" }] }),
      text({ source: `${NEW_SOURCE}\n比如：本周上线了搜索。\n`, titles: ["周报只写三件事"], summary: "加了一个例子。" }),
      text({ text: "## 周报写短的办法\n\n周报越长，越没人读。\n\n比如：本周上线了搜索。\n", summary: "加了一个例子。" }),
      { ...text({ text: "never sent", summary: "never sent" }), delayMs: 120_000 },
    );
    await page.keyboard.press(`${mod}+Shift+O`);
    await tid("optimize-dialog").waitFor();
    await tid("optimize-start").click();
    await tid("optimize-stages").locator("li", { hasText: "(x)" }).waitFor({ timeout: 30_000 });
    while ((await chatCalls()) < before + 4) await new Promise((r) => setTimeout(r, 50));
    // Past the group commit (1 s), then the app dies.
    await new Promise((r) => setTimeout(r, 2_500));
    const mark = pageErrors.length;
    killGroup(serve.child, "SIGKILL");
    await new Promise((r) => serve.child.once("exit", r));

    await startServe();
    origin = new URL(url).origin;
    token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
    await page.goto(url, { waitUntil: "commit" });
    await page.locator(`[data-testid=project-item]`).filter({ hasText: "周报" }).locator("button").first().click();
    await tid("project-view").waitFor();
    // The old page saw its server die: its stream broke off. Nothing else is an error.
    const during = pageErrors.splice(mark);
    assert(during.every((e) => /ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_CONNECTION_REFUSED/.test(e)), `errors around the kill: ${during.join(" | ")}`);
    await page.keyboard.press(`${mod}+Shift+O`);
    const notice = tid("optimize-interrupted");
    await notice.waitFor();
    const said = await notice.innerText();
    assert(said.includes("中断") && said.includes("(X)"), `the notice names the stage: ${said}`);
    await shot("optimize-05-interrupted-zh");
    await script(text({ text: "周报越长，越没人读。\n\n---\n\n比如：本周上线了搜索。", summary: "压成两条，加了例子。" }));
    await tid("optimize-resume").click();
    await tid("optimize-review").waitFor({ timeout: 30_000 });
    for (const key of ["source", "zhihu", "x"]) await tid(`optimize-tab-${key}`).waitFor();
    assert((await chatCalls()) === before + 5, `the model was asked ${(await chatCalls()) - before} times in all; only the x step again`);
    const runs = await call("optimize.list", { projectId: project.id });
    assert(runs.runs[0].status === "ready" && runs.runs[0].titles[0] === "周报只写三件事", `the resumed run: ${runs.runs[0].status} ${runs.runs[0].titles}`);
    await shot("optimize-06-resumed-zh");
    await tid("optimize-reject-all").click();
    await tid("optimize-review").waitFor({ state: "detached", timeout: 20_000 });
  });

  await check("a run the model server failed keeps its finished steps and resumes from the dialog", async () => {
    const chatCalls = async () => (await (await fetch(`${modelOrigin}/_test/requests`)).json()).requests.length;
    const before = await chatCalls();
    await script(
      text({ summary: "再短一点。", changes: ["更短"], platforms: [{ platform: "zhihu", plan: "更短" }, { platform: "x", plan: "两条" }] }),
      text({ source: `${NEW_SOURCE}\n只写三件事。\n`, titles: ["周报只写三件事"], summary: "更短了。" }),
      text({ text: "## 周报写短的办法\n\n周报越长，越没人读。\n", summary: "更短了。" }),
      { type: "error", status: 400, body: { error: { message: "Requested tokens (4152) exceed context window of 4096", type: "invalid_request_error" } } },
    );
    await page.keyboard.press(`${mod}+Shift+O`);
    await tid("optimize-dialog").waitFor();
    await tid("optimize-start").click();
    // The failure: its error, and the offer to resume in the same dialog.
    await page.locator("[data-testid=optimize-dialog] [data-testid=error-banner]").waitFor({ timeout: 30_000 });
    const notice = tid("optimize-interrupted");
    await notice.waitFor();
    const said = await notice.innerText();
    assert(said.includes("失败") && said.includes("(X)") && said.includes("保留"), `the notice names the failure and the stage: ${said}`);
    assert(!ENGLISH.test(said.replace(/\(X\)/, "")), `the notice is Chinese: ${said}`);
    await shot("optimize-07-failed-resumable-zh");
    assert((await chatCalls()) === before + 4, `the model was asked ${(await chatCalls()) - before} times before the failure`);
    await script(text({ text: "周报越长，越没人读。\n\n---\n\n只写三件事。", summary: "压成两条。" }));
    await tid("optimize-resume").click();
    await tid("optimize-review").waitFor({ timeout: 30_000 });
    assert((await chatCalls()) === before + 5, `the model was asked ${(await chatCalls()) - before} times in all; only the failed x step again`);
    const runs = await call("optimize.list", { projectId: project.id });
    assert(runs.runs[0].status === "ready" && runs.runs[0].resumable === false, `the resumed run: ${runs.runs[0].status}`);
    await tid("optimize-reject-all").click();
    await tid("optimize-review").waitFor({ state: "detached", timeout: 20_000 });
  });

  await check("a package left with “Decide later” is still reachable from the dialog after a reload", async () => {
    await script(
      text({ summary: "结尾再加一句。", changes: ["结尾加一句"], platforms: [{ platform: "zhihu", plan: "结尾" }, { platform: "x", plan: "两条" }] }),
      text({ source: `${NEW_SOURCE}\n下周见。\n`, titles: ["周报写短的两个办法"], summary: "结尾加了一句。" }),
      text({ text: "## 周报写短的办法\n\n周报越长，越没人读。\n\n下周见。\n", summary: "结尾加了一句。" }),
      text({ text: "周报越长，越没人读。\n\n---\n\n下周见。", summary: "两条。" }),
    );
    await page.keyboard.press(`${mod}+Shift+O`);
    await tid("optimize-dialog").waitFor();
    assert((await tid("optimize-unreviewed").count()) === 0, "nothing waits for review yet");
    await tid("optimize-start").click();
    await tid("optimize-review").waitFor({ timeout: 30_000 });
    await tid("optimize-later").click();
    await tid("optimize-review").waitFor({ state: "detached" });
    const [left] = (await call("optimize.list", { projectId: project.id })).runs;
    assert(left.status === "ready", `the run is stored as ready: ${left.status}`);
    await page.reload({ waitUntil: "commit" });
    await page.locator(`[data-testid=project-item]`).filter({ hasText: "周报" }).locator("button").first().click();
    await tid("project-view").waitFor();
    await page.keyboard.press(`${mod}+Shift+O`);
    const listed = tid("optimize-unreviewed");
    await listed.waitFor();
    const said = await listed.innerText();
    assert(said.includes("等待你审阅") && said.includes("知乎"), `the dialog lists the package: ${said}`);
    assert((await tid("optimize-unreviewed-run").getAttribute("data-run")) === left.id, "the listed run is the one left for later");
    await shot("optimize-08-unreviewed-zh");
    await tid("optimize-reopen").click();
    await tid("optimize-review").waitFor();
    for (const key of ["source", "zhihu", "x"]) await tid(`optimize-tab-${key}`).waitFor();
    assert((await tid("optimize-title").innerText()).includes("周报写短的两个办法"), "the title candidates are back");
    await tid("optimize-reject-all").click();
    await tid("optimize-review").waitFor({ state: "detached", timeout: 20_000 });
    await page.keyboard.press(`${mod}+Shift+O`);
    await tid("optimize-dialog").waitFor();
    await new Promise((r) => setTimeout(r, 500));
    assert((await tid("optimize-unreviewed").count()) === 0, "a decided package is no longer listed");
    await page.keyboard.press("Escape");
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[49]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
