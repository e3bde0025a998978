#!/usr/bin/env node
// Browser-mode smoke test: `inkstone-cli serve` + Debian's Chromium via playwright-core.
//
//   node tests/e2e/browser/smoke.mjs --cli target/debug/inkstone-cli [--shots DIR] [--ui-dir DIR]
//
// Prints `browser-e2e: N passed, M failed` and exits non-zero on any failure. The server
// and the browser are always stopped; every wait is bounded.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../../..");
const CHROMIUM = "/usr/bin/chromium";
const TOTAL_TIMEOUT_MS = 180_000;
const STEP_TIMEOUT_MS = 15_000;

function parseArgs(argv) {
  const out = { cli: null, shots: null, uiDir: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`missing value for ${a}`);
      return argv[++i];
    };
    if (a === "--cli") out.cli = next();
    else if (a === "--shots") out.shots = next();
    else if (a === "--ui-dir") out.uiDir = next();
    else if (a === "-h" || a === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  if (!out.cli) usage("--cli is required");
  return out;
}

function usage(msg) {
  if (msg) console.error(`smoke.mjs: ${msg}`);
  console.error("usage: node tests/e2e/browser/smoke.mjs --cli <inkstone-cli> [--shots DIR] [--ui-dir DIR]");
  process.exit(2);
}

const args = parseArgs(process.argv.slice(2));
const cliPath = resolve(args.cli);
if (!existsSync(cliPath)) usage(`no such binary: ${cliPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = resolve(args.uiDir ?? join(ROOT, "ui/dist"));
if (!existsSync(join(uiDist, "index.html"))) {
  console.error(`smoke.mjs: ${uiDist}/index.html is missing; run: npm --prefix ui run build`);
  process.exit(2);
}

const requireFromUi = createRequire(join(ROOT, "ui/package.json"));
const { chromium } = requireFromUi("playwright-core");

// ---------------------------------------------------------------------------
// Cleanup that always runs

const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-data-"));
let server = null;
let browser = null;
let cleaned = false;

async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  if (browser) {
    await Promise.race([browser.close().catch(() => undefined), sleep(5000)]);
  }
  if (server && server.exitCode === null && server.signalCode === null) {
    killGroup(server, "SIGTERM");
    const exited = await Promise.race([
      new Promise((r) => server.once("exit", () => r(true))),
      sleep(3000).then(() => false),
    ]);
    if (!exited) killGroup(server, "SIGKILL");
  }
  rmSync(dataDir, { recursive: true, force: true });
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal); // the server runs in its own process group
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    console.error(`smoke.mjs: ${sig}, cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}

const watchdog = setTimeout(() => {
  console.error(`smoke.mjs: gave up after ${TOTAL_TIMEOUT_MS / 1000}s`);
  cleanup().finally(() => {
    console.log(`browser-e2e: ${passed} passed, ${failed + 1} failed`);
    process.exit(1);
  });
}, TOTAL_TIMEOUT_MS);
watchdog.unref();

// ---------------------------------------------------------------------------
// Checks

let passed = 0;
let failed = 0;

