// What every end-to-end script needs around its checks: argument parsing, children in
// their own process groups that are always stopped, the check counter, a watchdog that
// bounds the whole run, cleanup on a signal, and the closing summary line. Used by
// browser/smoke.mjs, browser/llm.mjs and desktop/smoke.mjs.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Polls `fn` every `everyMs` until it returns something truthy (its value) or
 * `timeoutMs` pass (an error naming `what` and the last error `fn` threw).
 */
export async function waitFor(what, fn, timeoutMs = 15_000, everyMs = 150) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (${last.message})` : ""}`);
    await sleep(everyMs);
  }
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

/**
 * Parses `--flag value` arguments. `flags` maps each flag to its key in the result;
 * `required` names the keys that must be given. A mistake prints `usage` and exits 2.
 */
export function parseArgs(argv, { script, usage, flags, required = [] }) {
  const fail = (msg) => {
    if (msg) console.error(`${script}: ${msg}`);
    console.error(`usage: ${usage}`);
    process.exit(2);
  };
  const out = Object.fromEntries(Object.values(flags).map((key) => [key, null]));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") fail();
    const key = flags[a];
    if (!key) fail(`unknown argument ${a}`);
    if (i + 1 >= argv.length) fail(`missing value for ${a}`);
    out[key] = argv[++i];
  }
  const missing = Object.entries(flags).filter(([, key]) => required.includes(key) && !out[key]);
  if (missing.length) fail(`${missing.map(([flag]) => flag).join(" and ")} ${missing.length > 1 ? "are" : "is"} required`);
  out.fail = fail;
  return out;
}

/** The built UI to serve; exits 2 with the build command when it is missing. */
export function uiDistOrExit(script, uiDir) {
  const uiDist = resolve(uiDir ?? join(ROOT, "ui/dist"));
  if (!existsSync(join(uiDist, "index.html"))) {
    console.error(`${script}: ${uiDist}/index.html is missing; run: npm --prefix ui run build`);
    process.exit(2);
  }
  return uiDist;
}

/** playwright-core's Chromium driver, from the UI's node_modules. */
export function playwrightChromium() {
  return createRequire(join(ROOT, "ui/package.json"))("playwright-core").chromium;
}

/** Debian's Chromium (never a downloaded one), headless and quiet. */
export function launchChromium(chromium) {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
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
}

export function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal); // each child runs in its own process group
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM to the child's group, then SIGKILL if it has not exited within 3 s. */
export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  killGroup(child, "SIGTERM");
  const exited = await Promise.race([new Promise((r) => child.once("exit", () => r(true))), sleep(3000).then(() => false)]);
  if (!exited) killGroup(child, "SIGKILL");
}

/** Closes a Playwright browser, giving up after 5 s. */
export async function closeBrowser(browser) {
  await Promise.race([browser.close().catch(() => undefined), sleep(5000)]);
}

/**
 * Starts a child in its own process group (registered with `suite` so it is always
 * stopped) and resolves with group 1 of the first stdout line matching `pattern`.
 */
export function startChild(suite, label, command, commandArgs, env, pattern, hold = null) {
  console.log(`# starting ${label}: ${command} ${commandArgs.join(" ")} (cwd ${ROOT})`);
  const child = spawn(command, commandArgs, { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"], env });
  suite.onCleanup(() => stopChild(child));
  // `hold.child` lets a test kill the process itself (a crash, not a shutdown).
  if (hold) hold.child = child;
  let stderrTail = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => {
    stderrTail = (stderrTail + d).slice(-4000);
  });
  return new Promise((resolvePromise, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`${label}: no start line within 30 s; stderr: ${stderrTail}`)), 30_000);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        const m = pattern.exec(line);
        if (m) {
          clearTimeout(timer);
          resolvePromise(m[1]);
        }
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited early (code ${code}, signal ${signal}); stderr: ${stderrTail}`));
    });
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/**
 * Starts the scripted OpenAI-compatible server (`inkstone-fake-model`) on a free loopback
 * port. Resolves with its `/v1` URL and `script(...replies)`, which appends replies to its
 * queue (POST /_test/script).
 */
export async function startFakeModel(suite, path) {
  const url = await startChild(suite, "inkstone-fake-model", path, ["--addr", "127.0.0.1:0"], { ...process.env, RUST_BACKTRACE: "1" }, /^listening on (http:\/\/127\.0\.0\.1:\d+\/v1)$/);
  const origin = new URL(url).origin;
  const script = async (...replies) => {
    const res = await fetch(`${origin}/_test/script`, { method: "POST", body: JSON.stringify(replies) });
    assert(res.status === 200, `scripting the fake model: ${res.status} ${await res.text()}`);
  };
  return { url, origin, script };
}

/** Calls the API of `inkstone-cli serve` from the test (not the page) with the launch token. */
export async function api(origin, token, method, params = {}) {
  const res = await fetch(`${origin}/api/${method}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify(params),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${method}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * One run of checks. `summary` names the closing line (`<summary>: N passed, M failed`);
 * the run gives up after `timeoutMs`; cleanups registered with `onCleanup` run once, last
 * registered first, however the run ends (also on SIGINT, SIGTERM, SIGHUP).
 */
export function createSuite({ script, summary, timeoutMs, shots }) {
  let passed = 0;
  let failed = 0;
  const cleanups = [];
  let cleaned = false;

  const suite = {
    /** Called with a label after a failed check, to record what the screen showed. */
    onFailure: null,

    onCleanup(fn) {
      cleanups.push(fn);
    },

    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      for (const fn of cleanups.reverse()) {
        try {
          await fn();
        } catch (e) {
          console.log(`# cleanup: ${e?.message ?? e}`);
        }
      }
    },

    async check(name, fn) {
      const t0 = Date.now();
      try {
        await fn();
        passed++;
        console.log(`ok   - ${name} (${Date.now() - t0} ms)`);
        return true;
      } catch (e) {
        failed++;
        const lines = String(e?.message ?? e).split("\n");
        console.log(`FAIL - ${name}: ${lines[0]}`);
        // Playwright's call log names what was awaited: the one line a CI log needs.
        const awaited = lines.find((l) => /waiting for /.test(l));
        if (awaited) console.log(`#      ${awaited.replace(/\x1b\[[0-9;]*m/g, "").trim()}`);
        try {
          await suite.onFailure?.(`FAIL-${failed}`);
        } catch {
          // a record of the failure is a bonus; the failure is already counted
        }
        return false;
      }
    },

    /** Runs `main`, cleans up, prints the summary and exits (non-zero on any failure). */
    async run(main) {
      const line = (extraFailures = 0) => `${summary}: ${passed} passed, ${failed + extraFailures} failed`;
      for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
        process.on(sig, () => {
          console.error(`${script}: ${sig}, cleaning up`);
          suite.cleanup().finally(() => process.exit(130));
        });
      }
      const watchdog = setTimeout(() => {
        console.log(`FAIL - gave up after ${timeoutMs / 1000}s`);
        suite.cleanup().finally(() => {
          console.log(line(1));
          process.exit(1);
        });
      }, timeoutMs);
      watchdog.unref();

      try {
        await main();
      } catch (e) {
        failed++;
        console.log(`FAIL - unexpected: ${e?.stack ?? e}`);
      } finally {
        await suite.cleanup();
        clearTimeout(watchdog);
        console.log(`# screenshots: ${shots}`);
        console.log(line());
      }
      process.exit(failed > 0 || passed === 0 ? 1 : 0);
    },
  };
  return suite;
}
