#!/usr/bin/env node
// Browser-mode end-to-end test of team sync: a real `inkstone-server` (embedded store in
// a temporary folder), `inkstone-cli serve` (the server token goes to the Linux kernel
// keyring, INKSTONE_KEYCHAIN=keyutils, inside a throwaway session keyring) and Debian's
// Chromium via playwright-core.
//
//   node tests/e2e/browser/sync.mjs --cli target/debug/inkstone-cli \
//        --server target/debug/inkstone-server [--shots DIR] [--ui-dir DIR] [--port-base N]
//
// Settings → Workspace connects with the server's URL and the owner's invite token; a
// version saved with Ctrl+S reaches the server (seen on the server's own API) and the
// sidebar's sync state goes from pending to synced; the members list shows the owner;
// an invite shows the new token once (it works against the server) and the member
// appears; revoking asks first and the token stops working; in Chinese, a server that
// is down is said in Chinese with what to do, and the waiting version goes when it is
// back; a teammate (Boris, a second data folder and browser, in Chinese at 1024×700) gets
// the project without a reload, and while he has it open Olga's new version shows in his
// editor at once, named, and his next keystroke keeps her paragraph (and his version
// reaches her editor the same way); the sync popover names projects, syncs now and
// closes on Esc; disconnecting asks first, says what was kept, and leaves the project
// untouched. While sync brings nothing, the window reads nothing at all: the engine
// pushes the status over the one open `sync.watch` stream (no `sync.status` poll, no
// project re-read); a conflict Boris resolves reaches Olga's open editor labelled a
// resolution (toast, History; the server holds the origin); and Olga's window regaining
// focus syncs at once (Boris's next version is in her editor without a pull of hers).
//
// --port-base N puts the workspace server on N, Olga's app on N+1 and Boris's on N+2
// (all on 127.0.0.1); without it the system picks free ports.
//
// Prints `browser-e2e-sync: N passed, M failed` and exits non-zero on any failure.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, sleep, startChild, stopChild, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 180_000;
const STEP_TIMEOUT_MS = 15_000;