async function check(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   - ${name} (${Date.now() - t0} ms)`);
    return true;
  } catch (e) {
    failed++;
    console.log(`FAIL - ${name}: ${e?.message?.split("\n")[0] ?? e}`);
    return false;
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

function startServer() {
  const cmdArgs = ["--data-dir", dataDir, "serve", "--port", "0"];
  if (args.uiDir) cmdArgs.push("--ui-dir", uiDist);
  console.log(`# starting ${cliPath} ${cmdArgs.join(" ")} (cwd ${ROOT})`);
  server = spawn(cliPath, cmdArgs, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, RUST_BACKTRACE: "1" },
  });
  let stderrTail = "";
  server.stderr.setEncoding("utf8");
  server.stderr.on("data", (d) => {
    stderrTail = (stderrTail + d).slice(-4000);
  });
  return new Promise((resolvePromise, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`no INKSTONE_URL line within 30 s; stderr: ${stderrTail}`)), 30_000);
    server.stdout.setEncoding("utf8");
    server.stdout.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        const m = /^INKSTONE_URL=(\S+)$/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolvePromise(m[1]);
        }
      }
    });
    server.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited early (code ${code}, signal ${signal}); stderr: ${stderrTail}`));
    });
    server.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** Raw HTTP request with full control over Host/Origin headers. */
function rawPost(url, path, headers) {
  const u = new URL(url);
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, path, method: "POST", headers: { "Content-Type": "application/json", ...headers }, timeout: 5000 },
      (res) => {
        res.resume();
        res.on("end", () => resolvePromise(res.statusCode));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end("{}");
  });
}

async function main() {
  let url;
  const serverOk = await check("server starts and prints INKSTONE_URL", async () => {
    url = await startServer();
    assert(/^http:\/\/127\.0\.0\.1:\d+\/#token=[^&\s]+/.test(url), `unexpected url ${url}`);
  });
  if (!serverOk) return;
  const origin = new URL(url).origin;
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  console.log(`# ${origin} (token ${token.length} chars); screenshots in ${shots}`);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1200, height: 760 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
  });

  const title = `烟测 smoke ${Date.now().toString(36)}`;
  const item = () => page.locator("[data-testid=project-item]", { hasText: title });

  await check("page loads, lists projects and drops the token from the URL", async () => {
    await page.goto(url, { waitUntil: "load" });
    await page.locator("[data-testid=new-project-title]").waitFor({ state: "visible" });
    await page.locator("[data-testid=project-list]").waitFor({ state: "attached" });
    await page.locator("[data-testid=empty-state]").waitFor({ state: "visible" });
    assert(!page.url().includes("token="), `token still in URL: ${page.url()}`);
    assert((await page.locator("[data-testid=error-banner]").count()) === 0, "error banner shown");
    await page.screenshot({ path: join(shots, "01-empty.png") });
  });

  await check("creates a project typed through the keyboard (Ctrl+N, type, Enter)", async () => {
    await page.locator("body").click({ position: { x: 700, y: 400 } });
    await page.keyboard.press("Control+N");
    const focused = await page.evaluate(() => document.activeElement?.getAttribute("data-testid"));
    assert(focused === "new-project-title", `Ctrl+N focused ${focused}`);
    await page.keyboard.type(title, { delay: 5 });
    await page.keyboard.press("Enter");
    await item().waitFor({ state: "visible" });
    assert((await page.locator("[data-testid=new-project-title]").inputValue()) === "", "input not cleared");
    assert((await page.locator("[data-testid=error-banner]").count()) === 0, "error banner shown");
    await page.screenshot({ path: join(shots, "02-created.png") });
  });

  await check("after a reload the project is still listed", async () => {
    await page.reload({ waitUntil: "load" });
    await item().waitFor({ state: "visible" });
    assert((await item().count()) === 1, "project listed more than once");
    assert((await page.locator("[data-testid=error-banner]").count()) === 0, "error banner shown after reload");
    await page.screenshot({ path: join(shots, "03-reloaded.png") });
  });

  await check("a fresh zh-CN dark context shows the Chinese UI and the project", async () => {
    const zh = await browser.newContext({ locale: "zh-CN", colorScheme: "dark", viewport: { width: 1200, height: 760 } });
    zh.setDefaultTimeout(STEP_TIMEOUT_MS);
    try {
      const p = await zh.newPage();
      await p.goto(url, { waitUntil: "load" });
      await p.locator("[data-testid=project-item]", { hasText: title }).waitFor({ state: "visible" });
      const heading = await p.locator("h1").first().textContent();
      assert(heading === "项目", `heading is ${heading}`);
      await p.screenshot({ path: join(shots, "04-zh-dark.png") });
    } finally {
      await zh.close();
    }
  });

  await check("/api/project.list without the token gets 401, with it 200", async () => {
    const statuses = await page.evaluate(async (tok) => {
      const body = "{}";
      const headers = { "Content-Type": "application/json" };
      const a = await fetch("/api/project.list", { method: "POST", headers, body });
      const b = await fetch("/api/project.list", { method: "POST", headers: { ...headers, Authorization: `Bearer ${tok}` }, body });
      const c = await fetch("/api/project.list", { method: "POST", headers: { ...headers, Authorization: "Bearer wrong" }, body });
      return [a.status, b.status, c.status];
    }, token);
    assert(statuses[0] === 401, `no token: ${statuses[0]}`);
    assert(statuses[1] === 200, `with token: ${statuses[1]}`);
    assert(statuses[2] === 401, `wrong token: ${statuses[2]}`);
  });

  await check("foreign Host and Origin get 403 even with the token", async () => {
    const auth = { Authorization: `Bearer ${token}` };
    const port = new URL(url).port;
    const host = await rawPost(url, "/api/project.list", { ...auth, Host: `evil.example:${port}` });
    const orig = await rawPost(url, "/api/project.list", { ...auth, Origin: "http://evil.example" });
    const same = await rawPost(url, "/api/project.list", { ...auth, Origin: origin });
    assert(host === 403, `foreign Host: ${host}`);
    assert(orig === 403, `foreign Origin: ${orig}`);
    assert(same === 200, `own Origin: ${same}`);
  });

  await check("no page errors", async () => {
    // 401s provoked above on purpose are logged by Chromium as console errors; ignore those.
    const real = pageErrors.filter((e) => !/401|Unauthorized/i.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

let exitCode = 0;
try {
  await main();
} catch (e) {
  failed++;
  console.log(`FAIL - unexpected: ${e?.stack ?? e}`);
} finally {
  await cleanup();
  clearTimeout(watchdog);
  console.log(`# screenshots: ${shots}`);
  console.log(`browser-e2e: ${passed} passed, ${failed} failed`);
  exitCode = failed > 0 || passed === 0 ? 1 : 0;
}
process.exit(exitCode);
