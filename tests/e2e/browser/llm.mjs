#!/usr/bin/env node
// Browser-mode end-to-end test of Settings → AI models and Settings → Usage:
// `inkstone-cli serve` + the scripted OpenAI-compatible TEST server `inkstone-fake-model`
// (never a model) + Debian's Chromium via playwright-core.
//
//   node tests/e2e/browser/llm.mjs --cli target/debug/inkstone-cli \
//        --fake-model target/debug/inkstone-fake-model [--shots DIR] [--ui-dir DIR]
//
// Adds a profile pointing at the fake server, tests it (ok), changes the key to a wrong
// one (the fake server answers 401) and sees the PROVIDER_AUTH hint in place, then checks
// the usage page and its quotas. Keys go to the Linux kernel keyring
// (INKSTONE_KEYCHAIN=keyutils) inside a throwaway session keyring (`keyctl session -`),
// so nothing lands in the user's real keychain.
//
// Prints `browser-e2e-llm: N passed, M failed` and exits non-zero on any failure. Both
// servers and the browser are always stopped; every wait is bounded.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  api,
  assert,
  closeBrowser,
  createSuite,
  launchChromium,
  parseArgs,
  playwrightChromium,
  startChild,
  uiDistOrExit,
} from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 180_000;
const STEP_TIMEOUT_MS = 15_000;
// Test keys for the fake server; they guard nothing.
const GOOD_KEY = "sk-inkstone-e2e-good-key-0001";
const WRONG_KEY = "sk-inkstone-e2e-wrong-key-9999";

