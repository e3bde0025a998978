#!/usr/bin/env node
// Browser-mode end-to-end test of the AI panel (Vibe Drafting): `inkstone-cli serve` +
// the scripted OpenAI-compatible TEST server `inkstone-fake-model` (never a model) +
// Debian's Chromium via playwright-core.
//
//   node tests/e2e/browser/drafting.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// The model is scripted turn by turn through the fake server's test routes
// (POST /_test/script appends replies, GET /_test/requests reads what Inkstone sent), so
// every check can also look at the wire. Walks a multi-turn revision as a person would
// (tests/e2e/browser/drafting-review.mjs walks the other decisions):
// no model yet → the setup offer; a task scoped to a selection in plan mode → the plan
// card → approve; a question; proposals → review in the merge view → accept two hunks,
// reject one with a reason → the reason reaches the next model request; a hand edit
// makes the remaining proposal stale → rebase → accept; apply_proposal asks with the
// exact diff → allow once; Stop (Esc) while streaming; a reload mid-turn rebuilds the
// same timeline; a 200-message session streams 2,000 tokens (the longest main-thread
// task is printed as `# measured:`). Screenshots in both languages and themes.
//
// Prints `browser-e2e-drafting: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, sleep, startChild, startFakeModel, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 300_000;
const STEP_TIMEOUT_MS = 15_000;

