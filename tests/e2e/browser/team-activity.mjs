#!/usr/bin/env node
// Browser-mode end-to-end test of the team's AI activity: a real
// `inkstone-server` (embedded store in a temporary folder), three `inkstone-cli serve`
// on three data folders (each with its own kernel keyring for its server token when
// keyctl is there), the scripted OpenAI-compatible TEST server `inkstone-fake-model`
// (never a model) and Debian's Chromium via playwright-core.
//
//   node tests/e2e/browser/team-activity.mjs --cli target/debug/inkstone-cli \
//        --server target/debug/inkstone-server --fake-model target/debug/inkstone-fake-model \
//        [--shots DIR] [--ui-dir DIR]
//
// Olga, the owner, turns on "share AI activity" in Settings → Workspace → policy. Boris,
// an editor in his own data folder and browser page, accepts the scripted model's change
// in his AI panel's review; his accepted version reaches the server with its AI origin
// detail (seen on the server's own API). Olga accepts one of her own. In Olga's window,
// Settings → Workspace → AI activity lists Boris's row: his name, the model and the
// provider host, accepted, the project, the server's version; the person filter narrows
// to it, Enter opens what travelled, Export CSV has it; the same in Chinese. Boris's own
// Settings shows only his row (the server answers his token with his row only). Vera, a
// viewer, is told in Settings why she sees none, and the engine and the server refuse
// her with PERMISSION_DENIED / 403 and a message that says why.
//
// Prints `browser-e2e-team-activity: N passed, M failed` and exits non-zero on any failure.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, startChild, startFakeModel, uiDistOrExit, waitFor } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 240_000;
const STEP_TIMEOUT_MS = 30_000;