const args = parseArgs(process.argv.slice(2), {
  script: "llm.mjs",
  usage: "node tests/e2e/browser/llm.mjs --cli <inkstone-cli> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "fakeModel"],
});
const cliPath = resolve(args.cli);
const fakeModelPath = resolve(args.fakeModel);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(fakeModelPath)) args.fail(`no such binary: ${fakeModelPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-llm-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("llm.mjs", args.uiDir);
// A throwaway session keyring when keyctl is there; otherwise the user's session keyring.
const hasKeyctl = spawnSync("keyctl", ["--version"], { stdio: "ignore" }).status === 0;
const chromium = playwrightChromium();

const suite = createSuite({ script: "llm.mjs", summary: "browser-e2e-llm", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-llm-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

async function main() {
  let modelUrl;
  const fakeOk = await check("the fake model server starts (it requires the good key)", async () => {
    modelUrl = await startChild(
      suite,
      "inkstone-fake-model",
      fakeModelPath,
      ["--addr", "127.0.0.1:0", "--key", GOOD_KEY],
      { ...process.env, RUST_BACKTRACE: "1" },
      /^listening on (http:\/\/127\.0\.0\.1:\d+\/v1)$/,
    );
  });
  if (!fakeOk) return;

  // A keyless fake server on Ollama's usual port stands in for a local Ollama, so the
  // first-run detection has something to find. When the port is taken, that part is skipped.
  let localOllama = false;
  try {
    await startChild(suite, "inkstone-fake-model as a local Ollama", fakeModelPath, ["--addr", "127.0.0.1:11434"], { ...process.env }, /^listening on (http:\/\/127\.0\.0\.1:11434\/v1)$/);
    localOllama = true;
  } catch (e) {
    console.log(`# skip: no stand-in for a local Ollama (${String(e?.message ?? e).split("\n")[0].slice(0, 200)})`);
  }

  let url;
  const serverOk = await check("inkstone-cli serve starts with the kernel keyring", async () => {
    const env = { ...process.env, RUST_BACKTRACE: "1", INKSTONE_KEYCHAIN: "keyutils" };
    delete env.INKSTONE_LLM_API_KEY; // the key must come from the keychain, as a person's would
    const serveArgs = ["--data-dir", dataDir, "serve", "--port", "0"];
    if (args.uiDir) serveArgs.push("--ui-dir", uiDist);
    url = hasKeyctl
      ? await startChild(suite, "inkstone-cli serve", "keyctl", ["session", "-", cliPath, ...serveArgs], env, /^INKSTONE_URL=(\S+)$/)
      : await startChild(suite, "inkstone-cli serve", cliPath, serveArgs, env, /^INKSTONE_URL=(\S+)$/);
    assert(/^http:\/\/127\.0\.0\.1:\d+\/#token=[^&\s]+/.test(url), `unexpected url ${url}`);
  });
  if (!serverOk) return;
  const origin = new URL(url).origin;
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  const call = (method, params) => api(origin, token, method, params);
  console.log(`# ${origin}; fake model at ${modelUrl}; screenshots in ${shots}`);

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const context = await browser.newContext({ locale: "en-US", colorScheme: "light", viewport: { width: 1280, height: 860 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
  });
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
  suite.onFailure = shot;
  const tid = (id) => page.locator(`[data-testid=${id}]`);
  const profileItem = (name) => page.locator(`[data-testid=profile-item][data-name="${name}"]`);
  const calm = () => page.waitForFunction(() => !document.querySelector("[data-testid=toast]"), null, { timeout: 8000 });
  const NAME = "Fake model";

  await check("Settings → AI models with no profiles offers to set one up", async () => {
    await page.goto(url, { waitUntil: "commit" });
    if (localOllama) {
      // First run: the detected local server is offered at launch; “Set it up” opens AI models.
      await tid("local-offer").filter({ hasText: "Ollama" }).waitFor();
      await shot("llm-00-first-run-offer-en-light");
      await tid("local-offer-setup").click();
      await tid("models-empty").waitFor();
      await page.keyboard.press("Escape");
      await tid("local-offer").waitFor({ state: "detached" });
    }
    await tid("open-settings").click();
    await tid("settings-models").click();
    await tid("models-empty").waitFor();
    // The local-server scan takes up to a few hundred ms per usual port.
    await page.waitForFunction(() => !document.querySelector("[data-testid=models-empty] [role=status]"), null, { timeout: 10_000 });
    await shot("llm-01-models-empty-en-light");
  });

  if (localOllama) {
    await check("offers the detected local server; “Use it” fills the form without a key", async () => {
      const offer = tid("detected-local").filter({ hasText: "Ollama is running at http://127.0.0.1:11434/v1." });
      await offer.waitFor();
      await offer.getByRole("button").click();
      await tid("profile-form").waitFor();
      assert((await tid("profile-base-url").inputValue()) === "http://127.0.0.1:11434/v1", "base URL not from the preset");
      assert(await tid("profile-no-key").isChecked(), "a local server should need no key");
      await shot("llm-01b-detected-local-form-en-light");
      const picked = await tid("profile-model-select").inputValue();
      assert(picked === "fake-model", `model not picked from the detected list: ${picked}`);
      await tid("profile-form").getByRole("button", { name: "Cancel" }).click();
      await tid("models-empty").waitFor();
      const focused = await page.evaluate(() => document.activeElement?.getAttribute("data-testid"));
      assert(focused === "profile-new", `focus after cancel: ${focused}`);
    });
  }

  await check("adds a profile pointing at the fake server, with a key that goes to the keychain", async () => {
    await tid("profile-new").click();
    await tid("profile-form").waitFor();
    await tid("profile-name").fill(NAME);
    await tid("profile-base-url").fill(modelUrl);
    // Leaving the field asks the server for its models; without a key this one says 401,
    // so the form says the list needs the key, and the picker falls back to typing the name.
    await tid("profile-api-key").focus();
    await tid("models-state").filter({ hasText: /only with an API key/ }).waitFor();
    if (await tid("profile-model-select").count()) await tid("profile-model-select").selectOption("fake-model");
    else await tid("profile-model").fill("fake-model");
    await tid("profile-api-key").focus();
    await page.keyboard.type(GOOD_KEY); // never `fill` a key from the test into the DOM by value
    assert((await tid("profile-api-key").getAttribute("type")) === "password", "the key field is not masked");
    assert((await tid("plain-http-warning").count()) === 0, "plain-HTTP warning for a loopback URL");
    await shot("llm-02-profile-form-en-light");
    await tid("profile-save").click();
    await profileItem(NAME).waitFor();
    const fp = await profileItem(NAME).locator("[data-testid=key-fingerprint]").textContent();
    assert(fp === `key ••••${GOOD_KEY.slice(-4)}`, `fingerprint shown: ${fp}`);
    const html = await page.content();
    assert(!html.includes(GOOD_KEY), "the key is in the page");
    const stored = (await call("llmProfile.list")).profiles;
    assert(stored.length === 1 && stored[0].isDefault && stored[0].keyFingerprint === `…${GOOD_KEY.slice(-4)}`, `stored: ${JSON.stringify(stored)}`);
    await calm();
  });

  await check("test connection → ok with the model id and latency, in place", async () => {
    await profileItem(NAME).locator("[data-testid=profile-test]").click();
    const result = profileItem(NAME).locator("[data-testid=test-result][data-ok=true]");
    await result.waitFor();
    const text = await result.textContent();
    assert(/Connected: model fake-model, answered in \d+ ms/.test(text), `result: ${text}`);
    assert((await profileItem(NAME).locator("[data-testid=health]").textContent()) === "Working", "health badge not ok");
    await shot("llm-03-test-ok-en-light");
  });

  await check("the model picker lists the server's models through the stored key", async () => {
    await profileItem(NAME).locator("[data-testid=profile-edit]").click();
    await tid("profile-form").waitFor();
    await tid("profile-model-select").waitFor();
    const options = await tid("profile-model-select").locator("option").allTextContents();
    assert(options.includes("fake-model") && options.includes("fake-embed"), `options: ${JSON.stringify(options)}`);
    const placeholder = await tid("profile-api-key").getAttribute("placeholder");
    assert(placeholder === `Stored ••••${GOOD_KEY.slice(-4)}; type to replace`, `placeholder: ${placeholder}`);
    assert((await tid("profile-api-key").inputValue()) === "", "the key came back into the form");
  });

  await check("warns before a key would travel over plain http:// to another machine", async () => {
    await tid("profile-base-url").fill("http://192.0.2.10:8080/v1");
    await tid("profile-api-key").focus();
    await page.keyboard.type("sk-not-sent-anywhere");
    await tid("plain-http-warning").waitFor();
    assert(await tid("profile-save").isDisabled(), "save allowed without confirming plain HTTP");
    await tid("plain-http-warning").scrollIntoViewIfNeeded();
    await shot("llm-04-plain-http-warning-en-light");
    // Put the form back as it was.
    await tid("profile-api-key").fill("");
    await tid("profile-base-url").fill(modelUrl);
    await tid("plain-http-warning").waitFor({ state: "detached" });
  });

  await check("changes the key to a wrong one → test → the PROVIDER_AUTH message and hint in place", async () => {
    await tid("profile-api-key").focus();
    await page.keyboard.type(WRONG_KEY);
    await tid("profile-save").click();
    await tid("profile-form").waitFor({ state: "detached" });
    await profileItem(NAME).locator("[data-testid=key-fingerprint]", { hasText: `key ••••${WRONG_KEY.slice(-4)}` }).waitFor();
    await profileItem(NAME).locator("[data-testid=profile-test]").click();
    const result = profileItem(NAME).locator("[data-testid=test-result][data-ok=false]");
    await result.waitFor();
    assert((await result.getAttribute("data-code")) === "PROVIDER_AUTH", `code ${await result.getAttribute("data-code")}`);
    const text = await result.textContent();
    assert(text.includes("The model provider did not accept the API key."), `result: ${text}`);
    assert(text.includes("Check the API key of this profile; set it again if it changed."), `hint missing: ${text}`);
    assert(!text.includes(WRONG_KEY) && !(await page.content()).includes(WRONG_KEY), "the wrong key is shown");
    assert((await profileItem(NAME).locator("[data-testid=health]").textContent()) === "Failing", "health badge not failed");
    await calm();
    await shot("llm-05-test-401-en-light");
  });

  await check("the usage page charts the calls and tables them by purpose and profile", async () => {
    await tid("settings-usage").click();
    await tid("chart-tokens").waitFor();
    const label = await page.evaluate(() => {
      const svg = document.querySelector("[data-testid=chart-tokens] svg");
      return (svg?.getAttribute("aria-labelledby") ?? "")
        .split(" ")
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ");
    });
    assert(/^Tokens per day, last 30 days Total [\d,]+; highest/.test(label), `chart label: ${label}`);
    const bars = await page.locator("[data-testid=chart-tokens] svg g[data-day]").count();
    assert(bars === 30, `${bars} day slots`);
    const purpose = await tid("usage-by-purpose").textContent();
    assert(purpose.includes("Connection tests"), `by purpose: ${purpose}`);
    assert((await tid("usage-by-profile").textContent()).includes(NAME), "profile row missing");
    const report = await call("usage.report", {});
    assert(report.totals.calls === 2 && report.totals.failedCalls === 1, `report: ${JSON.stringify(report.totals)}`);
    await shot("llm-06-usage-en-light");
  });

  await check("sets a daily token limit on the usage page", async () => {
    await tid("quota-daily").fill("100000");
    await tid("quota-save").click();
    await page.locator("[data-testid=toast]", { hasText: "Limits saved" }).first().waitFor();
    const quotas = await call("usage.getQuotas");
    assert(quotas.dailyTokens === 100000 && quotas.monthlyCost === undefined, `quotas ${JSON.stringify(quotas)}`);
    await tid("quotas").filter({ hasText: /Today: [\d,]+ of 100,000 tokens/ }).waitFor();
    await calm();
    await tid("quota-save").scrollIntoViewIfNeeded();
    await shot("llm-07-usage-quotas-en-light");
  });

  await check("the same screens in Chinese and dark", async () => {
    await tid("settings-general").click();
    await tid("lang-select").selectOption("zh");
    await tid("theme-select").selectOption("dark");
    await tid("settings-models").click();
    await profileItem(NAME).waitFor();
    await profileItem(NAME).locator("[data-testid=profile-test]").click();
    const result = profileItem(NAME).locator("[data-testid=test-result][data-ok=false]");
    await result.waitFor();
    const text = await result.textContent();
    assert(text.includes("模型服务商未接受该 API 密钥。") && text.includes("请检查此配置的 API 密钥"), `zh result: ${text}`);
    await calm();
    await shot("llm-08-test-401-zh-dark");
    await tid("settings-usage").click();
    await tid("chart-tokens").waitFor();
    await shot("llm-09-usage-zh-dark");
    await tid("settings-general").click();
    await tid("lang-select").selectOption("en");
    await tid("theme-select").selectOption("light");
  });

  await check("deletes the profile only after confirming; its key leaves the keychain", async () => {
    await tid("settings-models").click();
    await profileItem(NAME).locator("[data-testid=profile-delete]").click();
    assert((await call("llmProfile.list")).profiles.length === 1, "deleted before confirming");
    await profileItem(NAME).locator("[data-testid=profile-delete-confirm]").click();
    await tid("models-empty").waitFor();
    assert((await call("llmProfile.list")).profiles.length === 0, "profile still stored");
  });

  await check("no page errors", async () => {
    // Chromium logs API calls that fail on purpose as console errors: the model list asked
    // of the fake server without a key (PROVIDER_AUTH, 502) and of an unreachable test
    // address (503). Ignore those.
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 50[23]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
