#!/usr/bin/env node
// Browser-mode end-to-end test of a drafting turn in a small local model's window:
// `inkstone-cli serve` + the scripted TEST server `inkstone-fake-model`
// posing as llama.cpp's server started with `-c 4096` (`--llama-ctx 4096`: `/props`
// says n_ctx 4096, and a request whose prompt and reply limit are over it is refused
// with llama.cpp's own overflow error, so this fails when budgeting breaks) +
// Debian's Chromium via playwright-core.
//
//   node tests/e2e/browser/small-window.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// A llama.cpp profile is tested (the window is read from the server), an article of
// about 6,000 Chinese characters is opened, the person selects one paragraph in the
// editor and asks the AI panel to rewrite it; the scripted model proposes a change of
// that paragraph. Checks: every request fitted the 4,096-token window, the selected
// paragraph and its section were in the request (the rest as an outline), the turn
// completed, and the proposal shows in review for that paragraph.
//
// Prints `browser-e2e-small-window: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, startChild, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 180_000;
const STEP_TIMEOUT_MS = 15_000;
const N_CTX = 4096;

const args = parseArgs(process.argv.slice(2), {
  script: "small-window.mjs",
  usage: "node tests/e2e/browser/small-window.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-small-window-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("small-window.mjs", args.uiDir);
const chromium = playwrightChromium();

const suite = createSuite({ script: "small-window.mjs", summary: "browser-e2e-small-window", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-small-window-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

// About 6,000 Chinese characters: an opening and eight sections of five paragraphs;
// the paragraph the person selects is short, so it is one line in the editor.
const SELECTED = "第5节第3段：这一段要改写，采茶要趁清晨露水未干时进行。";
const REWRITTEN = "第5节第3段：天刚亮，露水还挂在叶尖上，采茶人就已经上山了。";
const SENTENCES = ["清晨的山雾还没散，采茶人已经背着竹篓上了山。", "嫩芽要趁露水未干时采下，手法轻而快。", "炒青的火候全凭经验，老师傅一摸便知。", "一杯新茶，汤色清亮，回甘绵长。"];
const SOURCE = (() => {
  const lines = ["# 春茶", "", "清明前后，山里的茶农开始采摘今年的第一批春茶。", ""];
  for (let section = 1; section <= 8; section++) {
    lines.push(`## 第${section}节`, "");
    for (let paragraph = 1; paragraph <= 5; paragraph++) {
      if (section === 5 && paragraph === 3) {
        lines.push(SELECTED, "");
        continue;
      }
      let text = `第${section}节第${paragraph}段：`;
      for (let i = 0; i < 8; i++) text += SENTENCES[(section + paragraph + i) % SENTENCES.length];
      lines.push(text, "");
    }
  }
  return lines.join("\n");
})();

// A prompt's tokens as the posing server counts them (`posed_prompt_tokens` in
// test-support): a Chinese character a token, other text a token per four characters,
// four a message, and the tool definitions' JSON.
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]/u;
const count = (text) => {
  let wide = 0;
  let other = 0;
  for (const ch of text) {
    if (WIDE.test(ch) || ch.codePointAt(0) >= 0x20000) wide++;
    else other++;
  }
  return wide + Math.ceil(other / 4);
};
const promptTokens = (body) =>
  (body.messages ?? []).reduce((sum, m) => sum + 4 + count(m.content ?? "") + (m.tool_calls ? count(JSON.stringify(m.tool_calls)) : 0), 0) +
  (body.tools ? count(JSON.stringify(body.tools)) : 0);

async function main() {
  let modelUrl;
  const fakeOk = await check("the fake model server starts, posing as llama.cpp with n_ctx 4096", async () => {
    modelUrl = await startChild(
      suite,
      "inkstone-fake-model",
      fakeModelPath,
      ["--addr", "127.0.0.1:0", "--llama-ctx", String(N_CTX)],
      { ...process.env, RUST_BACKTRACE: "1" },
      /^listening on (http:\/\/127\.0\.0\.1:\d+\/v1)$/,
    );
    const props = await (await fetch(`${new URL(modelUrl).origin}/props`)).json();
    assert(props.default_generation_settings?.n_ctx === N_CTX, `/props: ${JSON.stringify(props)}`);
  });
  if (!fakeOk) return;
  const modelOrigin = new URL(modelUrl).origin;
  const script = async (...replies) => {
    const res = await fetch(`${modelOrigin}/_test/script`, { method: "POST", body: JSON.stringify(replies) });
    assert(res.status === 200, `scripting the fake model: ${res.status} ${await res.text()}`);
  };
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
  console.log(`# ${origin}; fake llama.cpp at ${modelUrl}; screenshots in ${shots}`);

  await check("a llama.cpp profile's test reads the 4,096-token window from the server", async () => {
    const preset = (await call("llmProfile.presets", {})).presets.find((p) => p.id === "llama-cpp");
    assert(preset, "no llama.cpp preset");
    await call("llmProfile.create", {
      name: "llama.cpp",
      baseUrl: modelUrl,
      model: "fake-model",
      keyRequired: preset.keyRequired,
      supportsJsonSchema: preset.supportsJsonSchema,
      schemaForm: preset.schemaForm,
      toolLoading: preset.toolLoading,
    });
    const tested = await call("llmProfile.test", { profile: "llama.cpp" });
    assert(tested.ok, `test: ${JSON.stringify(tested.error)}`);
    assert(tested.profile.contextWindow === N_CTX && tested.profile.contextWindowOrigin === "server", `window: ${tested.profile.contextWindow} (${tested.profile.contextWindowOrigin})`);
  });

  const chars = [...SOURCE].length;
  assert(chars >= 5500 && chars <= 6500, `the article has ${chars} characters`);
  const project = await call("project.create", { title: "春茶", source: SOURCE });

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

  const before = (await chatRequests()).length;
  await check("the person selects one paragraph of the long article and asks the AI panel to rewrite it", async () => {
    await page.goto(url, { waitUntil: "commit" });
    await page.locator(`[data-testid=project-item]`).filter({ hasText: "春茶" }).locator("button").first().click();
    await tid("project-view").waitFor();
    // The editor renders the lines near its viewport: scroll until the paragraph is there.
    const line = page.locator(".doc-source .cm-line", { hasText: SELECTED });
    for (let i = 0; i < 60 && (await line.count()) === 0; i++) {
      await page.locator(".doc-source .cm-scroller").evaluate((el) => el.scrollBy(0, 250));
      await page.waitForTimeout(50);
    }
    await line.scrollIntoViewIfNeeded();
    await line.click();
    await page.keyboard.press("Home");
    await page.keyboard.press("Shift+End");
    await page.keyboard.press(`${mod}+j`);
    await tid("composer-input").waitFor();
    await tid("scope-chip").filter({ hasText: "第5节第3段" }).waitFor();
    await script(
      {
        type: "toolCalls",
        calls: [{ id: "call_patch", name: "propose_source_patch", arguments: JSON.stringify({ summary: "改写第5节第3段，更生动", edits: [{ find: SELECTED, replace: REWRITTEN }] }) }],
      },
      { type: "text", content: "已改写这一段，请在审阅中查看。" },
    );
    await tid("composer-input").click();
    await page.keyboard.type("把这一段改写得更生动");
    await page.keyboard.press("Enter");
    await tid("msg-assistant").filter({ hasText: "已改写这一段" }).waitFor();
    await tid("stop").waitFor({ state: "detached" });
  });

  await check("every request fitted the 4,096-token window, and the turn completed", async () => {
    const requests = (await chatRequests()).slice(before);
    assert(requests.length === 2, `${requests.length} model requests`);
    for (const [i, body] of requests.entries()) {
      const prompt = promptTokens(body);
      const reply = body.max_tokens ?? 0;
      assert(prompt + reply <= N_CTX, `request ${i}: ${prompt} prompt tokens + ${reply} for the reply > ${N_CTX}`);
      assert(reply >= 256, `request ${i} leaves the reply ${reply} tokens`);
    }
    const sessionId = (await call("session.list", { projectId: project.id })).sessions[0].id;
    const ends = (await call("session.events", { sessionId })).events.filter((e) => e.kind === "turn_ended");
    assert(ends.length === 1 && ends[0].payload.reason === "completed", `turn ended: ${JSON.stringify(ends.map((e) => e.payload))}`);
  });

  await check("the selected paragraph and its section were in the request, the rest as an outline, with the compact tools", async () => {
    const [first] = (await chatRequests()).slice(before);
    const system = first.messages[0].content;
    assert(system.includes("by section, as it does not fit whole"), `the article went whole or as an excerpt: ${system.slice(0, 1200)}`);
    assert(system.includes(`selection (the person's latest message is about this part of the source;`) && system.includes(`\n${SELECTED}\n`), "the selected paragraph is not in the request");
    assert(system.includes("§6 第5节 — given in full below") && system.includes("第5节第5段："), "the selection's section is not there in full");
    assert(system.includes("§2 第1节 — ") && !system.includes(SOURCE.split("\n").find((l) => l.startsWith("第1节第2段"))), "the other sections are not outlined");
    const tools = first.tools.map((t) => t.function.name).sort();
    assert(JSON.stringify(tools) === JSON.stringify(["load_tools", "propose_source_patch", "read_section", "search_project_history"]), `tools: ${tools}`);
  });

  await check("the proposal shows in review for the selected paragraph", async () => {
    await tid("proposal-chip").filter({ hasText: "改写第5节第3段" }).waitFor();
    const proposal = (await call("proposal.list", { projectId: project.id })).proposals[0];
    assert(proposal.hunks.length === 1, `hunks: ${proposal.hunks.length}`);
    await tid("open-proposal").filter({ hasText: "改写第5节第3段" }).click();
    await tid("proposal-review").and(page.locator(`[data-proposal=${proposal.id}]`)).waitFor();
    // The hunk is far down the article; the review renders what is near its viewport.
    const hunk = page.locator(`[data-testid=hunk][data-hunk="${proposal.hunks[0].id}"]`);
    for (let i = 0; i < 80 && (await hunk.count()) === 0; i++) {
      await page.locator("[data-testid=merge] .cm-scroller").first().evaluate((el) => el.scrollBy(0, 250));
      await page.waitForTimeout(50);
    }
    await hunk.scrollIntoViewIfNeeded();
    assert((await page.locator("[data-testid=hunk]").count()) === 1, "not one hunk bar");
    const merged = await tid("merge").innerText();
    assert(merged.includes("天刚亮，露水还挂在叶尖上") && merged.includes("采茶要趁清晨露水未干时进行"), "the review does not show the paragraph and its rewrite");
    await shot("small-window-01-review-en-light");
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[49]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