const args = parseArgs(process.argv.slice(2), {
  script: "team-activity.mjs",
  usage:
    "node tests/e2e/browser/team-activity.mjs --cli <inkstone-cli> --server <inkstone-server> --fake-model <inkstone-fake-model> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--server": "server", "--fake-model": "fakeModel", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli", "server", "fakeModel"],
});
const cliPath = resolve(args.cli);
const serverPath = resolve(args.server);
const fakeModelPath = resolve(args.fakeModel);
for (const path of [cliPath, serverPath, fakeModelPath]) if (!existsSync(path)) args.fail(`no such binary: ${path}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-team-activity-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("team-activity.mjs", args.uiDir);
// A throwaway session keyring per app when keyctl is there; otherwise the user's session keyring.
const hasKeyctl = spawnSync("keyctl", ["--version"], { stdio: "ignore" }).status === 0;
const chromium = playwrightChromium();

const suite = createSuite({ script: "team-activity.mjs", summary: "browser-e2e-team-activity", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const temp = (what) => {
  const dir = mkdtempSync(join(tmpdir(), `inkstone-browser-team-activity-${what}-`));
  suite.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};
const serverDir = temp("server");
const downloads = temp("downloads");

const POEM_B = "# 春晓\n\n春眠不觉晓，\n处处闻啼鸟。\n";
const POEM_A = "# 秋思\n\n枯藤老树昏鸦，\n小桥流水人家。\n";
const mod = process.platform === "darwin" ? "Meta" : "Control";

/** Calls the workspace server with a member's token; returns [status, body]. */
async function server(url, token, path) {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return [res.status, text ? JSON.parse(text) : null];
}

async function main() {
  let model;
  const fakeOk = await check("the scripted model server starts", async () => {
    model = await startFakeModel(suite, fakeModelPath);
  });
  if (!fakeOk) return;
  const { url: modelUrl, script } = model;

  let owner;
  let serverUrl;
  const serverOk = await check("inkstone-server creates a workspace with Olga as owner and serves on loopback", async () => {
    const out = spawnSync(serverPath, ["--data-dir", serverDir, "workspace", "create", "团队", "--owner", "Olga"], { encoding: "utf8" });
    assert(out.status === 0, `workspace create: ${out.stderr}`);
    const m = /^token (isk_[0-9a-f]{64}) \(id (tok_[0-9a-f]+);/m.exec(out.stdout);
    assert(m, `no token line in: ${out.stdout}`);
    owner = m[1];
    serverUrl = await startChild(suite, "inkstone-server", serverPath, ["--data-dir", serverDir, "serve", "--addr", "127.0.0.1:0"], { ...process.env, RUST_BACKTRACE: "1" }, /^INKSTONE_SERVER_URL=(\S+)$/);
  });
  if (!serverOk) return;

  /** A person's app: `inkstone-cli serve` on their own data folder, its API and its URL. */
  const startApp = async (name) => {
    const env = { ...process.env, RUST_BACKTRACE: "1", INKSTONE_KEYCHAIN: "keyutils" };
    delete env.INKSTONE_LLM_API_KEY;
    const serveArgs = ["--data-dir", temp(`data-${name.toLowerCase()}`), "serve", "--port", "0"];
    if (args.uiDir) serveArgs.push("--ui-dir", uiDist);
    const label = `inkstone-cli serve (${name})`;
    const url = hasKeyctl
      ? await startChild(suite, label, "keyctl", ["session", "-", cliPath, ...serveArgs], env, /^INKSTONE_URL=(\S+)$/)
      : await startChild(suite, label, cliPath, serveArgs, env, /^INKSTONE_URL=(\S+)$/);
    const origin = new URL(url).origin;
    const launch = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
    const call = (method, params) => api(origin, launch, method, params);
    /** The raw answer, for a refusal: [status, body]. */
    const raw = async (method, params) => {
      const res = await fetch(`${origin}/api/${method}`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${launch}` }, body: JSON.stringify(params) });
      return [res.status, await res.json()];
    };
    await call("workspace.update", { displayName: name });
    return { name, url, call, raw };
  };

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const pageErrors = [];
  /** A browser page on `app`'s window, in `locale`. */
  const openPage = async (app, locale) => {
    const context = await browser.newContext({ locale, colorScheme: "light", viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const lang = locale.startsWith("zh") ? "zh" : "en";
    await context.addInitScript((l) => {
      window.localStorage.setItem("inkstone.localModelOffer", "dismissed");
      window.localStorage.setItem("inkstone.lang", l);
    }, lang);
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(`${app.name}: ${e}`));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(`${app.name} console: ${m.text()}`);
    });
    await page.goto(app.url, { waitUntil: "commit" });
    await page.locator("[data-testid=sync-status]").waitFor();
    const tid = (id) => page.locator(`[data-testid=${id}]`);
    const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
    suite.onFailure = shot;
    return { page, tid, shot };
  };

  /** In `app`'s window: the scripted model proposes an edit in the AI panel's session and the person accepts it in the review. */
  const acceptAiChange = async (app, { page, tid }, projectId, title, callId, find, replace) => {
    await page.locator("[data-testid=project-item]").filter({ hasText: title }).first().locator("button").first().click();
    await page.locator(`[data-testid=project-view][data-project='${projectId}']`).waitFor();
    await page.keyboard.press(`${mod}+j`);
    await tid("composer-input").waitFor();
    const input = { summary: `${find} → ${replace}`, edits: [{ find, replace }] };
    await script({ type: "toolCalls", calls: [{ id: callId, name: "propose_source_patch", arguments: JSON.stringify(input) }] }, { type: "text", content: "提好了。" });
    await tid("composer-input").fill("改一改");
    await page.keyboard.press(`${mod}+Enter`);
    const proposal = await waitFor("the proposal", async () => {
      const listed = (await app.call("proposal.list", { projectId, status: "proposed" })).proposals;
      return listed.length === 1 ? listed[0].id : null;
    });
    await tid("stop").waitFor({ state: "detached" });
    await page.locator(`[data-testid=proposal-chip][data-proposal='${proposal}']`).first().click();
    await page.locator(`[data-testid=proposal-review][data-proposal='${proposal}'][data-status=proposed]`).waitFor();
    await tid("review-accept-all").click();
    await page.locator(`[data-testid=proposal-review][data-proposal='${proposal}'][data-status=accepted]`).waitFor();
    await page.keyboard.press("Escape");
    await tid("proposal-review").waitFor({ state: "detached" });
    return proposal;
  };

  /** The server's AI activity as `token` sees it, once it holds `n` rows (else what the server holds). */
  const serverRows = async (token, n) => {
    let seen = null;
    try {
      return await waitFor(
        `${n} AI activity rows on the server`,
        async () => {
          const [status, body] = await server(serverUrl, token, "/v1/ai-activity");
          assert(status === 200, `GET /v1/ai-activity: ${status} ${JSON.stringify(body)}`);
          seen = body.entries;
          return body.entries.length === n ? body.entries : null;
        },
        20_000,
        200,
      );
    } catch (e) {
      const [, changes] = await server(serverUrl, owner, "/v1/changes?since=0");
      const versions = (changes?.versions ?? []).map((v) => `${v.projectId} v${v.number} by ${v.author} (${v.origin})`);
      throw new Error(`${e.message}; rows: ${seen?.length}; the server's versions: ${versions.join(", ") || "none"}`);
    }
  };

  /** Opens Settings → Workspace and waits for its AI activity to list `n` rows. */
  const openWorkspaceActivity = async ({ tid }, n) => {
    await tid("open-settings").click();
    await tid("settings-workspace").click();
    await tid("workspace-ai-activity").waitFor();
    await waitFor(`${n} rows in the workspace's AI activity`, async () => (await tid("ai-activity-row").count()) === n);
    await tid("workspace-ai-activity").scrollIntoViewIfNeeded();
  };

  let olga;
  let olgaWin;
  let projectA;
  const olgaOk = await check("Olga connects and, as owner, turns on sharing AI activity in Settings → Workspace", async () => {
    olga = await startApp("Olga");
    console.log(`# workspace server at ${serverUrl}; fake model at ${modelUrl}; screenshots in ${shots}`);
    await olga.call("sync.connect", { serverUrl, token: owner, displayName: "Olga" });
    await olga.call("llmProfile.create", { name: "写作助手", baseUrl: modelUrl, model: "fake-model", contextWindow: 65536 });
    projectA = (await olga.call("project.create", { title: "秋思", source: POEM_A })).id;
    olgaWin = await openPage(olga, "en-US");
    const { tid, page } = olgaWin;
    await tid("open-settings").click();
    await tid("settings-workspace").click();
    await tid("sync-policy-form").waitFor();
    const share = tid("sync-policy-share");
    assert(!(await share.isChecked()), "sharing is on before the owner turned it on");
    await share.check();
    await tid("sync-policy-save").click();
    await page.locator("[data-testid=toast]", { hasText: "Workspace policy saved." }).first().waitFor();
    const [status, body] = await server(serverUrl, owner, "/v1/policy");
    assert(status === 200 && body.policy.shareActivity === true && body.setBy?.name === "Olga", `the server's policy: ${status} ${JSON.stringify(body)}`);
    // Before anyone accepted anything: the section is there, empty.
    await tid("workspace-ai-activity").locator("[data-testid=ai-activity-empty]").waitFor();
    await page.keyboard.press("Escape");
    await tid("sync-connection").waitFor({ state: "detached" });
  });
  if (!olgaOk) return;

  let boris;
  let borisWin;
  let vera;
  let projectB;
  let proposalB;
  let invites;
  const borisOk = await check("Boris (an editor, his own data folder and page) accepts the scripted model's change in his AI panel; it reaches the server with its AI origin", async () => {
    invites = { boris: await olga.call("sync.invite", { name: "Boris", role: "editor" }), vera: await olga.call("sync.invite", { name: "Vera", role: "viewer" }) };
    boris = await startApp("Boris");
    vera = await startApp("Vera");
    await boris.call("sync.connect", { serverUrl, token: invites.boris.token, displayName: "Boris" });
    await vera.call("sync.connect", { serverUrl, token: invites.vera.token, displayName: "Vera" });
    // The policy Olga set reached Boris's app when he connected.
    const policy = (await boris.call("sync.policy", {})).policy;
    assert(policy?.policy.shareActivity === true && policy.setBy === "Olga", `Boris's policy: ${JSON.stringify(policy)}`);
    await boris.call("llmProfile.create", { name: "写作助手", baseUrl: modelUrl, model: "fake-model", contextWindow: 65536 });
    projectB = (await boris.call("project.create", { title: "春晓", source: POEM_B })).id;
    borisWin = await openPage(boris, "en-US");
    proposalB = await acceptAiChange(boris, borisWin, projectB, "春晓", "call_b", "处处闻啼鸟", "处处闻鸟啼");
    // Delivered by the app's own sync (no push asked for): the server keeps the detail.
    const [entry] = await serverRows(owner, 1);
    assert(entry.pushedBy === "Boris" && entry.projectId === projectB && entry.number === 1, `the server's row: ${JSON.stringify(entry)}`);
    const ai = entry.ai;
    assert(ai.acceptedBy === "Boris" && ai.model === "fake-model" && ai.providerHost === "127.0.0.1" && ai.proposalId === proposalB, `the AI origin: ${JSON.stringify(ai)}`);
    assert(ai.through.type === "draftingSession" && ai.nHunks === 1 && ai.promptLayers.length > 0, `the AI origin: ${JSON.stringify(ai)}`);
    // What travelled is the detail, never the conversation.
    const said = JSON.stringify(entry);
    assert(!said.includes("改一改") && !said.includes("提好了"), `the conversation travelled: ${said}`);
  });
  if (!borisOk) return;

  await check("Olga accepts one of her own in her window; the server then holds both", async () => {
    await acceptAiChange(olga, olgaWin, projectA, "秋思", "call_a", "小桥流水人家", "小桥流水谁家");
    const entries = await serverRows(owner, 2);
    assert(JSON.stringify(entries.map((e) => e.pushedBy).sort()) === JSON.stringify(["Boris", "Olga"]), `pushed by: ${entries.map((e) => e.pushedBy)}`);
  });

  let olgaTid;
  await check("Olga's Settings → Workspace → AI activity shows Boris's row: his name, the model and provider host, accepted, the project and server version", async () => {
    const { tid, shot } = olgaWin;
    olgaTid = tid;
    await openWorkspaceActivity(olgaWin, 2);
    const section = tid("workspace-ai-activity");
    assert((await section.innerText()).includes("Every member's accepted AI changes"), "the owner's description");
    const row = section.locator("[data-testid=ai-activity-row]", { hasText: "by Boris" });
    assert((await row.count()) === 1, `rows by Boris: ${await row.count()}`);
    const text = await row.innerText();
    assert((await row.locator("[data-testid=row-model]").innerText()) === "fake-model@127.0.0.1", `model: ${await row.locator("[data-testid=row-model]").innerText()}`);
    assert((await row.locator("[data-testid=row-decision]").innerText()) === "Accepted", `decision: ${text}`);
    assert(text.includes("春晓") && text.includes("Server version 1") && text.includes("Drafting session"), `the row: ${text}`);
    await shot("team-activity-01-owner-sees-boris-en-light");
  });

  await check("the person filter narrows to Boris; Enter opens what travelled; Export CSV has his row", async () => {
    const tid = olgaTid;
    const { page, shot } = olgaWin;
    await tid("workspace-ai-activity").locator("[data-testid=filter-person]").fill("Boris");
    await waitFor("Boris's row only", async () => (await tid("ai-activity-row").count()) === 1 && (await tid("row-actor").innerText()) === "by Boris");
    await tid("ai-activity-list").focus();
    await page.keyboard.press("Enter");
    const detail = tid("ai-activity-synced");
    await detail.waitFor();
    assert((await detail.innerText()).includes(proposalB), `the detail: ${await detail.innerText()}`);
    await shot("team-activity-02-owner-filtered-detail-en-light");
    const [download] = await Promise.all([page.waitForEvent("download"), tid("workspace-ai-activity").locator("[data-testid=ai-activity-export]").click()]);
    const path = join(downloads, download.suggestedFilename());
    await download.saveAs(path);
    const lines = readFileSync(path, "utf8").trim().split(/\r?\n/);
    assert(lines.length === 2 && lines[1].includes("Boris") && lines[1].includes("fake-model") && lines[1].includes(proposalB), `csv: ${lines.join(" / ")}`);
    await page.keyboard.press("Escape");
  });

  await check("the same view in Chinese", async () => {
    await olgaWin.page.context().close();
    olgaWin = await openPage(olga, "zh-CN");
    const { tid, shot } = olgaWin;
    await openWorkspaceActivity(olgaWin, 2);
    const row = tid("workspace-ai-activity").locator("[data-testid=ai-activity-row]", { hasText: "Boris 决定" });
    assert((await row.count()) === 1, "Boris's row in Chinese");
    assert((await row.locator("[data-testid=row-decision]").innerText()) === "已接受", `decision: ${await row.locator("[data-testid=row-decision]").innerText()}`);
    assert((await row.locator("[data-testid=row-model]").innerText()) === "fake-model@127.0.0.1", "the model in Chinese");
    assert((await row.innerText()).includes("写作会话"), `the row: ${await row.innerText()}`);
    await shot("team-activity-03-owner-sees-boris-zh-light");
  });

  await check("an editor sees only his own: Boris's Settings lists his row, not Olga's, and the server answers his token the same", async () => {
    const { tid, shot } = borisWin;
    suite.onFailure = shot;
    await openWorkspaceActivity(borisWin, 1);
    const section = tid("workspace-ai-activity");
    assert((await section.innerText()).includes("Your own accepted AI changes"), "the editor's description");
    assert((await tid("row-actor").innerText()) === "by Boris", `Boris sees: ${await tid("row-actor").innerText()}`);
    await shot("team-activity-04-editor-own-en-light");
    const [status, body] = await server(serverUrl, invites.boris.token, "/v1/ai-activity");
    assert(status === 200 && body.entries.length === 1 && body.entries[0].pushedBy === "Boris", `the server to Boris: ${status} ${JSON.stringify(body)}`);
    const [, filtered] = await server(serverUrl, invites.boris.token, "/v1/ai-activity?person=Olga");
    assert(filtered.entries.length === 0, `the server gave Boris Olga's rows: ${JSON.stringify(filtered)}`);
    const rows = (await boris.call("aiActivity.list", { scope: "workspace", filter: {} })).rows;
    assert(rows.length === 1 && rows[0].actor === "Boris", `Boris's workspace rows: ${JSON.stringify(rows.map((r) => r.actor))}`);
    // Even asking for Olga's by name gives him nothing.
    const hers = (await boris.call("aiActivity.list", { scope: "workspace", filter: { person: "Olga" } })).rows;
    assert(hers.length === 0, `Boris asking for Olga's rows got ${hers.length}`);
  });

  await check("a viewer is refused with a clear message: Vera's Settings says why, the engine says PERMISSION_DENIED, the server 403", async () => {
    const win = await openPage(vera, "en-US");
    const { tid, shot } = win;
    await tid("open-settings").click();
    await tid("settings-workspace").click();
    const note = tid("workspace-ai-activity-viewer");
    await note.waitFor();
    assert((await note.innerText()).includes("you are a viewer"), `Vera's note: ${await note.innerText()}`);
    assert((await tid("workspace-ai-activity").count()) === 0, "a viewer is shown the activity list");
    await shot("team-activity-05-viewer-en-light");
    const [status, body] = await vera.raw("aiActivity.list", { scope: "workspace", filter: {} });
    assert(status !== 200 && body.code === "PERMISSION_DENIED", `Vera's engine answered ${status} ${JSON.stringify(body)}`);
    assert(body.message.includes("Viewers do not see AI activity") && body.message.includes("viewer"), `the message: ${body.message}`);
    assert(body.hints.some((h) => h.id === "owner_only"), `hints: ${JSON.stringify(body.hints)}`);
    const [serverStatus, serverBody] = await server(serverUrl, invites.vera.token, "/v1/ai-activity");
    assert(serverStatus === 403 && !JSON.stringify(serverBody).includes("Boris"), `the server to Vera: ${serverStatus} ${JSON.stringify(serverBody)}`);
    await win.page.context().close();
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[349]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
