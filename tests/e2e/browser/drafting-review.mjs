#!/usr/bin/env node
// Browser-mode end-to-end test of the AI panel's decisions beyond the first walk
// (tests/e2e/browser/drafting.mjs): `inkstone-cli serve` + the scripted
// OpenAI-compatible TEST server `inkstone-fake-model` (never a model) + Debian's
// Chromium via playwright-core.
//
//   node tests/e2e/browser/drafting-review.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// A person denies a permission prompt with a reason (the reason reaches the next model
// request); sends a plan back with a comment (the comment reaches it too); picks a
// title among candidates and topic tags among tag candidates and applies them; reviews
// a change to a platform draft in that platform's preview and, the draft being ready,
// confirms explicitly before it is written; stages two proposals and applies them as
// one version; a turn goes on while the panel is closed. Screenshots of the new states
// in both languages and themes.
//
// Prints `browser-e2e-drafting-review: N passed, M failed` and exits non-zero on any
// failure.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, startChild, startFakeModel, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 240_000;
const STEP_TIMEOUT_MS = 15_000;

const args = parseArgs(process.argv.slice(2), {
  script: "drafting-review.mjs",
  usage: "node tests/e2e/browser/drafting-review.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-drafting-review-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("drafting-review.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "drafting-review.mjs", summary: "browser-e2e-drafting-review", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-drafting-review-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

const TITLE = "早起写作的三个习惯";
const SOURCE = [
  `# ${TITLE}`,
  "",
  "早起写作让一天有了确定的开始。",
  "",
  "习惯一：前一晚写下第二天的题目。",
  "",
  "习惯二：起床后先写，不看手机。",
  "",
  "习惯三：写满二十分钟就停。",
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

  const project = await call("project.create", { title: TITLE, source: SOURCE, platforms: ["wechat", "x", "xiaohongshu"] });
  await call("version.create", { projectId: project.id, message: "first draft" });
  await call("llmProfile.create", { name: "Fake model", baseUrl: modelUrl, model: "fake-model", contextWindow: 32768 });
  // Saved drafts for the draft proposals: an X thread (ready to publish) and a
  // Xiaohongshu note (its topic tags).
  await call("platformDraft.save", { projectId: project.id, platform: "x" });
  await call("platformDraft.save", { projectId: project.id, platform: "xiaohongshu", tags: ["写作"] });
  const xDraft = await call("platformDraft.setStatus", { projectId: project.id, platform: "x", status: "ready" });

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
  // The only project (its title changes when a title candidate is accepted).
  const openProject = async () => {
    await page.locator(`[data-testid=project-item]`).first().locator("button").first().click();
    await tid("project-view").waitFor();
  };
  const waitIdle = () => tid("stop").waitFor({ state: "detached" });
  const send = async (text) => {
    await tid("composer-input").fill(text);
    await page.keyboard.press(`${mod}+Enter`);
  };
  // The same screen in the four looks: light/dark × en/zh, reopened as the person left it.
  const looks = async (name, reopen) => {
    for (const [lang, theme] of [["zh", "dark"], ["en", "dark"], ["zh", "light"], ["en", "light"]]) {
      await page.evaluate(([l, th]) => {
        window.localStorage.setItem("inkstone.lang", l);
        window.localStorage.setItem("inkstone.theme", th);
      }, [lang, theme]);
      await page.reload({ waitUntil: "commit" });
      await openProject();
      await tid("composer-input").waitFor();
      await reopen(lang);
      await shot(`${name}-${lang}-${theme}`);
    }
  };

  await page.goto(url, { waitUntil: "commit" });
  await openProject();
  await page.keyboard.press(`${mod}+j`);
  await tid("composer-input").waitFor();

  let sessionId;
  await check("a permission prompt denied with a reason: the reason reaches the next model request", async () => {
    await script(toolCall("call_perm", "request_permission", { permission: "删除习惯三这一段", reason: "它和习惯二重复" }), { type: "text", content: "好的，不删。" });
    await send("习惯三是不是多余？");
    const prompt = tid("approval").filter({ hasText: "删除习惯三这一段" });
    await prompt.waitFor();
    const before = (await chatRequests()).length;
    await prompt.locator("[data-testid=deny]").click();
    await tid("deny-reason").fill("习惯三要保留，它讲的是收尾");
    await shot("review-01-deny-reason-en-light");
    await tid("deny-confirm").click();
    await tid("msg-assistant").filter({ hasText: "好的，不删。" }).waitFor();
    await waitIdle();
    const after = (await chatRequests()).slice(before);
    assert(after.length === 1, `${after.length} requests after the denial`);
    const tool = after[0].messages.find((m) => m.role === "tool" && m.tool_call_id === "call_perm");
    assert(tool && tool.content.includes("习惯三要保留，它讲的是收尾"), `the reason is not in the tool result: ${JSON.stringify(tool)}`);
    assert((await tid("decision").filter({ hasText: "习惯三要保留" }).count()) >= 1, "the timeline does not show the denial's reason");
    sessionId = (await call("session.list", { projectId: project.id })).sessions[0].id;
  });

  await check("a plan sent back with a comment: the comment reaches the model, plan mode stays on", async () => {
    await tid("plan-toggle").click();
    await script(toolCall("call_plan", "exit_plan_mode", { plan: "1. 把三个习惯合并成一段\n2. 结尾加一句总结" }), { type: "text", content: "明白，三个习惯分开写。" });
    await send("整理一下结构");
    await tid("plan-card").waitFor();
    const before = (await chatRequests()).length;
    await tid("plan-return").click();
    await tid("plan-comment").fill("不要合并，三个习惯分开写");
    await shot("review-02-plan-send-back-en-light");
    await tid("plan-return-confirm").click();
    await tid("msg-assistant").filter({ hasText: "明白，三个习惯分开写。" }).waitFor();
    await waitIdle();
    const after = (await chatRequests()).slice(before);
    assert(after.length === 1 && JSON.stringify(after[0]).includes("不要合并，三个习惯分开写"), "the comment is not in the next request");
    const view = await call("session.get", { sessionId });
    assert(view.mode === "plan", `mode after sending the plan back: ${view.mode}`);
    assert((await tid("plan-badge").count()) === 1, "plan mode is not shown");
    await tid("plan-toggle").click();
    await page.waitForFunction(() => !document.querySelector("[data-testid=plan-badge]"), null, { timeout: 5000 });
  });

  await check("title candidates are choices: one is picked and becomes the title, in a new version", async () => {
    await script(
      toolCall("call_titles", "propose_title_candidates", {
        summary: "三个标题备选",
        candidates: [
          { text: "早起二十分钟，写作就开始了", rationale: "具体" },
          { text: "我的早起写作习惯", rationale: "朴素" },
        ],
      }),
      { type: "text", content: "给了两个标题。" },
    );
    await send("给几个标题备选");
    await tid("msg-assistant").filter({ hasText: "给了两个标题" }).waitFor();
    await waitIdle();
    await tid("open-proposal").filter({ hasText: "三个标题备选" }).click();
    await tid("candidates").waitFor();
    assert(await tid("review-accept-all").isDisabled(), "accept is enabled before a choice");
    await page.locator("[data-testid=candidates] label").filter({ hasText: "早起二十分钟，写作就开始了" }).click();
    await shot("review-03-title-candidates-en-light");
    await tid("review-accept-all").click();
    await tid("proposal-review").and(page.locator("[data-status=accepted]")).waitFor();
    const p = await call("project.get", { projectId: project.id });
    assert(p.title === "早起二十分钟，写作就开始了", `title: ${p.title}`);
    assert(p.head === 2, `head: ${p.head}`);
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });
  });

  await check("tag candidates are choices: two are picked and become the note's topics", async () => {
    await script(
      toolCall("call_tags", "propose_tags", { platform: "xiaohongshu", summary: "小红书话题", candidates: [{ text: "早起" }, { text: "写作习惯" }, { text: "自律" }] }),
      { type: "text", content: "话题已给出。" },
    );
    await send("小红书的话题选几个");
    await tid("msg-assistant").filter({ hasText: "话题已给出" }).waitFor();
    await waitIdle();
    await tid("open-proposal").filter({ hasText: "小红书话题" }).click();
    await tid("candidates").waitFor();
    await page.locator("[data-testid=candidates] label").filter({ hasText: "早起" }).click();
    await page.locator("[data-testid=candidates] label").filter({ hasText: "写作习惯" }).click();
    await shot("review-04-tag-candidates-en-light");
    await tid("review-accept-all").click();
    await tid("proposal-review").and(page.locator("[data-status=accepted]")).waitFor();
    const draft = await call("platformDraft.get", { projectId: project.id, platform: "xiaohongshu" });
    const tags = draft.content.tags;
    assert(tags.includes("早起") && tags.includes("写作习惯") && !tags.includes("自律"), `tags: ${JSON.stringify(tags)}`);
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });
  });

  let draftProposal;
  await check("a change to the ready X thread shows in X's preview and needs the explicit confirmation", async () => {
    const firstPost = xDraft.content.posts[0].text;
    const firstLine = firstPost.split("\n").find((l) => l.trim().length > 4) ?? firstPost;
    await script(
      toolCall("call_draft", "propose_draft_patch", { platform: "x", summary: "X 开头更有力", edits: [{ find: firstLine, replace: `${firstLine}（每天二十分钟）` }] }),
      { type: "text", content: "X 的开头改好了。" },
    );
    await send("X 的开头更有力一点");
    await tid("msg-assistant").filter({ hasText: "X 的开头改好了" }).waitFor();
    await waitIdle();
    draftProposal = (await call("proposal.list", { projectId: project.id, ownerId: sessionId, status: "proposed" })).proposals.find((p) => p.kind === "draft_patch");
    assert(draftProposal, "no draft proposal");
    await tid("open-proposal").filter({ hasText: "X 开头更有力" }).click();
    const preview = page.locator("[data-testid=review-draft-preview][data-platform=x]");
    await preview.waitFor();
    await preview.locator("[data-testid=x-post]").first().filter({ hasText: "（每天二十分钟）" }).waitFor();
    // The counters are X's weighted count of the proposed post (CJK weighs 2).
    await page.waitForFunction(() => {
      const c = document.querySelector("[data-testid=review-draft-preview] [data-testid=x-count]");
      return c && !c.textContent.startsWith("0/");
    }, null, { timeout: 5000 });
    assert(await tid("review-accept-all").isDisabled(), "a ready draft can be changed without confirming");
    await shot("review-05-draft-preview-en-light");
    await tid("review-confirm-final").check();
    await tid("review-accept-all").click();
    await tid("proposal-review").and(page.locator("[data-status=accepted]")).waitFor();
    const d = await call("platformDraft.get", { projectId: project.id, platform: "x" });
    assert(d.revision > xDraft.revision && d.content.posts[0].text.includes("（每天二十分钟）"), `draft after accept: r${d.revision}`);
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });
  });

  await check("two proposals staged and applied as one version", async () => {
    const headBefore = (await call("project.get", { projectId: project.id })).head;
    // The second is written over the first, staged (a newer proposal of the same
    // session would otherwise replace an open one).
    const turns = [
      ["习惯一更具体", "习惯一：前一晚写下第二天的题目。", "习惯一：前一晚写下第二天的题目和第一句话。"],
      ["习惯二更具体", "习惯二：起床后先写，不看手机。", "习惯二：起床后先写，手机放在另一个房间。"],
    ];
    for (const [summary, find, replace] of turns) {
      await script(toolCall(`call_${summary}`, "propose_source_patch", { summary, edits: [{ find, replace }] }), { type: "text", content: `${summary}：已提出。` });
      await send(`${summary}一点`);
      await tid("msg-assistant").filter({ hasText: `${summary}：已提出。` }).waitFor();
      await waitIdle();
      await tid("open-proposal").filter({ hasText: summary }).click();
      await tid("review-stage").click();
      await tid("proposal-review").waitFor({ state: "detached" });
    }
    await tid("staging-bar").filter({ hasText: "2" }).waitFor();
    let p = await call("project.get", { projectId: project.id });
    assert(p.head === headBefore && !p.source.includes("第一句话"), "staging changed the project");
    await shot("review-06-staged-en-light");
    await tid("staging-apply").click();
    await tid("staging-bar").waitFor({ state: "detached" });
    p = await call("project.get", { projectId: project.id });
    assert(p.head === headBefore + 1, `head ${p.head}, expected ${headBefore + 1}: one version for both`);
    assert(p.source.includes("第二天的题目和第一句话") && p.source.includes("手机放在另一个房间"), "not both changes in the source");
    await page.locator(".doc-source .cm-content").filter({ hasText: "手机放在另一个房间" }).waitFor();
  });

  await check("a turn keeps running while the panel is closed, and the panel shows its end when reopened", async () => {
    await script({ type: "text", content: "慢慢写完的回答。", delayMs: 1500 });
    await send("慢慢回答");
    await tid("stop").waitFor();
    await page.keyboard.press(`${mod}+j`);
    await tid("ai-panel").waitFor({ state: "detached" });
    // The turn goes on without the panel: the log gets its answer.
    const deadline = Date.now() + 10_000;
    let status = "";
    while (Date.now() < deadline) {
      status = (await call("session.get", { sessionId })).status;
      if (status === "idle") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert(status === "idle", `the turn did not end while the panel was closed: ${status}`);
    await page.keyboard.press(`${mod}+j`);
    await tid("msg-assistant").filter({ hasText: "慢慢写完的回答。" }).waitFor();
    assert((await tid("stop").count()) === 0, "Stop is still shown after the turn ended");
  });

  await check("at 1024×700 in Chinese the conversation keeps its room: idle, while Stop shows, and under a permission prompt", async () => {
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.evaluate(() => {
      window.localStorage.setItem("inkstone.lang", "zh");
      window.localStorage.setItem("inkstone.theme", "light");
    });
    // From the page's first frame, every position the feed takes: the panel's header
    // must not grow once the session's context, checkpoints and intent have loaded.
    await page.addInitScript(() => {
      const seen = [];
      window.__feedTops = seen;
      const started = performance.now();
      const frame = () => {
        const feed = document.querySelector("[data-testid=timeline]");
        const head = document.querySelector("[data-testid=session-head]");
        if (feed) {
          const top = Math.round(feed.getBoundingClientRect().top * 10) / 10;
          const last = seen.at(-1);
          if (!last || last.top !== top) seen.push({ ms: Math.round(performance.now() - started), top, head: head ? Math.round(head.getBoundingClientRect().height) : null });
        }
        if (seen.length < 50 && performance.now() - started < 20_000) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("composer-input").waitFor();
    const geometry = () =>
      page.evaluate(() => {
        const box = (id) => document.querySelector(`[data-testid=${id}]`)?.getBoundingClientRect() ?? null;
        const prompt = document.querySelector("[data-testid=approval]");
        return {
          panel: box("ai-panel"),
          feed: box("timeline"),
          composer: box("composer-input"),
          prompt: prompt ? { ...prompt.getBoundingClientRect().toJSON(), scrolls: prompt.scrollHeight > prompt.clientHeight + 1 } : null,
          allow: box("allow-once"),
        };
      });
    // The panel's header fills in as the session's context, checkpoints and intent
    // load: measure once it has stopped moving.
    const settled = async () => {
      let last = await geometry();
      for (let i = 0; i < 40; i++) {
        await page.waitForTimeout(150);
        const now = await geometry();
        if (Math.abs(now.feed.top - last.feed.top) < 1 && Math.abs(now.feed.height - last.feed.height) < 1) return now;
        last = now;
      }
      return last;
    };
    await tid("context-meter").waitFor();
    const idle = await settled();
    await shot("review-10-room-idle-zh-1024");
    // The feed stayed where it first appeared: the header kept its room while loading.
    const tops = await page.evaluate(() => window.__feedTops ?? []);
    assert(tops.length > 0, "the feed's position was not recorded");
    console.log(`# feed top after the panel opened: ${JSON.stringify(tops)}`);
    assert(
      tops.every((p) => Math.abs(p.top - idle.feed.top) < 1),
      `the feed moved after the panel opened (the header grew as it loaded): ${JSON.stringify(tops)}, settled at ${idle.feed.top}`,
    );
    assert(idle.feed.height >= idle.panel.height * 0.5, `idle: the feed is ${Math.round(idle.feed.height)} of ${Math.round(idle.panel.height)} px`);
    // Stop appears without moving anything below the session bar.
    await script({ type: "text", content: "慢慢写完的第二个回答。", delayMs: 1500 });
    await send("再慢慢回答一次");
    await tid("stop").waitFor();
    const running = await settled();
    await shot("review-11-room-stop-zh-1024");
    assert(Math.abs(running.feed.top - idle.feed.top) < 1, `Stop moved the feed from ${idle.feed.top} to ${running.feed.top}`);
    // The status bar's items (saved, version, words, model, context) each stay on one line.
    const broken = await page.evaluate(() =>
      [...document.querySelectorAll("[data-testid=statusbar] > span")]
        .filter((e) => e.getClientRects().length > 1 || e.getBoundingClientRect().height > 24)
        .map((e) => e.textContent),
    );
    assert(broken.length === 0, `status bar items broken over lines: ${JSON.stringify(broken)}`);
    await tid("msg-assistant").filter({ hasText: "慢慢写完的第二个回答。" }).waitFor();
    await waitIdle();
    // A permission prompt scrolls inside its own height; the feed keeps room and the
    // prompt's buttons stay on screen above the composer.
    const body = "这里可以举一个具体的例子：比如前一晚写下的题目是什么，第二天早上写了多少字。".repeat(4);
    await script(toolCall("call_comment", "create_project_comment", { body, quote: "起床后先写" }), { type: "text", content: "好的，不加评论。" });
    await send("在习惯二那里加个评论");
    await tid("approval").waitFor();
    await tid("tool-input-what").filter({ hasText: "在第 3 段“起床后先写”处添加评论" }).waitFor();
    const asking = await geometry();
    await shot("review-12-room-prompt-zh-1024");
    assert(asking.feed.height >= asking.panel.height * 0.25, `with a prompt: the feed is ${Math.round(asking.feed.height)} of ${Math.round(asking.panel.height)} px`);
    assert(asking.allow.bottom <= asking.composer.top && asking.allow.top >= asking.prompt.top, "the prompt's buttons are not on screen above the composer");
    assert(!(await page.locator("[data-testid=approval]").textContent()).includes("create_project_comment"), "the prompt shows the tool's name");
    await tid("deny").click();
    await tid("deny-reason").fill("先不加");
    await tid("deny-confirm").click();
    await tid("msg-assistant").filter({ hasText: "好的，不加评论。" }).waitFor();
    await waitIdle();
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  await check("the new states in both languages and themes", async () => {
    await looks("review-07-draft-preview", async () => {
      await tid("proposal-chip").filter({ hasText: "X 开头更有力" }).click();
      await page.locator("[data-testid=review-draft-preview] [data-testid=x-post]").first().waitFor();
    });
    await page.keyboard.press("Escape");
    await looks("review-08-candidates", async () => {
      await tid("proposal-chip").filter({ hasText: "三个标题备选" }).click();
      await tid("candidates").waitFor();
    });
    await page.keyboard.press("Escape");
    await looks("review-09-timeline", async (lang) => {
      await tid("decision").filter({ hasText: "习惯三要保留" }).waitFor();
      if (lang === "zh") await tid("composer-input").and(page.locator("[placeholder]")).waitFor();
    });
  });

  await check("in Chinese, a turn's feed and its checkpoints show no English wording", async () => {
    await page.evaluate(() => {
      window.localStorage.setItem("inkstone.lang", "zh");
      window.localStorage.setItem("inkstone.theme", "light");
    });
    await page.reload({ waitUntil: "commit" });
    await openProject();
    await tid("composer-input").waitFor();
    // Two proposals in one turn: the harness keeps a checkpoint before and after it.
    await script(
      {
        type: "toolCalls",
        calls: [
          { id: "call_t2", name: "propose_title_candidates", arguments: JSON.stringify({ summary: "再来两个标题", candidates: [{ text: "二十分钟的早晨" }, { text: "先写再说" }] }) },
          { id: "call_g2", name: "propose_tags", arguments: JSON.stringify({ platform: "xiaohongshu", summary: "再选几个话题", candidates: [{ text: "晨间写作" }, { text: "习惯养成" }] }) },
        ],
      },
      { type: "text", content: "标题和话题都给了。" },
    );
    await send("再给两个标题和几个话题");
    await tid("msg-assistant").filter({ hasText: "标题和话题都给了。" }).waitFor();
    await waitIdle();
    await tid("checkpoints-toggle").filter({ hasText: "2" }).waitFor();
    await tid("checkpoints-toggle").click();
    const names = await tid("checkpoint-name").allTextContents();
    assert(names.length === 2, `checkpoints: ${JSON.stringify(names)}`);
    // The feed from this turn's message on.
    const feed = await tid("timeline").innerText();
    const turn = feed.slice(feed.lastIndexOf("再给两个标题和几个话题"));
    const shown = [...names, turn].join("\n");
    await shot("review-13-checkpoints-zh");
    // Names (the model, a platform's X) are not wording; English words are.
    const english = shown.match(/[A-Za-z]{2,}/g) ?? [];
    assert(english.length === 0, `English in the Chinese feed or checkpoints: ${JSON.stringify(english)} in ${JSON.stringify(shown)}`);
    await tid("checkpoints-toggle").click();
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[49]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
