#!/usr/bin/env node
// Browser-mode end-to-end test of "always allow": `inkstone-cli serve` + the scripted
// OpenAI-compatible TEST server `inkstone-fake-model` (never a model) + Debian's
// Chromium via playwright-core.
//
//   node tests/e2e/browser/permissions.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// - A permission prompt for a checkpoint shows the exact rule "always allow" would
//   store (tool, scope, pattern) and the earlier calls of the workspace it would have
//   matched, for the scope the person picks (another project's call counts only for
//   "every project"); it is answered "always allow" for this project with the keyboard.
// - The next checkpoint of the project runs without a prompt; Settings → Permissions
//   lists the rule with its scope, when it was made and that it allowed one call; the
//   person removes it there, and the next checkpoint asks again.
//
// Prints `browser-e2e-permissions: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, startChild, startFakeModel, uiDistOrExit, waitFor } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 240_000;
const STEP_TIMEOUT_MS = 30_000;

const args = parseArgs(process.argv.slice(2), {
  script: "permissions.mjs",
  usage: "node tests/e2e/browser/permissions.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-permissions-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("permissions.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "permissions.mjs", summary: "browser-e2e-permissions", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-permissions-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

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

  await call("llmProfile.create", { name: "Fake model", baseUrl: modelUrl, model: "fake-model", contextWindow: 65536 });
  // Another project of the workspace made a checkpoint earlier (asked, allowed once).
  const other = await call("project.create", { title: "夏夜", source: "# 夏夜\n\n蝉鸣。\n" });
  const otherSession = (await call("session.create", { projectId: other.id })).session.id;
  await script(toolCall("call_other", "create_checkpoint", { label: "夏夜之前" }), { type: "text", content: "存好了。" });
  const blocked = await call("session.submit", { sessionId: otherSession, text: "存个检查点" });
  assert(blocked.reason === "blocked_on_approval", `the other project's checkpoint: ${blocked.reason}`);
  await call("session.resolveApproval", { sessionId: otherSession, requestId: blocked.session.pendingApproval.requestId, approved: true });
  const project = await call("project.create", { title: "春晓", source: "# 春晓\n\n春眠不觉晓。\n" });

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const context = await browser.newContext({ locale: "en-US", colorScheme: "light", viewport: { width: 1440, height: 900 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  await context.addInitScript(() => window.localStorage.setItem("inkstone.localModelOffer", "dismissed"));
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
  suite.onFailure = async (name) => {
    // CI keeps the log, not the screenshots: say what the AI panel showed.
    const panel = await page.locator("[data-testid=ai-panel]").first().innerText({ timeout: 2_000 }).catch(() => "(no AI panel)");
    console.log(`#      AI panel: ${panel.replace(/\s+/g, " ").slice(0, 600)}`);
    await shot(name);
  };
  const tid = (id) => page.locator(`[data-testid=${id}]`);
  const mod = process.platform === "darwin" ? "Meta" : "Control";
  const waitIdle = () => tid("stop").waitFor({ state: "detached" });
  const send = async (text) => {
    await tid("composer-input").fill(text);
    await page.keyboard.press(`${mod}+Enter`);
  };
  const watchPrompts = () =>
    page.evaluate(() => {
      window.__approvalSeen = false;
      window.__approvalObserver?.disconnect();
      window.__approvalObserver = new MutationObserver(() => {
        if (document.querySelector("[data-testid=approval]")) window.__approvalSeen = true;
      });
      window.__approvalObserver.observe(document.body, { childList: true, subtree: true });
    });

  await page.goto(url, { waitUntil: "commit" });
  await page.locator(`[data-testid=project-item]`).filter({ hasText: "春晓" }).first().locator("button").first().click();
  await tid("project-view").waitFor();
  await page.keyboard.press(`${mod}+j`);
  await tid("composer-input").waitFor();

  await check("the prompt shows the rule always allow would store and the earlier calls it would have matched, per scope", async () => {
    await script(toolCall("call_1", "create_checkpoint", { label: "改结尾之前" }), { type: "text", content: "检查点已存好。" });
    await send("先存个检查点");
    const prompt = tid("approval");
    await prompt.waitFor();
    const always = prompt.locator("[data-testid=always-allow]");
    await always.waitFor();
    const rule = always.locator("[data-testid=always-rule]");
    const total = always.locator("[data-testid=always-total]");
    assert((await rule.textContent()) === "Rule it would store: always allow “Keep a checkpoint” — This drafting session — for any input.", `rule: ${await rule.textContent()}`);
    await waitFor("the session's matches", async () => (await total.getAttribute("data-total")) === "1");
    assert((await always.locator("[data-testid=always-match]").first().textContent()).includes("春晓"), "the match names the project");
    // Widening shows how wide: every project counts the other project's call too.
    await always.locator("[data-testid=always-scope-workspace]").check();
    await waitFor("the workspace's matches", async () => (await total.getAttribute("data-total")) === "2");
    assert((await total.textContent()) === "It would have matched 2 earlier calls in this workspace:", `total: ${await total.textContent()}`);
    const listed = await always.locator("[data-testid=always-match]").allTextContents();
    assert(listed.some((m) => m.includes("夏夜")) && listed.some((m) => m.includes("春晓")), `matches: ${listed.join(" | ")}`);
    assert((await rule.textContent()).includes("Every project in this workspace"), `rule: ${await rule.textContent()}`);
    await shot("permissions-01-prompt-workspace-en-light");
    // Keyboard: back to this project with the arrow keys, then the button.
    await always.locator("[data-testid=always-scope-workspace]").focus();
    await page.keyboard.press("ArrowUp");
    assert(await always.locator("[data-testid=always-scope-project]").isChecked(), "the arrow key did not move to 'This project'");
    await waitFor("the project's matches", async () => (await total.getAttribute("data-total")) === "1");
    await shot("permissions-02-prompt-project-en-light");
    await always.locator("[data-testid=allow-always]").focus();
    await page.keyboard.press("Enter");
    await tid("msg-assistant").filter({ hasText: "检查点已存好" }).waitFor();
    await waitIdle();
    const rules = (await call("allowRule.list", {})).rules;
    assert(rules.length === 1 && rules[0].scope === "project" && rules[0].tool === "create_checkpoint" && rules[0].allowedCount === 0, `rules: ${JSON.stringify(rules)}`);
  });

  await check("the next checkpoint of the project runs without a prompt and counts on the rule", async () => {
    await watchPrompts();
    await script(toolCall("call_2", "create_checkpoint", { label: "再存一个" }), { type: "text", content: "又存了一个。" });
    await send("再存一个");
    await tid("msg-assistant").filter({ hasText: "又存了一个" }).waitFor();
    await waitIdle();
    assert(!(await page.evaluate(() => window.__approvalSeen)), "a prompt was shown although the rule allows it");
    const rules = (await call("allowRule.list", {})).rules;
    assert(rules[0].allowedCount === 1 && typeof rules[0].lastAllowedAt === "string", `rules: ${JSON.stringify(rules)}`);
  });

  await check("Settings → Permissions lists the rule with its scope and use, and removes it; the tool asks again", async () => {
    await tid("open-settings").click();
    await tid("settings-permissions").click();
    const row = tid("permission-rule");
    await row.waitFor();
    assert((await row.getAttribute("data-scope")) === "project", "scope");
    const text = await row.textContent();
    assert(text.includes("create_checkpoint") && text.includes("This project") && text.includes("春晓") && text.includes("any input"), `row: ${text}`);
    assert((await row.locator("[data-testid=permission-used]").getAttribute("data-count")) === "1", "count");
    assert((await row.locator("[data-testid=permission-used]").textContent()).startsWith("once, last "), "last used");
    await shot("permissions-03-settings-en-light");
    await row.locator("[data-testid=permission-remove]").click();
    await tid("permissions-none").waitFor();
    assert((await call("allowRule.list", {})).rules.length === 0, "the rule is still stored");
    await shot("permissions-04-settings-removed-en-light");
    await page.keyboard.press("Escape");
    await tid("settings").waitFor({ state: "detached" });
    await script(toolCall("call_3", "create_checkpoint", { label: "第三个" }), { type: "text", content: "第三个存好了。" });
    await send("第三个");
    await tid("approval").waitFor();
    await tid("approval").locator("[data-testid=deny]").click();
    await tid("deny-confirm").click();
    await waitIdle();
  });

  await check("no page errors", async () => {
    assert(pageErrors.length === 0, `page errors: ${pageErrors.join(" | ")}`);
  });
}

suite.run(main);