const args = parseArgs(process.argv.slice(2), {
  script: "drafting.mjs",
  usage: "node tests/e2e/browser/drafting.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-drafting-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("drafting.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "drafting.mjs", summary: "browser-e2e-drafting", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-drafting-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

// The article the session revises: three paragraphs, so a patch has three hunks, and a
// fourth that a second proposal changes.
const SOURCE = [
  "# 春天的写作计划",
  "",
  "春天是最适合开始写作的季节。每天早上写三百字，坚持一个月。",
  "",
  "第一步：准备一个安静的角落，关掉手机通知。",
  "",
  "第二步：先写提纲，再写正文，不要边写边改。",
  "",
  "第三步：每周回顾一次，把写得好的段落整理出来。",
  "",
  "结尾：写作是一种习惯，而不是灵感。",
  "",
].join("\n");

async function main() {
  let model;
  const fakeOk = await check("the fake model server starts", async () => {
    model = await startFakeModel(suite, fakeModelPath);
  });
  if (!fakeOk) return;
  const { url: modelUrl, origin: modelOrigin, script } = model;
  const chatRequests = async () => (await (await fetch(`${modelOrigin}/_test/requests`)).json()).requests;
  const lastRequestText = async () => JSON.stringify((await chatRequests()).at(-1) ?? {});
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

  const project = await call("project.create", { title: "春天的写作计划", source: SOURCE, platforms: ["wechat"] });
  await call("version.create", { projectId: project.id, message: "first draft" });

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const context = await browser.newContext({ locale: "en-US", colorScheme: "light", viewport: { width: 1440, height: 900 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  // The first-run offer of a local model server is not what this test is about.
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
  const timelineText = () => page.locator("[data-testid=timeline] [role=list]").innerText();
  const openProject = async () => {
    await page.locator(`[data-testid=project-item]`).filter({ hasText: "春天的写作计划" }).locator("button").first().click();
    await tid("project-view").waitFor();
  };
  const waitIdle = () => tid("stop").waitFor({ state: "detached" });

  await check("with no model set up, the AI panel offers to set one up instead of an error", async () => {
    await page.goto(url, { waitUntil: "commit" });
    await openProject();
    // An opened project is ready to write in: the cursor is in its text.
    await page.waitForFunction(() => document.activeElement?.closest("[data-testid=editor-content]") !== null, null, { timeout: 5000 });
    await page.keyboard.press(`${mod}+j`);
    await tid("ai-setup").waitFor();
    assert((await tid("error-banner").count()) === 0, "an error is shown");
    await page.waitForFunction(() => !document.querySelector("[data-testid=ai-setup] [role=status]"), null, { timeout: 10_000 });
    await shot("drafting-00-setup-en-light");
    await tid("ai-setup-open").click();
    await tid("settings-models").waitFor();
    await page.keyboard.press("Escape");
  });

  await call("llmProfile.create", { name: "Fake model", baseUrl: modelUrl, model: "fake-model", contextWindow: 32768, inputPricePerMtok: 1, outputPricePerMtok: 2 });

  await check("once a model exists the panel offers a composer; Ctrl+J toggles the panel", async () => {
    await page.keyboard.press(`${mod}+j`);
    await page.keyboard.press(`${mod}+j`);
    await tid("tab-ai").and(page.locator("[aria-selected=true]")).waitFor();
    await tid("composer-input").waitFor();
    await page.keyboard.press(`${mod}+j`);
    await tid("tab-history").and(page.locator("[aria-selected=true]")).waitFor();
    // Focus follows the panel: back in the editor, then in the composer, so a task typed
    // right after Ctrl+J goes to the assistant, not into the article.
    await page.waitForFunction(() => document.activeElement?.closest("[data-testid=editor-content]") !== null, null, { timeout: 5000 });
    const before = (await call("project.get", { projectId: project.id })).source;
    await page.keyboard.press(`${mod}+j`);
    await tid("composer-input").waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute("data-testid") === "composer-input", null, { timeout: 5000 });
    await page.keyboard.type("把开头改短");
    assert((await tid("composer-input").inputValue()) === "把开头改短", "the typed task is not in the composer");
    assert(!(await tid("editor-content").textContent()).includes("把开头改短"), "the typed task went into the article");
    await tid("composer-input").fill("");
    assert((await call("project.get", { projectId: project.id })).source === before, "the article changed");
  });

  let sessionId;
  await check("a task with text selected goes scoped to the selection (chip, range + text on the wire), in plan mode", async () => {
    // Select the paragraph of step one.
    await page.locator(".doc-source .cm-line", { hasText: "第一步" }).click();
    await page.keyboard.press("Home");
    await page.keyboard.press("Shift+End");
    await tid("scope-chip").filter({ hasText: "第一步：准备一个安静的角落" }).waitFor();
    await tid("plan-toggle").click();
    await script(toolCall("call_plan", "exit_plan_mode", { plan: "1. 收紧三个步骤的措辞\n2. 给结尾加一句行动号召\n3. 不改标题" }));
    await tid("composer-input").click();
    // An IME composition: Enter inside it does not send.
    const cdp = await context.newCDPSession(page);
    await cdp.send("Input.imeSetComposition", { selectionStart: 2, selectionEnd: 2, text: "精简" });
    await page.keyboard.press("Enter");
    await sleep(300);
    assert((await chatRequests()).length === 0, "Enter in a composition sent the task");
    assert((await tid("msg-user").count()) === 0, "Enter in a composition sent the task");
    await cdp.send("Input.insertText", { text: "" });
    await tid("composer-input").fill("");
    await page.keyboard.type("精简这几步的措辞");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("保持口吻");
    await page.waitForFunction(() => document.querySelector("[data-testid=composer-input]")?.value === "精简这几步的措辞\n保持口吻", null, { timeout: 5000 });
    await page.keyboard.press("Enter");
    await tid("plan-card").waitFor();
    const sent = await lastRequestText();
    assert(sent.includes("精简这几步的措辞\\n保持口吻"), "the task is not in the request");
    // The selection travels typed: its range and text in the model's working set, the
    // user message is the task alone.
    const source = (await call("project.get", { projectId: project.id })).source;
    const from = source.indexOf("第一步：准备一个安静的角落，关掉手机通知。");
    const range = `UTF-16 offsets ${from}–${from + "第一步：准备一个安静的角落，关掉手机通知。".length} when it was sent):\\n第一步：准备一个安静的角落，关掉手机通知。\\n`;
    assert(sent.includes(range), `the selection is not in the working set: ${sent.slice(0, 600)}`);
    assert(!sent.includes("<selection"), "the selection went as a block in the message");
    const logged = (await call("session.events", { sessionId: (await call("session.list", { projectId: project.id })).sessions[0].id })).events.find((e) => e.kind === "user_message");
    const { selection } = logged.payload;
    assert(selection && selection.from === from && selection.to === from + 21 && selection.text === "第一步：准备一个安静的角落，关掉手机通知。", `logged: ${JSON.stringify(logged.payload)}`);
    assert((await tid("plan-badge").count()) === 1, "plan mode is not shown");
    assert((await tid("msg-scope").textContent()).includes("第一步"), "the timeline does not show the scope");
    sessionId = (await call("session.list", { projectId: project.id })).sessions[0].id;
    const view = await call("session.get", { sessionId });
    assert(view.mode === "plan" && view.status === "waitingForApproval", `session: ${view.mode} ${view.status}`);
    await shot("drafting-01-plan-card-en-light");
  });

  await check("approving the plan leaves plan mode and the turn goes on; a question is answered by its option", async () => {
    await script(toolCall("call_q", "ask_user_question", { question: "结尾用哪种语气？", options: ["温和", "直接"] }));
    await tid("plan-approve").click();
    await tid("question").waitFor();
    await tid("decision").filter({ hasText: "You approved the plan" }).waitFor();
    assert((await tid("plan-badge").count()) === 0, "still in plan mode after approval");
    // The answer goes on: the model proposes three edits, one per step.
    await script(
      toolCall("call_patch_a", "propose_source_patch", {
        summary: "收紧三个步骤的措辞",
        edits: [
          { find: "第一步：准备一个安静的角落，关掉手机通知。", replace: "第一步：找一个安静的角落，关掉通知。" },
          { find: "第二步：先写提纲，再写正文，不要边写边改。", replace: "第二步：先列提纲，再写正文，写完再改。" },
          { find: "第三步：每周回顾一次，把写得好的段落整理出来。", replace: "第三步：每周回顾，挑出最佳段落。" },
        ],
      }),
      { type: "text", content: "好的，结尾用**温和**的语气。我提出了三处修改，请审阅。" },
    );
    await tid("question-option").filter({ hasText: "温和" }).click();
    await tid("msg-assistant").filter({ hasText: "结尾用温和的语气" }).waitFor();
    await waitIdle();
    const steps = await page.locator("[data-testid=tool-step]").evaluateAll((els) => els.map((e) => `${e.dataset.tool}:${e.dataset.state}`));
    assert(JSON.stringify(steps) === JSON.stringify(["exit_plan_mode:done", "ask_user_question:done", "propose_source_patch:done"]), `steps: ${JSON.stringify(steps)}`);
    assert((await page.locator("[data-testid=msg-assistant] strong").count()) >= 1, "Markdown not rendered");
  });

  let proposalA;
  await check("the proposal arrives in the timeline and opens over the editor in the merge view, with new findings beside their hunk", async () => {
    await tid("proposal-chip").filter({ hasText: "收紧三个步骤的措辞" }).waitFor();
    proposalA = (await call("proposal.list", { projectId: project.id, ownerId: sessionId })).proposals[0];
    assert(proposalA.hunks.length === 3, `hunks: ${proposalA.hunks.length}`);
    await tid("open-proposal").filter({ hasText: "收紧三个步骤的措辞" }).click();
    await tid("proposal-review").and(page.locator(`[data-proposal=${proposalA.id}]`)).waitFor();
    await page.locator("[data-testid=hunk]").nth(2).waitFor();
    assert((await page.locator("[data-testid=hunk]").count()) === 3, "not three hunk bars");
    // Word-level for Chinese: the changed characters are marked, not whole lines.
    const marked = await page.locator("[data-testid=merge] .cm-changedText").allInnerTexts();
    assert(marked.length > 0 && marked.every((m) => m.length < 12), `changed text marks: ${JSON.stringify(marked)}`);
    const finding = page.locator("[data-testid=hunk]").nth(2).locator("[data-testid=hunk-finding]");
    assert((await finding.count()) >= 1 && (await finding.first().innerText()).includes("最佳"), "the new finding is not beside the third hunk");
    const focused = await page.evaluate(() => document.activeElement?.dataset?.hunk);
    assert(focused === proposalA.hunks[0].id, `focus on ${focused}`);
    await shot("drafting-02-review-inline-en-light");
    await tid("review-split").click();
    await page.locator("[data-testid=merge][data-mode=split] [data-testid=hunk]").nth(2).waitFor();
    await shot("drafting-03-review-split-en-light");
    await tid("review-inline").click();
    await page.locator("[data-testid=merge][data-mode=inline] [data-testid=hunk]").first().focus();
  });

  await check("Enter accepts two hunks, Backspace rejects the third with a reason: one version with exactly the two", async () => {
    await page.keyboard.press("Enter");
    await page.locator(`[data-testid=hunk][data-hunk="${proposalA.hunks[0].id}"][data-decision=accepted]`).waitFor();
    await page.waitForFunction((id) => document.activeElement?.dataset?.hunk === id, proposalA.hunks[1].id, { timeout: 5000 });
    await page.keyboard.press("Enter");
    await page.waitForFunction((id) => document.activeElement?.dataset?.hunk === id, proposalA.hunks[2].id, { timeout: 5000 });
    await page.keyboard.press("Backspace");
    await tid("reject-reason").waitFor();
    await page.keyboard.type("不要用“最佳”这类绝对化用语");
    await page.keyboard.press("Enter");
    await tid("proposal-review").and(page.locator("[data-status=partially_accepted]")).waitFor();
    const p = await call("project.get", { projectId: project.id });
    assert(p.head === 2, `head ${p.head}`);
    assert(p.source.includes("第一步：找一个安静的角落，关掉通知。") && p.source.includes("第二步：先列提纲，再写正文，写完再改。"), "the accepted hunks are not in the source");
    assert(p.source.includes("第三步：每周回顾一次，把写得好的段落整理出来。") && !p.source.includes("最佳"), "the rejected hunk went in");
    await page.locator(".doc-source .cm-content").filter({ hasText: "第一步：找一个安静的角落" }).waitFor();
    const decided = await call("proposal.get", { proposalId: proposalA.id });
    assert(decided.rejectionReason === "不要用“最佳”这类绝对化用语", `reason: ${decided.rejectionReason}`);
    await shot("drafting-04-review-decided-en-light");
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });
  });

  await check("the reason is a constraint of the session, and the next model request carries it", async () => {
    await tid("constraints-toggle").filter({ hasText: "Constraints (1)" }).waitFor();
    await tid("constraints-toggle").click();
    await tid("constraint").filter({ hasText: "不要用“最佳”这类绝对化用语" }).waitFor();
    await tid("constraints-toggle").click();
    const before = (await chatRequests()).length;
    await script(
      toolCall("call_patch_b", "propose_source_patch", { summary: "结尾加一句行动号召", edits: [{ find: "结尾：写作是一种习惯，而不是灵感。", replace: "结尾：写作是一种习惯，而不是灵感。今天就写下第一段吧。" }] }),
      { type: "text", content: "结尾的修改已提出。" },
    );
    await tid("composer-input").fill("再给结尾加一句温和的行动号召");
    await page.keyboard.press("Enter");
    await tid("msg-assistant").filter({ hasText: "结尾的修改已提出" }).waitFor();
    await waitIdle();
    const requests = (await chatRequests()).slice(before);
    assert(requests.length >= 1 && JSON.stringify(requests[0]).includes("不要用“最佳”这类绝对化用语"), "the reason is not in the next request");
  });

  let proposalB;
  await check("a hand edit makes the remaining proposal stale; it says so, compares, rebases, and the rebased one is accepted", async () => {
    proposalB = (await call("proposal.list", { projectId: project.id, ownerId: sessionId, status: "proposed" })).proposals[0];
    assert(proposalB && proposalB.summary === "结尾加一句行动号召", `open: ${JSON.stringify(proposalB?.summary)}`);
    await page.locator(".doc-source .cm-line", { hasText: "春天是最适合开始写作的季节" }).click();
    await page.keyboard.press("End");
    await page.keyboard.type("（修订）");
    await tid("save-state").and(page.locator("[data-state=saved]")).waitFor();
    await tid("open-proposal").filter({ hasText: "结尾加一句行动号召" }).locator("[data-testid=proposal-stale]").waitFor();
    await tid("open-proposal").filter({ hasText: "结尾加一句行动号召" }).click();
    await tid("stale-banner").filter({ hasText: "The source changed since this was written." }).waitFor();
    assert(await tid("review-accept-all").isDisabled(), "a stale proposal can be accepted");
    await tid("review-compare").click();
    await page.locator("[data-testid=merge][data-mode=split] .cm-merge-b").filter({ hasText: "（修订）" }).waitFor();
    await shot("drafting-05-stale-compare-en-light");
    await tid("review-compare").click();
    await tid("review-rebase").click();
    await tid("proposal-review").and(page.locator("[data-stale=false][data-status=proposed]")).waitFor();
    const rebasedId = await tid("proposal-review").getAttribute("data-proposal");
    assert(rebasedId !== proposalB.id, "no new proposal after the rebase");
    await page.waitForFunction(() => document.activeElement?.dataset?.testid === "hunk", null, { timeout: 5000 });
    await page.keyboard.press("Enter");
    await tid("proposal-review").and(page.locator("[data-status=accepted]")).waitFor();
    const p = await call("project.get", { projectId: project.id });
    assert(p.head === 3 && p.source.includes("今天就写下第一段吧。") && p.source.includes("（修订）"), `after the rebase accept: head ${p.head}`);
    assert((await call("proposal.get", { proposalId: proposalB.id })).status === "superseded", "the stale proposal is not superseded");
    await page.keyboard.press("Escape");
    await page.locator(".doc-source .cm-content").filter({ hasText: "今天就写下第一段吧" }).waitFor();
  });

  await check("apply_proposal asks with exactly what changes and where; allowed once, the editor shows the change", async () => {
    await script(
      toolCall("call_patch_c", "propose_source_patch", { summary: "第二步加一句提醒", edits: [{ find: "第二步：先列提纲，再写正文，写完再改。", replace: "第二步：先列提纲，再写正文，写完再改。别急着删。" }] }),
      { type: "text", content: "提醒已提出。" },
    );
    await tid("composer-input").fill("第二步加一句提醒");
    await page.keyboard.press("Enter");
    await tid("msg-assistant").filter({ hasText: "提醒已提出" }).waitFor();
    await waitIdle();
    const c = (await call("proposal.list", { projectId: project.id, ownerId: sessionId, status: "proposed" })).proposals[0];
    await script(toolCall("call_apply", "apply_proposal", { proposalId: c.id }), { type: "text", content: "已应用。" });
    await tid("composer-input").fill("你直接应用吧");
    await page.keyboard.press("Enter");
    const prompt = tid("approval").and(page.locator("[data-tool=apply_proposal]"));
    await prompt.waitFor();
    const text = await prompt.innerText();
    assert(text.includes("第二步加一句提醒") && text.includes("the source"), `prompt: ${text}`);
    assert((await prompt.locator("[data-testid=approval-diff] .diff-em").allInnerTexts()).join("").includes("别急着删"), "the exact diff is not shown");
    await shot("drafting-06-apply-permission-en-light");
    await tid("allow-once").click();
    await tid("msg-assistant").filter({ hasText: "已应用。" }).waitFor();
    await page.locator(".doc-source .cm-content").filter({ hasText: "别急着删" }).waitFor();
    await waitIdle();
    const p = await call("project.get", { projectId: project.id });
    assert(p.head === 4 && p.source.includes("别急着删"), `head ${p.head}`);
  });

  await check("checkpoints: the list shows them; restoring one brings the text back and the timeline says so", async () => {
    await tid("checkpoints-toggle").click();
    await tid("checkpoint-create").click();
    await tid("checkpoint").first().waitFor();
    const n = await tid("checkpoint").count();
    assert(n >= 1, "no checkpoint listed");
    // Change the text after the newest checkpoint, then go back to it.
    await page.locator(".doc-source .cm-line", { hasText: "结尾：" }).click();
    await page.keyboard.press("End");
    await page.keyboard.type("又改了一次。");
    await tid("save-state").and(page.locator("[data-state=saved]")).waitFor();
    await tid("checkpoint-restore").first().click();
    await shot("drafting-07-checkpoints-en-light");
    await tid("checkpoint-restore-confirm").click();
    await tid("rewound-line").waitFor();
    await page.waitForFunction(() => !document.querySelector(".doc-source .cm-content")?.textContent?.includes("又改了一次。"), null, { timeout: 5000 });
    const p = await call("project.get", { projectId: project.id });
    assert(!p.source.includes("又改了一次。") && p.source.includes("别急着删"), "the checkpoint's text is not back");
    await tid("checkpoints-toggle").click();
  });

  await check("a tool step expands to its input and result", async () => {
    await page.locator("[data-testid=tool-step][data-tool=ask_user_question] .step-line").click();
    const detail = await tid("tool-detail").innerText();
    assert(detail.includes("结尾用哪种语气") && detail.includes("温和"), `detail: ${detail}`);
    await page.locator("[data-testid=tool-step][data-tool=ask_user_question] .step-line").click();
  });

  await check("a permission prompt says what it is about; allow once runs it", async () => {
    await script(toolCall("call_perm", "request_permission", { permission: "把第三步改写为清单", reason: "清单更好读" }), { type: "text", content: "已获同意。" });
    await tid("composer-input").fill("第三步可以改成清单吗？");
    await page.keyboard.press(`${mod}+Enter`);
    const prompt = tid("approval").filter({ hasText: "把第三步改写为清单" });
    await prompt.waitFor();
    await shot("drafting-08-permission-en-light");
    await tid("allow-once").click();
    await tid("msg-assistant").filter({ hasText: "已获同意" }).waitFor();
    await tid("decision").filter({ hasText: "once" }).last().waitFor();
    await waitIdle();
  });

  await check("Stop (Esc) while an answer streams: the stream ends and the timeline says it stopped", async () => {
    await script({ type: "stall", content: "我先把三个步骤逐一改写，" });
    await tid("composer-input").fill("把三个步骤都改写一遍");
    await page.keyboard.press("Enter");
    await tid("live-message").filter({ hasText: "我先把三个步骤逐一改写" }).waitFor();
    await tid("stop").waitFor();
    await shot("drafting-09-streaming-en-light");
    await page.keyboard.press("Escape");
    await tid("msg-assistant").filter({ hasText: "我先把三个步骤逐一改写" }).filter({ hasText: "Stopped before the end." }).waitFor();
    await waitIdle();
    assert((await tid("live-message").count()) === 0, "the live message stayed");
  });

  await check("a message sent while a turn runs shows as queued, then goes in at the turn's end", async () => {
    await script({ type: "text", content: "第一条回复。", delayMs: 1500 }, { type: "text", content: "第二条回复。" });
    await tid("composer-input").fill("第一条");
    await page.keyboard.press("Enter");
    await tid("stop").waitFor();
    await tid("composer-input").fill("第二条，排队");
    await page.keyboard.press("Enter");
    await tid("msg-queued").filter({ hasText: "第二条，排队" }).waitFor();
    await tid("msg-assistant").filter({ hasText: "第二条回复" }).waitFor();
    await waitIdle();
    assert((await tid("msg-queued").count()) === 0, "the queued message stayed queued");
  });

  await check("a reload in the middle of a turn rebuilds the same timeline from the log and follows the turn", async () => {
    await script(toolCall("call_versions", "read_versions", {}), { type: "stall", content: "版本记录读完了，" });
    await tid("composer-input").fill("看看版本记录");
    await page.keyboard.press("Enter");
    await tid("live-message").filter({ hasText: "版本记录读完了" }).waitFor();
    await page.locator("[data-testid=tool-step][data-tool=read_versions][data-state=done]").waitFor();
    const before = await timelineText();
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("working").waitFor();
    await page.locator("[data-testid=tool-step][data-tool=read_versions][data-state=done]").waitFor();
    // Settle: the same text twice in a row.
    let after = "";
    for (let i = 0; i < 20; i++) {
      const now = await timelineText();
      if (now === after) break;
      after = now;
      await sleep(150);
    }
    assert(after === before, `timeline after reload differs:\n--- before\n${before}\n--- after\n${after}`);
    await tid("stop").click();
    await tid("msg-assistant").filter({ hasText: "版本记录读完了" }).filter({ hasText: "Stopped before the end." }).waitFor();
    await waitIdle();
  });

  await check("a turn started in another tab shows here while this tab sits idle: pushed, not polled", async () => {
    const other = await context.newPage();
    other.on("pageerror", (e) => pageErrors.push(`other tab: ${e}`));
    await other.goto(url, { waitUntil: "commit" });
    await other.locator(`[data-testid=project-item]`).filter({ hasText: "春天的写作计划" }).locator("button").first().click();
    await other.locator("[data-testid=composer-input]").waitFor();
    // Idle here: the log is not read at all (the panel used to read it every 2.5 s).
    const reads = [];
    const onRequest = (r) => {
      if (/\/api\/session\.(timeline|get|events)$/.test(new URL(r.url()).pathname)) reads.push(r.url());
    };
    page.on("request", onRequest);
    await sleep(3000);
    assert(reads.length === 0, `an idle panel read the log: ${reads.join(", ")}`);
    await script({ type: "stall", content: "另一个标签页在写，" });
    await other.locator("[data-testid=composer-input]").fill("在另一个标签页里写");
    await other.keyboard.press("Enter");
    // This tab hears of it from the engine's push and follows the turn.
    await tid("working").filter({ hasText: "A turn is running" }).waitFor({ timeout: 5000 });
    await tid("msg-user").filter({ hasText: "在另一个标签页里写" }).waitFor();
    page.off("request", onRequest);
    await other.locator("[data-testid=stop]").click();
    await waitIdle();
    await other.close();
  });

  await check("the context meter shows the window by layer; tokens and cost show against the session", async () => {
    const used = Number(await tid("context-meter").getAttribute("data-used"));
    assert(used > 0, `context used: ${used}`);
    await tid("context-meter").click();
    const layers = await tid("context-layers").innerText();
    assert(layers.includes("Instructions and project") && layers.includes("Source and comments"), `layers: ${layers}`);
    const usage = await tid("session-usage").innerText();
    assert(/tokens/.test(usage) && /cost \d/.test(usage), `usage: ${usage}`);
    await shot("drafting-10-context-en-light");
    await tid("context-meter").click();
    // The status bar says the session's model and how full its window is, as the meter.
    const model = await call("llmProfile.list", {}).then((r) => r.profiles.find((p) => p.isDefault).model);
    assert((await tid("status-model").innerText()) === model, `status bar model: ${await tid("status-model").innerText()} (expected ${model})`);
    const pct = Number(await tid("status-context").getAttribute("data-pct"));
    const meter = await tid("context-meter").getAttribute("aria-label");
    assert(pct > 0 && meter.includes(`${pct}%`), `status bar context ${pct}% vs the meter's “${meter}”`);
  });

  await check("sessions: rename, a new one, the list shows both with activity, resume the first", async () => {
    await tid("session-rename").click();
    await tid("session-rename-input").fill("改写三个步骤");
    await page.keyboard.press("Enter");
    await tid("session-title").filter({ hasText: "改写三个步骤" }).waitFor();
    assert((await call("session.get", { sessionId })).session.title === "改写三个步骤", "rename not stored");
    await tid("session-new").click();
    await tid("ai-panel").locator(".empty-title").filter({ hasText: "Ask for a change" }).waitFor();
    await tid("session-pick").click();
    await page.locator("[data-testid=session-item]").nth(1).waitFor();
    const items = await page.locator("[data-testid=session-item]").allInnerTexts();
    assert(items.length === 2 && items.some((x) => x.includes("改写三个步骤")), `items: ${items}`);
    await shot("drafting-11-sessions-en-light");
    await page.keyboard.press("Escape");
    await tid("session-list").waitFor({ state: "detached" });
    // Archive the new, empty one: the panel goes back to the other.
    await tid("session-archive").click();
    await tid("archive-yes").click();
    await tid("session-title").filter({ hasText: "改写三个步骤" }).waitFor();
    await tid("msg-assistant").filter({ hasText: "第二条回复" }).waitFor();
    const listed = (await call("session.list", { projectId: project.id })).sessions;
    assert(listed.length === 1 && listed[0].id === sessionId, `sessions after archiving: ${listed.map((x) => x.title)}`);
    await tid("session-pick").click();
    assert((await tid("session-item").count()) === 1, "the archived session is still listed");
    await page.locator(`[data-testid=session-item][data-session=${sessionId}]`).click();
    await tid("session-title").filter({ hasText: "改写三个步骤" }).waitFor();
  });

  await check("an archived session is restored from the list, can be continued, and archived again", async () => {
    await tid("session-pick").click();
    await tid("session-show-archived").click();
    const row = tid("session-archived-row").first();
    await row.waitFor();
    const restoredId = await row.locator("[data-testid=session-item-archived]").getAttribute("data-session");
    await shot("drafting-11b-archived-restore-en-light");
    await row.locator("[data-testid=session-restore]").click();
    await tid("session-list").waitFor({ state: "detached" });
    await tid("unarchived-line").waitFor();
    assert(!(await tid("composer-input").isDisabled()), "the restored session cannot be continued");
    const listed = (await call("session.list", { projectId: project.id })).sessions.map((x) => x.id);
    assert(listed.length === 2 && listed.includes(restoredId), `sessions after restoring: ${listed}`);
    assert((await call("session.get", { sessionId: restoredId })).status === "idle", "the restored session is not idle");
    // Back to how it was: archived again, the first session open.
    await tid("session-archive").click();
    await tid("archive-yes").click();
    await tid("session-title").filter({ hasText: "改写三个步骤" }).waitFor();
    assert((await call("session.list", { projectId: project.id })).sessions.length === 1, "archiving again did not take");
  });

  await check("the same panel in Chinese and dark", async () => {
    await page.evaluate(() => {
      window.localStorage.setItem("inkstone.lang", "zh");
      window.localStorage.setItem("inkstone.theme", "dark");
    });
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("composer-input").waitFor();
    await tid("decision").filter({ hasText: "你批准了计划" }).waitFor();
    await tid("msg-assistant").filter({ hasText: "在完成前已停止。" }).first().waitFor();
    await shot("drafting-12-timeline-zh-dark");
    await tid("proposal-chip").filter({ hasText: "收紧三个步骤的措辞" }).click();
    await tid("proposal-review").and(page.locator("[data-status=partially_accepted]")).waitFor();
    await page.locator("[data-testid=hunk]").nth(2).waitFor();
    assert((await tid("proposal-review").innerText()).includes("第 1 处，共 3 处"), "the review is not in Chinese");
    await shot("drafting-12b-review-zh-dark");
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });
    await page.evaluate(() => window.localStorage.setItem("inkstone.lang", "en"));
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("composer-input").waitFor();
    await shot("drafting-13-timeline-en-dark");
    await page.evaluate(() => {
      window.localStorage.setItem("inkstone.lang", "zh");
      window.localStorage.setItem("inkstone.theme", "light");
    });
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("composer-input").waitFor();
    await shot("drafting-14-timeline-zh-light");
    await page.evaluate(() => window.localStorage.setItem("inkstone.lang", "en"));
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("composer-input").waitFor();
  });

  await check("a 200-message session streams 2,000 tokens: the history is virtualised and only the live message changes", async () => {
    const long = (await call("session.create", { projectId: project.id, title: "长会话" })).session.id;
    for (let i = 0; i < 100; i++) await call("session.submit", { sessionId: long, text: `第 ${i + 1} 个问题：这一段还能更短吗？` });
    const view = await call("session.get", { sessionId: long });
    assert(view.messageCount >= 200, `messages: ${view.messageCount}`);
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("session-pick").click();
    await page.locator(`[data-testid=session-item][data-session=${long}]`).click();
    await tid("session-title").filter({ hasText: "长会话" }).waitFor();
    await tid("msg-user").filter({ hasText: "第 100 个问题" }).waitFor();
    const rows = await page.locator("[data-testid=timeline] [role=listitem]").count();
    assert(rows < 60, `${rows} rows in the DOM for 200 messages`);
    // 2,000 tokens as the fake server counts them (4 characters each), in pieces of 4.
    const body = Array.from({ length: 100 }, (_, i) => `第${i + 1}段：春天适合写作，每天写一点。Keep going, write daily. `).join("\n\n");
    const streamed = body.padEnd(8000, "写").slice(0, 8000);
    await script({ type: "text", content: streamed, chunkChars: 4, paceMs: 2 });
    await page.evaluate(() => {
      window.__longest = 0;
      window.__frameGap = 0;
      window.__mutations = 0;
      window.__observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          if (e.duration > window.__longest) window.__longestAt = e.startTime;
          window.__longest = Math.max(window.__longest, e.duration);
        }
      });
      window.__observer.observe({ type: "longtask", buffered: false });
      // The longest gap between two animation frames, for a figure below the 50 ms longtask floor.
      let last = performance.now();
      window.__frames = true;
      const frame = (now) => {
        window.__frameGap = Math.max(window.__frameGap, now - last);
        last = now;
        if (window.__frames) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
      const list = document.querySelector("[data-testid=timeline] [role=list]");
      // Rows scrolling out of the virtual window may leave the DOM; anything added to or
      // changed in the history is a re-render.
      window.__mo = new MutationObserver((records) => {
        for (const r of records) if (r.type !== "childList" || r.addedNodes.length > 0) window.__mutations++;
      });
      window.__mo.observe(list, { childList: true, subtree: true, characterData: true, attributes: true });
    });
    await tid("composer-input").fill("把整篇再写一遍");
    await page.keyboard.press("Enter");
    // Once the answer streams (the sent message has landed in the history), the history
    // is left alone until the answer is complete.
    const liveLength = () => page.evaluate(() => document.querySelector("[data-testid=live-message]")?.textContent?.length ?? 0);
    await page.waitForFunction(() => (document.querySelector("[data-testid=live-message]")?.textContent?.length ?? 0) > 400, null, { timeout: 30_000 });
    const streamingSince = await page.evaluate(() => performance.now());
    await sleep(300);
    const atStart = await page.evaluate(() => window.__mutations);
    const lengthAtStart = await liveLength();
    await page.waitForFunction(() => (document.querySelector("[data-testid=live-message]")?.textContent?.length ?? 0) > 6000, null, { timeout: 30_000 });
    const lengthLater = await liveLength();
    const whileStreaming = (await page.evaluate(() => window.__mutations)) - atStart;
    const longestStreaming = await page.evaluate(() => window.__longest);
    const longestBeforeStreaming = await page.evaluate((since) => window.__longest > 0 && window.__longestAt < since, streamingSince);
    await tid("msg-assistant").filter({ hasText: "第100段" }).waitFor({ timeout: 60_000 });
    await waitIdle();
    const { longest, frameGap } = await page.evaluate(() => {
      window.__observer.disconnect();
      window.__mo.disconnect();
      window.__frames = false;
      return { longest: window.__longest, frameGap: window.__frameGap };
    });
    const figure = (ms) => (ms > 0 ? `${Math.round(ms)} ms` : "none over 50 ms (the longtask threshold)");
    console.log(
      `# measured: longest main-thread task while streaming 2,000 tokens into a 200-message session: ${figure(longest)} (until 6,000 of 8,000 characters: ${figure(
        longestStreaming,
      )}${longestBeforeStreaming ? ", that one before the answer streamed (sending and the first rows)" : ""}); longest gap between frames: ${Math.round(frameGap)} ms`,
    );
    console.log(`# measured: history mutations while the live message grew from ${lengthAtStart} to ${lengthLater} characters: ${whileStreaming}`);
    assert(lengthLater > lengthAtStart, "the answer did not stream");
    assert(whileStreaming === 0, `the history re-rendered while streaming (${whileStreaming} mutations)`);
  });

  // How far the timeline is from its bottom, and whether an element is inside its viewport.
  const feedGap = () => page.evaluate(() => {
    const el = document.querySelector("[data-testid=timeline]");
    return Math.round(el.scrollHeight - el.scrollTop - el.clientHeight);
  });
  const inFeedView = (testId) => page.evaluate((id) => {
    const feed = document.querySelector("[data-testid=timeline]").getBoundingClientRect();
    const el = [...document.querySelectorAll(`[data-testid=${id}]`)].at(-1);
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.bottom > feed.top && r.top < feed.bottom;
  }, testId);
  const scrollFeedUp = (px) => page.evaluate((by) => {
    const el = document.querySelector("[data-testid=timeline]");
    el.scrollTop = el.scrollHeight - el.clientHeight - by;
  }, px);

  await check("scrolled up 300 px, sending a task brings the feed to the end where the answer streams; scrolled away, 'jump to latest' goes back", async () => {
    await scrollFeedUp(300);
    await tid("feed-jump").waitFor();
    const streamed = Array.from({ length: 60 }, (_, i) => `第${i + 1}句：慢慢写，每天写一点。`).join("\n\n");
    await script({ type: "text", content: streamed, chunkChars: 4, paceMs: 8 });
    await tid("composer-input").fill("再写一遍，慢一点");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => (document.querySelector("[data-testid=live-message]")?.textContent?.length ?? 0) > 200, null, { timeout: 15_000 });
    await sleep(200);
    const gap = await feedGap();
    assert(gap < 48, `the feed stayed ${gap} px above the bottom after sending`);
    assert(await inFeedView("live-message"), "the streaming answer is not in view");
    assert((await tid("feed-jump").count()) === 0, "the jump button stayed after sending");
    // Scrolled away while it streams: the feed stays put and offers the way back.
    await scrollFeedUp(300);
    await tid("feed-jump").waitFor();
    await sleep(300);
    assert((await feedGap()) > 250, "the feed pulled the reader back to the bottom while scrolled away");
    await tid("feed-jump").click();
    await sleep(100);
    assert((await feedGap()) < 48, "'jump to latest' did not go to the end");
    await tid("msg-assistant").filter({ hasText: "第60句" }).waitFor({ timeout: 30_000 });
    await waitIdle();
    assert((await feedGap()) < 48, "the feed did not stay at the end while the answer finished");
  });

  await check("Compact now: the timeline says it is summarising, with Stop; a stop reads as stopped; a summary wraps in normal type (zh, 1024×700)", async () => {
    await page.evaluate(() => window.localStorage.setItem("inkstone.lang", "zh"));
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("session-title").filter({ hasText: "长会话" }).waitFor();
    const summary = JSON.stringify({
      summary: "这是一个很长的会话：用户连续问了一百次能否把一段改得更短，助手每次都给了更短的版本；最后又把整篇按段重写了一遍，每段都提醒每天写一点。",
      user_intent: "把写作计划改得更短、更口语",
      accepted_changes: [{ proposal_id: "prp_example_accepted_change_with_a_long_identifier", version: 4 }],
      rejected_directions: [{ direction: "使用“最佳”这类绝对化用语", reason: "不要绝对化" }],
      open_tasks: ["给标题三个候选", "检查结尾的行动号召是否自然"],
      active_artifacts: [],
      source_refs: [],
      next_step_hint: "先给出三个标题候选，再问用户选哪一个。",
    });
    await script({ type: "text", content: summary, delayMs: 4000 });
    await tid("compact-now").click();
    await tid("compacting").filter({ hasText: "正在总结较早的对话" }).waitFor();
    assert(await inFeedView("compacting"), "the summarising state is not in view");
    await tid("stop").waitFor();
    await shot("drafting-16-compacting-zh-1024");
    await tid("compacting-stop").click();
    const stopped = page.locator("[data-testid=compaction-failed][data-outcome=stopped]");
    await stopped.waitFor();
    const said = await stopped.innerText();
    assert(said.includes("已停止总结对话") && !said.includes("0"), `a stopped compaction reads: ${said}`);
    await waitIdle();
    await script(...Array.from({ length: 4 }, () => ({ type: "text", content: summary, delayMs: 800 })));
    await tid("compact-now").click();
    await tid("compacting").waitFor();
    await tid("compact-boundary").and(page.locator("[data-mode=summarized]")).waitFor({ timeout: 30_000 });
    await waitIdle();
    await tid("compact-boundary-toggle").last().click();
    const box = tid("compact-boundary-summary").last();
    await box.waitFor();
    const fit = await box.evaluate((el) => {
      const panel = document.querySelector("aside.panel").getBoundingClientRect();
      const r = el.getBoundingClientRect();
      return { right: r.right, panelRight: panel.right, scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, font: getComputedStyle(el).fontFamily };
    });
    assert(fit.right <= fit.panelRight + 0.5 && fit.scrollWidth <= fit.clientWidth + 1, `the summary runs past the panel: ${JSON.stringify(fit)}`);
    assert(!/mono/i.test(fit.font), `the summary is in ${fit.font}`);
    assert((await box.innerText()).includes("下一步"), "the summary's parts are not labelled in Chinese");
    await box.evaluate((el) => el.scrollIntoView({ block: "end" }));
    await shot("drafting-17-compact-summary-zh-1024");
    await page.evaluate(() => window.localStorage.setItem("inkstone.lang", "en"));
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.reload({ waitUntil: "commit" });
    await openProject();
  });

  await check("with a long intent, the intent chip, pins and Memory stay inside the panel and clickable at 1280×800 and 1024×700, in English and Chinese (screenshots)", async () => {
    const intent = { brand: "墨石茶社", topic: "tea culture and the spring harvest in Hangzhou", outputType: "copy", platforms: ["zhihu", "wechat", "xiaohongshu"], length: { value: 800, unit: "words" } };
    for (const s of (await call("session.list", { projectId: project.id })).sessions) await call("session.setIntent", { sessionId: s.id, intent });
    for (const [width, height] of [
      [1280, 800],
      [1024, 700],
    ]) {
      for (const lang of ["en", "zh"]) {
        await page.evaluate((l) => window.localStorage.setItem("inkstone.lang", l), lang);
        await page.setViewportSize({ width, height });
        await page.reload({ waitUntil: "commit" });
        await tid("project-view").waitFor();
        await tid("intent-toggle").filter({ hasText: "tea culture" }).waitFor();
        const title = await tid("intent-toggle").getAttribute("title");
        assert(title && title.includes("tea culture and the spring harvest in Hangzhou") && title.includes("800"), `${width} ${lang}: the chip's title is ${JSON.stringify(title)}`);
        const outside = await page.evaluate(() => {
          const panel = document.querySelector("aside.panel").getBoundingClientRect();
          const bad = [];
          for (const id of ["intent-toggle", "pins-toggle", "memory-toggle"]) {
            const el = document.querySelector(`[data-testid=${id}]`);
            const r = el.getBoundingClientRect();
            if (r.width < 24 || r.left < panel.left - 0.5 || r.right > panel.right + 0.5 || r.right > window.innerWidth) bad.push(`${id} ${Math.round(r.left)}–${Math.round(r.right)} in panel ${Math.round(panel.left)}–${Math.round(panel.right)}`);
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            if (!el.contains(hit)) bad.push(`${id} is covered by ${hit?.outerHTML.slice(0, 80)}`);
          }
          return bad;
        });
        assert(outside.length === 0, `${width}×${height} ${lang}: ${outside.join("; ")}`);
        await shot(`drafting-15-long-intent-${width}-${lang}`);
        await tid("memory-toggle").click();
        await page.locator("[data-testid=memory-toggle][aria-expanded=true]").waitFor();
        await tid("memory-toggle").click();
        await page.locator("[data-testid=memory-toggle][aria-expanded=false]").waitFor();
      }
    }
    await page.evaluate(() => window.localStorage.setItem("inkstone.lang", "en"));
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.reload({ waitUntil: "commit" });
    await tid("project-view").waitFor();
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[49]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
