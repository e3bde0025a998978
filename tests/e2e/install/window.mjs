#!/usr/bin/env node
// The installed app's first window, through WebKitWebDriver (raw W3C over fetch, as the
// desktop smoke does). Started by tests/e2e/install/run.sh inside Xvfb and a session bus,
// with a fresh HOME and no INKSTONE_DATA_DIR, so the app uses its defaults:
//
//   node tests/e2e/install/window.mjs --app /usr/bin/inkstone --webdriver http://127.0.0.1:PORT \
//       --data-dir ~/.local/share/Inkstone [--app-arg ARG]… [--expect-project TITLE] [--shots DIR]
//
// --app-arg may be given more than once: an AppImage is driven with
// `--app-arg --appimage-extract-and-run` (its runtime extracts it and starts the app with
// the remaining arguments), "Open with" with `--app-arg FILE.md --expect-project TITLE`.
//
// Checks that the window opens on the first-run screen, runs inside Tauri, shows no
// error, and that the store was made in the expected data folder. With --expect-project
// (a launch with a Markdown file, as "Open with Inkstone" does): that the file is there
// as a project. Prints
// `install-window: N passed, M failed`.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { assert, createSuite, parseArgs, sleep, waitFor as waitUntil } from "../lib.mjs";

const args = parseArgs(process.argv.slice(2), {
  script: "window.mjs",
  usage: "node tests/e2e/install/window.mjs --app /usr/bin/inkstone --webdriver URL --data-dir DIR [--app-arg ARG] [--shots DIR]",
  flags: { "--app": "app", "--webdriver": "webdriver", "--data-dir": "dataDir", "--app-arg": "appArg", "--expect-project": "expectProject", "--shots": "shots" },
  required: ["app", "webdriver", "dataDir"],
});
// Every --app-arg, in order (parseArgs keeps only the last of a repeated flag).
const appArgs = process.argv.slice(2).flatMap((a, i, all) => (a === "--app-arg" && i + 1 < all.length ? [all[i + 1]] : []));
const base = args.webdriver.replace(/\/+$/, "");
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-install-shots-")));
mkdirSync(shots, { recursive: true });
const suite = createSuite({ script: "window.mjs", summary: "install-window", timeoutMs: 120_000, shots });
let sessionId = null;

async function wd(method, path, body, timeoutMs = 15_000) {
  const init = { method, headers: {}, signal: AbortSignal.timeout(timeoutMs) };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`${base}${path}`, init);
  const json = JSON.parse(await res.text());
  if (!res.ok || json.value?.error) throw new Error(`${method} ${path}: ${json.value?.error ?? res.status}: ${json.value?.message ?? ""}`);
  return json.value;
}
const exec = (script, scriptArgs = []) => wd("POST", `/session/${sessionId}/execute/sync`, { script, args: scriptArgs });

/** This suite waits longer (a freshly installed app's first start) and polls less often. */
const waitFor = (what, fn, timeoutMs = 20_000) => waitUntil(what, fn, timeoutMs, 200);

function screenshot(name) {
  try {
    execFileSync("import", ["-window", "root", join(shots, `${name}.png`)], { timeout: 10_000, stdio: "ignore" });
  } catch (e) {
    console.log(`# screenshot failed: ${e.message}`);
  }
}

suite.onCleanup(async () => {
  if (sessionId) await wd("DELETE", `/session/${sessionId}`, undefined, 10_000).catch((e) => console.log(`# closing session: ${e.message}`));
});
suite.onFailure = async () => {
  screenshot("failed");
  if (sessionId) console.log(`# page text: ${JSON.stringify(String(await exec("return document.body ? document.body.innerText : ''").catch(() => "")).slice(0, 400))}`);
};

await suite.run(async () => {
  const opened = await suite.check(`the installed app (${args.app}) opens its window`, async () => {
    await waitFor("WebKitWebDriver", async () => (await wd("GET", "/status", undefined, 2000))?.ready !== false);
    const v = await wd("POST", "/session", { capabilities: { alwaysMatch: { "webkitgtk:browserOptions": { binary: args.app, args: appArgs } } } }, 60_000);
    sessionId = v.sessionId;
    assert(sessionId, "no session");
  });
  if (!opened) return;

  if (args.expectProject) {
    await suite.check(`"Open with Inkstone" (${appArgs.join(" ")}) shows the file as the project "${args.expectProject}"`, async () => {
      await waitFor("the opened file in the project list", () =>
        exec("return Array.from(document.querySelectorAll('[data-testid=project-item]'), (e) => e.textContent || '').some((t) => t.includes(arguments[0]))", [args.expectProject]),
      );
    });
    return;
  }

  await suite.check("the window shows the first-run screen, inside Tauri, with no error", async () => {
    await waitFor("the first-run screen", () => exec("return Boolean(document.querySelector('[data-testid=empty-state]'))"));
    assert((await exec("return Boolean(window.__TAURI_INTERNALS__)")) === true, "the page is not running inside Tauri");
    const banner = await exec("const b = document.querySelector('[data-testid=error-banner]'); return b ? b.textContent : null");
    assert(!banner, `error banner: ${banner}`);
    const title = await wd("GET", `/session/${sessionId}/title`);
    assert(/Inkstone/.test(title), `window title: ${title}`);
    // The screen as X holds it, after a moment for the first paint. Not WebDriver's
    // screenshot: WebKitGTK's snapshot of the page never answers when compositing is off,
    // as the app turns it off on a machine without a GPU render node (like this one).
    await sleep(1000);
    screenshot("first-run");
  });

  await suite.check(`the store is made in ${args.dataDir}`, async () => {
    // The engine opens before the window; its store files are there once the page asked.
    await waitFor("the data folder", () => existsSync(args.dataDir) && readdirSync(args.dataDir).length > 0, 10_000);
    const listed = await exec("return window.__TAURI_INTERNALS__.invoke('api_call', { method: 'project.list', params: {} })");
    assert(Array.isArray(listed?.projects ?? listed), `project.list answered ${JSON.stringify(listed).slice(0, 200)}`);
    console.log(`# data folder: ${readdirSync(args.dataDir).join(", ")}`);
  });

  await suite.check("Help → About names the data folder and the log folder; Report a problem carries the log's last lines", async () => {
    await exec("document.querySelector('[data-testid=open-help]').click()");
    const text = (id) => exec("const e = document.querySelector(`[data-testid=${arguments[0]}]`); return e ? (e.value ?? e.textContent) : null", [id]);
    const data = await waitFor("Help → About", () => text("help-path-data"));
    assert(data.replace(/\/+$/, "") === args.dataDir.replace(/\/+$/, ""), `About names ${data}, not ${args.dataDir}`);
    const logs = await text("help-path-logs");
    assert(logs && existsSync(logs) && readdirSync(logs).some((f) => f.startsWith("inkstone")), `the log folder ${logs} holds no inkstone log`);
    await exec("document.querySelector('[data-testid=help-report]').click()");
    const report = await waitFor("the problem report", () => text("help-report-text"));
    assert(/^Inkstone \d+\.\d+\.\d+/.test(report), `report starts ${report.slice(0, 60)}`);
    assert(report.includes("Inkstone started"), `the report carries no log line: ${report.slice(0, 400)}`);
    console.log(`# log folder: ${logs}`);
  });
});