const args = parseArgs(process.argv.slice(2), {
  script: "sync.mjs",
  usage: "node tests/e2e/browser/sync.mjs --cli <inkstone-cli> --server <inkstone-server> [--shots DIR] [--ui-dir DIR] [--port-base N]",
  flags: { "--cli": "cli", "--server": "server", "--shots": "shots", "--ui-dir": "uiDir", "--port-base": "portBase" },
  required: ["cli", "server"],
});
const cliPath = resolve(args.cli);
const serverPath = resolve(args.server);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
if (!existsSync(serverPath)) args.fail(`no such binary: ${serverPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-sync-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("sync.mjs", args.uiDir);
const portBase = args.portBase === null ? null : Number(args.portBase);
if (portBase !== null && !(Number.isInteger(portBase) && portBase > 0 && portBase < 65533)) args.fail(`not a port: ${args.portBase}`);
/** The port of the n-th process (0: the workspace server, 1: Olga's app, 2: Boris's). */
const port = (n) => (portBase === null ? 0 : portBase + n);
// A throwaway session keyring when keyctl is there; otherwise the user's session keyring.
const hasKeyctl = spawnSync("keyctl", ["--version"], { stdio: "ignore" }).status === 0;
const chromium = playwrightChromium();

const suite = createSuite({ script: "sync.mjs", summary: "browser-e2e-sync", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-sync-data-"));
const dataDirB = mkdtempSync(join(tmpdir(), "inkstone-browser-sync-data-b-"));
suite.onCleanup(() => rmSync(dataDirB, { recursive: true, force: true }));
const serverDir = mkdtempSync(join(tmpdir(), "inkstone-browser-sync-server-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
suite.onCleanup(() => rmSync(serverDir, { recursive: true, force: true }));

/** Calls the workspace server with a member's token; returns [status, body]. */
async function server(url, token, path, init = {}) {
  const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
  const text = await res.text();
  return [res.status, text ? JSON.parse(text) : null];
}

async function main() {
  // The operator's command: a workspace and its owner's token (printed once).
  let owner;
  const created = await check("inkstone-server creates a workspace and its owner's token", async () => {
    const out = spawnSync(serverPath, ["--data-dir", serverDir, "workspace", "create", "团队", "--owner", "Olga"], { encoding: "utf8" });
    assert(out.status === 0, `workspace create: ${out.stderr}`);
    const m = /^token (isk_[0-9a-f]{64}) \(id (tok_[0-9a-f]+);/m.exec(out.stdout);
    assert(m, `no token line in: ${out.stdout}`);
    owner = { token: m[1], tokenId: m[2] };
  });
  if (!created) return;

  let serverUrl;
  const serverHold = {};
  const serve = (addr) =>
    startChild(suite, "inkstone-server", serverPath, ["--data-dir", serverDir, "serve", "--addr", addr], { ...process.env, RUST_BACKTRACE: "1" }, /^INKSTONE_SERVER_URL=(\S+)$/, serverHold);
  const serverOk = await check("inkstone-server serves on loopback", async () => {
    serverUrl = await serve(`127.0.0.1:${port(0)}`);
  });
  if (!serverOk) return;

  /** An `inkstone-cli serve` on its own data folder (and, with keyctl, its own session keyring). */
  const serveApp = (label, dir, appPort) => {
    const env = { ...process.env, RUST_BACKTRACE: "1", INKSTONE_KEYCHAIN: "keyutils" };
    const serveArgs = ["--data-dir", dir, "serve", "--port", String(appPort)];
    if (args.uiDir) serveArgs.push("--ui-dir", uiDist);
    return hasKeyctl
      ? startChild(suite, label, "keyctl", ["session", "-", cliPath, ...serveArgs], env, /^INKSTONE_URL=(\S+)$/)
      : startChild(suite, label, cliPath, serveArgs, env, /^INKSTONE_URL=(\S+)$/);
  };
  let url;
  const serveOk = await check("inkstone-cli serve starts with the kernel keyring", async () => {
    url = await serveApp("inkstone-cli serve", dataDir, port(1));
  });
  if (!serveOk) return;
  const origin = new URL(url).origin;
  const launch = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  const call = (method, params) => api(origin, launch, method, params);
  console.log(`# ${origin}; workspace server at ${serverUrl}; screenshots in ${shots}`);

  await call("workspace.update", { displayName: "Olga" });
  const project = await call("project.create", { title: "春天的信", source: "# 春天的信\n\n第一段。\n" });

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
  const toast = (text) => page.locator("[data-testid=toast]", { hasText: text }).first().waitFor();
  const syncState = () => tid("sync-status").getAttribute("data-state");
  const waitSyncState = (state) =>
    page.waitForFunction((s) => document.querySelector("[data-testid=sync-status]")?.getAttribute("data-state") === s, state, { timeout: 20_000 });

  await check("the sidebar says local only; Settings → Workspace connects with the URL and the invite token", async () => {
    await page.goto(url, { waitUntil: "commit" });
    await tid("sync-status").waitFor();
    assert((await syncState()) === "notConnected", `state before connecting: ${await syncState()}`);
    await tid("open-settings").click();
    await tid("settings-workspace").click();
    await tid("sync-url").fill(serverUrl);
    await tid("sync-token").focus();
    await page.keyboard.type(owner.token); // typed, as a person pastes it; never set by value
    assert((await tid("sync-token").getAttribute("type")) === "password", "the token field is not masked");
    assert((await tid("sync-plain-http").count()) === 0, "a loopback URL needs no plain-HTTP confirmation");
    await tid("sync-connect").click();
    await toast("Connected to the workspace server");
    const connection = await tid("sync-connection").innerText();
    assert(connection.includes("团队") && connection.includes("Olga") && connection.includes("(Owner)"), `connection: ${connection}`);
    assert(connection.includes(`…${owner.token.slice(-4)}`), `the fingerprint is shown: ${connection}`);
    assert(!connection.includes(owner.token.slice(4, 20)), "the token is shown");
    assert((await tid("sync-token").inputValue()) === "", "the token field is cleared");
    await shot("sync-01-connected-en-light");
  });

  await check("the members list shows the owner (you) with the token id", async () => {
    const list = tid("sync-member-list");
    await list.filter({ hasText: "Olga" }).waitFor();
    const text = await list.innerText();
    assert(text.includes("(you)") && text.includes(owner.tokenId), `members: ${text}`);
    await tid("sync-invite-form").waitFor();
  });

  let invitedToken;
  await check("an owner invites a member: the token is shown once, works on the server, and the member appears", async () => {
    await tid("sync-invite-name").fill("维拉");
    await tid("sync-invite-role").selectOption("viewer");
    await tid("sync-invite").click();
    invitedToken = (await tid("sync-invite-token-value").innerText()).trim();
    assert(/^isk_[0-9a-f]{64}$/.test(invitedToken), `invite token: ${invitedToken}`);
    assert((await tid("sync-invite-token").innerText()).includes("Shown this once"), "no warning with the token");
    const [status, body] = await server(serverUrl, invitedToken, "/v1/workspace");
    assert(status === 200 && body.me.name === "维拉" && body.me.role === "viewer", `the invited token on the server: ${status} ${JSON.stringify(body)}`);
    await tid("sync-member-list").filter({ hasText: "维拉" }).waitFor();
    await shot("sync-02-invited-en-light");
    await tid("sync-invite-done").click();
    await tid("sync-invite-token").waitFor({ state: "detached" });
    assert(!(await page.content()).includes(invitedToken.slice(4)), "the token is still on the page");
  });

  await check("revoking asks first; then the member's token stops working", async () => {
    const row = tid("sync-member-list").locator("li", { hasText: "维拉" });
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("group").waitFor();
    await shot("sync-03-revoke-confirm-en-light");
    await row.locator("[data-testid$=-confirm]").click();
    await toast("Revoked 维拉’s token");
    await row.filter({ hasText: "revoked" }).waitFor();
    const [status] = await server(serverUrl, invitedToken, "/v1/workspace");
    assert(status === 401, `a revoked token answered ${status}`);
  });

  await check("Ctrl+S saves a version; the sidebar goes to synced and the server holds it with its author", async () => {
    await page.keyboard.press("Escape");
    await page.locator("[data-testid=project-item]", { hasText: "春天的信" }).click();
    await tid("editor-content").click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("第二段。");
    await page.keyboard.press("Control+S");
    await tid("version-message").waitFor();
    await page.keyboard.type("first");
    await page.keyboard.press("Enter");
    await toast("Saved as version 1");
    await waitSyncState("synced");
    let versions = [];
    for (let i = 0; i < 50 && versions.length === 0; i++) {
      const [, changes] = await server(serverUrl, owner.token, "/v1/changes?since=0");
      versions = changes.versions;
      if (versions.length === 0) await sleep(100);
    }
    assert(versions.length === 1 && versions[0].projectId === project.id, `on the server: ${JSON.stringify(versions)}`);
    assert(versions[0].author === "Olga" && versions[0].source.includes("第二段。"), `the server's version: ${JSON.stringify(versions[0])}`);
    assert((await tid("sync-status").innerText()).includes("Synced"), await tid("sync-status").innerText());
    await tid("sync-status").click();
    await tid("sync-jobs-done").filter({ hasText: "春天的信 · v1 → server v1 · on the server" }).waitFor();
    assert((await tid("sync-popover").getByRole("heading", { level: 3 }).innerText()).startsWith("Sync"), "the popover has no heading");
    // The popover is whole inside the window.
    const box = await tid("sync-popover").boundingBox();
    const view = page.viewportSize();
    assert(box && box.x >= 0 && box.y >= 0 && box.x + box.width <= view.width && box.y + box.height <= view.height, `the popover at ${JSON.stringify(box)} leaves the ${JSON.stringify(view)} window`);
    await shot("sync-04-synced-popover-en-light");
    await page.keyboard.press("Escape");
  });

  await check("in Chinese: a server that cannot be reached is said in Chinese with what to do; when it is back the version goes", async () => {
    await page.evaluate(() => window.localStorage.setItem("inkstone.lang", "zh"));
    await page.reload({ waitUntil: "commit" });
    await page.locator("[data-testid=project-item]", { hasText: "春天的信" }).click();
    await waitSyncState("synced");
    await stopChild(serverHold.child);
    await tid("editor-content").click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("第三段。");
    await page.keyboard.press("Control+S");
    await tid("version-message").waitFor();
    await page.keyboard.type("离线时保存");
    await page.keyboard.press("Enter");
    await toast("已保存为第 2 版");
    await waitSyncState("offline");
    await tid("sync-status").click();
    const problem = tid("sync-problem");
    await problem.waitFor();
    assert((await problem.getAttribute("data-code")) === "UNREACHABLE", `code: ${await problem.getAttribute("data-code")}`);
    assert((await problem.innerText()).includes("无法连接工作区服务器"), `problem: ${await problem.innerText()}`);
    // Everything the app words itself is Chinese (the first line holds names and the URL).
    const said = [await problem.innerText(), await tid("sync-jobs").innerText(), await tid("sync-status").innerText()].join("\n");
    assert(!/[A-Za-z]{3,}/.test(said), `English in the Chinese sync popover: ${said}`);
    await shot("sync-05-offline-popover-zh-light");
    await page.keyboard.press("Escape");
    // The server comes back on the same address: the waiting version goes on its own.
    await serve(new URL(serverUrl).host);
    await waitSyncState("synced");
    let versions = [];
    for (let i = 0; i < 50 && versions.length < 2; i++) {
      const [, changes] = await server(serverUrl, owner.token, "/v1/changes?since=0");
      versions = changes.versions;
      if (versions.length < 2) await sleep(100);
    }
    assert(versions.length === 2 && versions[1].source.includes("第三段。"), `on the server: ${versions.length} versions`);
    await page.evaluate(() => window.localStorage.setItem("inkstone.lang", "en"));
    await page.reload({ waitUntil: "commit" });
  });

  // Boris: a second data folder and a second browser, in Chinese at 1024×700.
  let pageB;
  let callB;
  const tidB = (id) => pageB.locator(`[data-testid=${id}]`);
  const toastB = (text) => pageB.locator("[data-testid=toast]", { hasText: text }).first().waitFor();
  const shotB = (name) => pageB.screenshot({ path: join(shots, `${name}.png`) });
  suite.onFailure = async (name) => {
    await shot(name);
    if (pageB) await shotB(`${name}-boris`).catch(() => undefined);
  };
  const editorTextB = () => tidB("editor-content").innerText();
  /** Waits until the server holds `n` versions of the project; returns them. */
  const serverVersions = async (n) => {
    let versions = [];
    for (let i = 0; i < 100 && versions.length < n; i++) {
      const [, changes] = await server(serverUrl, owner.token, "/v1/changes?since=0");
      versions = changes.versions.filter((v) => v.projectId === project.id);
      if (versions.length < n) await sleep(100);
    }
    assert(versions.length === n, `the server holds ${versions.length} versions, not ${n}`);
    return versions;
  };

  const teamOk = await check("a teammate's data folder gets the project without a reload", async () => {
    const invite = await call("sync.invite", { name: "Boris", role: "editor" });
    const urlB = await serveApp("inkstone-cli serve (Boris)", dataDirB, port(2));
    const originB = new URL(urlB).origin;
    const launchB = new URLSearchParams(new URL(urlB).hash.slice(1)).get("token");
    callB = (method, params) => api(originB, launchB, method, params);
    await callB("workspace.update", { displayName: "Boris" });
    const contextB = await browser.newContext({ locale: "zh-CN", colorScheme: "light", viewport: { width: 1024, height: 700 } });
    contextB.setDefaultTimeout(STEP_TIMEOUT_MS);
    await contextB.addInitScript(() => {
      window.localStorage.setItem("inkstone.localModelOffer", "dismissed");
      window.localStorage.setItem("inkstone.lang", "zh");
    });
    pageB = await contextB.newPage();
    pageB.on("pageerror", (e) => pageErrors.push(`Boris: ${e}`));
    pageB.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(`Boris console: ${m.text()}`);
    });
    await pageB.goto(urlB, { waitUntil: "commit" });
    await tidB("sync-status").waitFor();
    // Connected behind the page's back: the engine pushes the new status to the window's
    // subscription and the list follows.
    await callB("sync.connect", { serverUrl, token: invite.token });
    await pageB.locator("[data-testid=project-item]", { hasText: "春天的信" }).waitFor({ timeout: 20_000 });
    await pageB.locator("[data-testid=project-item]", { hasText: "春天的信" }).click();
    await pageB.waitForFunction(() => document.querySelector("[data-testid=editor-content]")?.textContent?.includes("第三段。"));
    await tidB("tab-history").click();
    await tidB("version-item").first().waitFor();
    await shotB("sync-07-teammate-opened-zh-1024");
  });

  if (teamOk) {
    await check("Olga saves a version while Boris has the project open: his editor shows her paragraph at once, and his next keystroke keeps it", async () => {
      // Olga (English) adds a paragraph and saves version 3.
      await page.locator("[data-testid=project-item]", { hasText: "春天的信" }).click();
      await tid("editor-content").click();
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Enter");
      await page.keyboard.type("第四段：A 加的。");
      await page.keyboard.press("Control+S");
      await tid("version-message").waitFor();
      await page.keyboard.type("A 的第四段");
      await page.keyboard.press("Enter");
      await toast("Saved as version 3");
      await serverVersions(3);
      // Boris's background cycle pulls it (every 30 s; here at once, as it would).
      await callB("sync.pull", {});
      // No reload: the editor, the status bar and History follow, and say whose it is.
      await pageB.waitForFunction(() => document.querySelector("[data-testid=editor-content]")?.textContent?.includes("第四段：A 加的。"), null, { timeout: 15_000 });
      await toastB("Olga 的第 3 版已同步");
      assert((await tidB("head").innerText()) === "第 3 版", `status bar head: ${await tidB("head").innerText()}`);
      await tidB("version-item").filter({ hasText: "来自 Olga" }).first().waitFor();
      assert((await tidB("conflict").count()) === 0, "a conflict overlay opened");
      await shotB("sync-08-teammate-version-followed-zh-1024");
      // Boris types: his text goes on top of Olga's version, hers stays.
      await tidB("editor-content").click();
      await pageB.keyboard.press("Control+End");
      await pageB.keyboard.type("乙的补充。");
      await pageB.waitForFunction(() => document.querySelector("[data-testid=save-state]")?.getAttribute("data-state") === "saved");
      await sleep(300);
      assert((await tidB("conflict").count()) === 0, "typing after a teammate's version opened a conflict");
      const working = (await callB("project.get", { projectId: project.id })).source;
      assert(working.includes("第四段：A 加的。") && working.includes("乙的补充。"), `Boris's working copy: ${JSON.stringify(working)}`);
      assert((await editorTextB()).includes("第四段：A 加的。"), "Olga's paragraph left Boris's editor");
      // His version reaches the server with both.
      await pageB.keyboard.press("Control+S");
      await tidB("version-message").waitFor();
      await pageB.keyboard.type("乙的补充");
      await pageB.keyboard.press("Enter");
      await toastB("已保存为第 4 版");
      const versions = await serverVersions(4);
      const last = versions[versions.length - 1];
      assert(last.author === "Boris" && last.source.includes("第四段：A 加的。") && last.source.includes("乙的补充。"), `the server's v4: ${JSON.stringify(last)}`);
    });

    await check("Boris's popover names the project, syncs now, and Esc closes it", async () => {
      await tidB("sync-status").click();
      const popover = tidB("sync-popover");
      await popover.waitFor();
      assert((await popover.getByRole("heading", { level: 3 }).innerText()).startsWith("同步"), "no heading");
      await tidB("sync-jobs-done").filter({ hasText: "春天的信 · 第 4 版" }).waitFor();
      await tidB("sync-now").click();
      await pageB.locator("[data-testid=toast]", { hasText: /已是最新|同步完成/ }).first().waitFor();
      const said = await popover.innerText();
      assert(!/[A-Za-z]{3,}/.test(said.replace(/https?:\/\/\S+/g, "").replace(/Boris|Olga|Esc/g, "")), `English in the Chinese popover: ${said}`);
      await shotB("sync-09-popover-zh-1024");
      await tidB("sync-status").focus();
      await pageB.keyboard.press("Escape");
      await popover.waitFor({ state: "detached" });
      // Settings says the same state, and the role in Chinese.
      await tidB("open-settings").click();
      await tidB("settings-workspace").click();
      const connection = await tidB("sync-connection").innerText();
      assert(connection.includes("Boris（编辑者）") && connection.includes("已同步"), `Boris's connection: ${connection}`);
      await shotB("sync-11-settings-zh-1024");
      await pageB.keyboard.press("Escape");
      await tidB("sync-connection").waitFor({ state: "detached" });
    });

    await check("Boris's version reaches Olga's open editor the same way, named", async () => {
      await call("sync.pull", {});
      await page.waitForFunction(() => document.querySelector("[data-testid=editor-content]")?.textContent?.includes("乙的补充。"), null, { timeout: 15_000 });
      await toast("Synced Boris’s version 4");
      assert((await tid("head").innerText()) === "v4", `Olga's head: ${await tid("head").innerText()}`);
    });

    await check("a teammate's version that lands under Boris's unsaved keystrokes: the overlay names her, offers no 'keep mine', and keeps both", async () => {
      // Boris's autosave is held back, so his keystrokes are unsaved when her version lands.
      let release;
      const released = new Promise((r) => (release = r));
      await pageB.route("**/api/project.update", async (route) => {
        await released;
        await route.continue();
      });
      await tidB("editor-content").click();
      await pageB.keyboard.press("Control+Home");
      await pageB.keyboard.type("丙");
      // Olga saves version 5 with a new paragraph.
      await tid("editor-content").click();
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Enter");
      await page.keyboard.type("第五段：A 又加的。");
      await page.keyboard.press("Control+S");
      await tid("version-message").waitFor();
      await page.keyboard.press("Enter");
      await toast("Saved as version 5");
      await serverVersions(5);
      await callB("sync.pull", {});
      release();
      const overlay = tidB("conflict");
      await overlay.waitFor();
      await pageB.waitForFunction(() => document.querySelector("[data-testid=conflict]")?.getAttribute("data-cause") === "teammate");
      const said = await overlay.innerText();
      assert(said.includes("Olga 的第 5 版已同步"), `the overlay: ${said}`);
      assert(!said.includes("另一个窗口"), `the overlay blames another window: ${said}`);
      assert((await tidB("conflict-keep-mine").count()) === 0, "a 'keep mine' against a teammate's version");
      assert(((await tidB("conflict-keep-both").getAttribute("class")) ?? "").includes("primary"), "keeping both is not the default");
      await shotB("sync-10-teammate-under-unsaved-zh-1024");
      await tidB("conflict-keep-both").click();
      await overlay.waitFor({ state: "detached" });
      await pageB.waitForFunction(() => document.querySelector("[data-testid=save-state]")?.getAttribute("data-state") === "saved");
      const working = (await callB("project.get", { projectId: project.id })).source;
      assert(working.startsWith("丙") && working.includes("第五段：A 又加的。") && working.includes("第四段：A 加的。"), `Boris's working copy: ${JSON.stringify(working)}`);
      await pageB.unroute("**/api/project.update");
    });

    await check("while sync brings nothing, Olga's window reads nothing: no sync.status poll, no new subscription, no project re-read", async () => {
      const seen = { status: 0, watch: 0, project: 0 };
      const count = (request) => {
        const path = new URL(request.url()).pathname;
        if (path === "/api/sync.status") seen.status++;
        if (path === "/api/stream/sync.watch") seen.watch++;
        if (path === "/api/project.get") seen.project++;
      };
      page.on("request", count);
      try {
        const marker = (await call("sync.status", {})).changes;
        await sleep(6_000);
        assert((await call("sync.status", {})).changes === marker, "the marker moved while nothing came");
        assert(seen.status === 0, `sync.status reads while idle: ${seen.status}`);
        assert(seen.watch === 0, `sync.watch subscriptions opened while idle: ${seen.watch}`);
        assert(seen.project === 0, `project.get while idle: ${seen.project}`);
        console.log(`# idle 6 s: ${seen.status} sync.status reads, ${seen.watch} new subscriptions, ${seen.project} project reads`);
      } finally {
        page.off("request", count);
      }
    });

    await check("Boris resolves a sync conflict; it reaches Olga's open editor labelled a resolution, in the toast and in History", async () => {
      // Olga saves version 6 (a new last paragraph) and it reaches the server.
      await tid("editor-content").click();
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Enter");
      await page.keyboard.type("第六段：A 的。");
      await page.keyboard.press("Control+S");
      await tid("version-message").waitFor();
      await page.keyboard.press("Enter");
      await toast("Saved as version 6");
      await serverVersions(6);
      // Boris saves on the older head (his first line): the push meets her version.
      await callB("version.create", { projectId: project.id });
      let conflict = null;
      for (let i = 0; i < 100 && !conflict; i++) {
        await callB("sync.push", {}).catch(() => undefined);
        conflict = (await callB("sync.conflicts", {})).conflicts.find((c) => c.projectId === project.id) ?? null;
        if (!conflict) await sleep(100);
      }
      assert(conflict, "no sync conflict on Boris's side");
      assert(conflict.merged, `the edits overlap: ${JSON.stringify(conflict.overlaps)}`);
      const resolved = await callB("sync.resolve", { conflictId: conflict.id, choice: "merged" });
      await callB("sync.push", {});
      const versions = await serverVersions(7);
      const last = versions[versions.length - 1];
      assert(last.origin === "syncResolution" && last.author === "Boris", `the server's v7: ${JSON.stringify({ ...last, source: undefined })}`);
      // Olga's background cycle pulls it (here at once): her editor follows, and says what it is.
      await call("sync.pull", {});
      await page.waitForFunction(() => document.querySelector("[data-testid=editor-content]")?.textContent?.startsWith("丙"), null, { timeout: 15_000 });
      const head = (await call("project.get", { projectId: project.id })).head;
      await toast(`Boris resolved a sync conflict: now showing version ${head}`);
      const mine = (await call("version.get", { projectId: project.id, number: head })).origin;
      assert(mine.type === "pulled" && mine.remoteOrigin === "syncResolution", `Olga's head: ${JSON.stringify(mine)}`);
      assert(resolved.version.origin.type === "syncResolution", "Boris's resolution");
      await tid("tab-history").click();
      await tid("version-item").filter({ hasText: "resolved by Boris · server v7" }).first().waitFor();
      await shot("sync-12-pulled-resolution-en-light");
    });

    await check("Olga's window regaining focus syncs at once: Boris's next version is in her editor without waiting for the background pull", async () => {
      const p = await callB("project.get", { projectId: project.id });
      await callB("project.update", { projectId: project.id, baseRevision: p.revision, source: `${p.source}第八段：乙的。\n` });
      await callB("version.create", { projectId: project.id });
      await serverVersions(8);
      const pulls = [];
      const count = (request) => new URL(request.url()).pathname === "/api/sync.pull" && pulls.push(request);
      page.on("request", count);
      try {
        // The person comes back to the window (the background pull is every 30 s).
        await page.evaluate(() => window.dispatchEvent(new Event("focus")));
        await page.waitForFunction(() => document.querySelector("[data-testid=editor-content]")?.textContent?.includes("第八段：乙的。"), null, { timeout: 5_000 });
        assert(pulls.length === 1, `sync.pull calls on focus: ${pulls.length}`);
        await toast("Synced Boris’s version 8");
      } finally {
        page.off("request", count);
      }
    });
  }

  await check("disconnecting asks first, says nothing was waiting, and keeps the project", async () => {
    const before = (await call("version.list", { projectId: project.id })).versions.length;
    await tid("open-settings").click();
    await tid("settings-workspace").click();
    await tid("settings-sync-disconnect").click();
    assert((await call("sync.status", {})).connected === true, "disconnected before the confirmation");
    await tid("settings-sync-disconnect-confirm").click();
    await toast("Disconnected. Nothing was waiting to be sent.");
    await tid("sync-connection").waitFor({ state: "detached" });
    await waitSyncState("notConnected");
    const versions = (await call("version.list", { projectId: project.id })).versions;
    assert(versions.length === before, `versions after disconnecting: ${versions.length}, before: ${before}`);
    const [status] = await server(serverUrl, owner.token, "/v1/workspace");
    assert(status === 200, "disconnecting revoked nothing on the server");
    await shot("sync-06-disconnected-en-light");
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[49]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
