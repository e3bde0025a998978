#!/usr/bin/env node
// Browser-mode end-to-end test of performance data: `inkstone-cli serve` + Debian's
// Chromium via playwright-core, no model.
//
//   node tests/e2e/browser/performance.mjs --cli target/debug/inkstone-cli [--shots DIR] [--ui-dir DIR]
//
// In a project's Stats panel a person adds a Xiaohongshu publication, imports the
// platform's own export (tests/fixtures/performance/xiaohongshu-notes.csv) through the
// file picker — preview, skip the row with no publication, commit — and sees its
// metrics (`10w+` kept as a lower bound, `-` shown as "—" and stored as absent); enters
// a metric by hand (`3.6w`) and sees the trend over age; re-imports the same file and is
// told nothing changes; sets a saved Zhihu draft to published, which asks for the
// publication's details and records it; opens the before/after report (association, not
// causation; not enough data on one post); opens the workspace dashboard (Ctrl+Shift+D),
// filters it to Xiaohongshu, sees that platform's median chart and the posting grid, and
// exports the table as CSV (a BOM, the lower bound said so, nothing absent written as 0);
// turns "use performance history in AI context" off in Settings → Performance and finds
// it off after a reload, then (in Chinese) on again and still on after a reload; and the
// panel and the dashboard in Chinese. Screenshots in both languages.
//
// Prints `browser-e2e-performance: N passed, M failed` and exits non-zero on any failure.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { api, assert, closeBrowser, createSuite, launchChromium, parseArgs, playwrightChromium, ROOT, startChild, uiDistOrExit } from "../lib.mjs";

const TOTAL_TIMEOUT_MS = 180_000;
const STEP_TIMEOUT_MS = 15_000;

const args = parseArgs(process.argv.slice(2), {
  script: "performance.mjs",
  usage: "node tests/e2e/browser/performance.mjs --cli <inkstone-cli> [--shots DIR] [--ui-dir DIR]",
  flags: { "--cli": "cli", "--shots": "shots", "--ui-dir": "uiDir" },
  required: ["cli"],
});
const cliPath = resolve(args.cli);
if (!existsSync(cliPath)) args.fail(`no such binary: ${cliPath}`);
const shots = resolve(args.shots ?? mkdtempSync(join(tmpdir(), "inkstone-browser-performance-shots-")));
mkdirSync(shots, { recursive: true });
const uiDist = uiDistOrExit("performance.mjs", args.uiDir);
const chromium = playwrightChromium();
const FIXTURE = join(ROOT, "tests/fixtures/performance/xiaohongshu-notes.csv");

const suite = createSuite({ script: "performance.mjs", summary: "browser-e2e-performance", timeoutMs: TOTAL_TIMEOUT_MS, shots });
const check = suite.check;
const dataDir = mkdtempSync(join(tmpdir(), "inkstone-browser-performance-data-"));
suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));

async function main() {
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
  console.log(`# ${origin}; screenshots in ${shots}`);

  const project = await call("project.create", { title: "春天来了", source: "# 春天来了\n\n三月的风吹过河岸，柳树先绿了。\n" });
  await call("version.create", { projectId: project.id, message: "first" });
  await call("account.create", { platform: "xiaohongshu", name: "墨砚小红书", handle: "inkstone" });

  const browser = await launchChromium(chromium);
  suite.onCleanup(() => closeBrowser(browser));
  const pageErrors = [];
  const open = async (locale) => {
    const context = await browser.newContext({ locale, colorScheme: "light", viewport: { width: 1440, height: 900 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    // Init scripts run in every frame; a draft's sandboxed preview frame has no storage.
    await context.addInitScript(() => {
      try {
        window.localStorage.setItem("inkstone.localModelOffer", "dismissed");
      } catch {
        // the sandboxed preview
      }
    });
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
    });
    await page.goto(url, { waitUntil: "commit" });
    await page.locator("[data-testid=project-item]", { hasText: "春天来了" }).click();
    await page.locator(`[data-testid=project-view][data-project='${project.id}']`).waitFor();
    return page;
  };
  let page = await open("en-US");
  let tid = (id) => page.locator(`[data-testid=${id}]`);
  const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`) });
  suite.onFailure = shot;
  let publicationId;

  await check("the Stats panel (Ctrl+5) teaches when empty; a publication is added with its account and Beijing time", async () => {
    await page.keyboard.press("Control+5");
    await tid("perf-empty").waitFor();
    await tid("perf-add").click();
    await tid("perf-form").waitFor();
    await tid("pub-platform").selectOption("xiaohongshu");
    assert((await tid("pub-zone").inputValue()) === "Asia/Shanghai", "the platform's time zone is filled");
    assert((await tid("pub-title").inputValue()) === "春天来了", "the title is filled");
    assert((await tid("pub-version").inputValue()) === "1", "the head version is filled");
    await tid("pub-account").selectOption({ label: "墨砚小红书 (inkstone)" });
    await tid("pub-time").fill("2026-03-05 20:00:05");
    await tid("pub-time").press("Enter");
    await tid("perf-form").waitFor({ state: "detached" });
    await tid("perf-item").waitFor();
    const list = await call("publication.list", { projectId: project.id });
    assert(list.publications.length === 1, `publications: ${list.publications.length}`);
    const p = list.publications[0].publication;
    publicationId = p.id;
    assert(p.platform === "xiaohongshu" && p.publishedAt === "2026-03-05T12:00:05Z" && p.accountId, `stored: ${JSON.stringify(p).slice(0, 300)}`);
    await shot("perf-01-added-en-light");
  });

  await check("importing the export: preview, the unmatched row skipped, one commit; 10w+ is a lower bound and '-' is absent, shown as —", async () => {
    await tid("perf-import-open-dialog").click();
    await tid("perf-import").waitFor();
    await tid("perf-import-file").setInputFiles(FIXTURE);
    await tid("perf-import-summary").waitFor();
    const statuses = await page.locator("[data-testid=perf-import-row]").evaluateAll((rows) => rows.map((r) => r.dataset.status));
    assert(JSON.stringify(statuses) === JSON.stringify(["matched", "unmatched"]), `statuses: ${statuses}`);
    assert(await tid("perf-import-commit").isDisabled(), "commit is offered with a row open");
    const before = (await call("perf.list", { publicationId })).snapshots.length;
    assert(before === 0, "the preview wrote a snapshot");
    await tid("perf-import-choice").nth(1).selectOption("skip");
    await page.locator("[data-testid=perf-import-row][data-status=skipped]").waitFor();
    await shot("perf-02-import-preview-en-light");
    await tid("perf-import-commit").click();
    await tid("perf-import").waitFor({ state: "detached" });
    await page.locator("[data-testid=perf-latest] [data-metric=impressions]", { hasText: "100,000+" }).waitFor();
    const snaps = (await call("perf.list", { publicationId })).snapshots;
    assert(snaps.length === 1, `snapshots: ${snaps.length}`);
    assert(snaps[0].metrics.impressions.qualifier === "lowerBound" && snaps[0].metrics.impressions.raw === "10w+", JSON.stringify(snaps[0].metrics.impressions));
    assert(!("shares" in snaps[0].metrics), "'-' was stored as a number");
    assert(snaps[0].source.type === "import" && snaps[0].source.row === 3, JSON.stringify(snaps[0].source).slice(0, 200));
    // A publication just added opens with its metrics.
    if ((await tid("perf-toggle").getAttribute("aria-expanded")) !== "true") await tid("perf-toggle").click();
    await tid("perf-snapshots").waitFor();
    const shares = await page.locator("[data-testid=perf-snapshot] [data-metric=shares]").allTextContents();
    assert(JSON.stringify(shares) === JSON.stringify(["—"]), `shares shown as ${shares}`);
  });

  await check("a metric entered by hand (3.6w), observed a day before the import, is a second snapshot; the trend over age shows", async () => {
    await tid("perf-entry-views").fill("3.6w");
    const imported = (await call("perf.list", { publicationId })).snapshots[0];
    const dayBefore = new Date(Date.parse(imported.observedAt) - 24 * 3600_000).toISOString();
    await tid("perf-entry-observed").fill(dayBefore);
    await tid("perf-entry-save").click();
    await page.locator("[data-testid=perf-snapshot]").nth(1).waitFor();
    const snaps = (await call("perf.list", { publicationId })).snapshots;
    assert(snaps.length === 2, `snapshots: ${snaps.length}`);
    const manual = snaps.find((s) => s.source.type === "manual");
    assert(manual.metrics.views.value === 36000 && manual.metrics.views.qualifier === "rounded", JSON.stringify(manual.metrics));
    assert(Math.abs(imported.ageHours - manual.ageHours - 24) < 0.01, `ages ${imported.ageHours} and ${manual.ageHours}`);
    assert(Object.keys(manual.metrics).length === 1, "only the typed metric is recorded");
    await page.locator("[data-testid=perf-trend][data-metric=views]").waitFor();
    await shot("perf-03-metrics-en-light");
  });

  await check("re-importing the same file says it was imported and changes nothing", async () => {
    await tid("perf-import-open-dialog").click();
    await tid("perf-import-file").setInputFiles(FIXTURE);
    await tid("perf-import-already").waitFor();
    assert((await tid("perf-import-commit").count()) === 0, "a commit is offered for a file imported before");
    await shot("perf-04-reimport-en-light");
    await page.keyboard.press("Escape");
    await tid("perf-import").waitFor({ state: "detached" });
    assert((await call("perf.list", { publicationId })).snapshots.length === 2, "the re-import wrote");
  });

  await check("setting a saved Zhihu draft to published asks for the publication and records it in the same write", async () => {
    await page.keyboard.press("Control+1");
    await tid("draft-tab-zhihu").click();
    await tid("draft-save").click();
    await page.locator("[data-testid=saved-draft][data-revision='1']").waitFor();
    await tid("draft-status").selectOption("published");
    await tid("publish-dialog").waitFor();
    assert((await call("publication.list", { projectId: project.id })).publications.length === 1, "a publication was recorded before the dialog was confirmed");
    await tid("pub-url").fill("https://zhuanlan.zhihu.com/p/123456");
    await shot("perf-05-publish-dialog-en-light");
    await tid("pub-save").click();
    await tid("publish-dialog").waitFor({ state: "detached" });
    await page.locator("[data-testid=saved-draft][data-status=published]").waitFor();
    const zhihu = (await call("publication.list", { projectId: project.id, platform: "zhihu" })).publications;
    assert(zhihu.length === 1 && zhihu[0].publication.url === "https://zhuanlan.zhihu.com/p/123456", JSON.stringify(zhihu).slice(0, 300));
    await page.keyboard.press("Control+5");
    await page.locator("[data-testid=perf-group][data-platform=zhihu]").waitFor();
  });

  await check("the before/after report says association, not causation, and gives no number on too few posts", async () => {
    await tid("perf-report-open").click();
    await tid("perf-report").waitFor();
    await tid("perf-report-platform").selectOption("xiaohongshu");
    await tid("perf-report-association").filter({ hasText: "Association, not causation" }).waitFor();
    await tid("perf-report-not-enough").waitFor();
    assert((await tid("perf-report-with").innerText()).includes("Not enough data"), await tid("perf-report-with").innerText());
    await shot("perf-06-report-en-light");
    await page.keyboard.press("Escape");
    await tid("perf-report").waitFor({ state: "detached" });
  });

  await check("the workspace dashboard (Ctrl+Shift+D): filtered to Xiaohongshu, its median chart and posting grid, the table exported as CSV", async () => {
    await page.keyboard.press("Control+Shift+D");
    await tid("perf-dashboard").waitFor();
    await page.locator("[data-testid=perf-dash-row]").nth(1).waitFor();
    assert((await page.locator("[data-testid=perf-dash-row]").count()) === 2, "both publications are listed");
    await tid("perf-dash-platform").selectOption("xiaohongshu");
    await page.locator("[data-testid=perf-dash-row][data-platform=zhihu]").waitFor({ state: "detached" });
    assert((await page.locator("[data-testid=perf-dash-row]").count()) === 1, "the filter left one row");
    const row = page.locator(`[data-testid=perf-dash-row][data-id='${publicationId}']`);
    assert((await row.locator("[data-metric=impressions]").innerText()) === "100,000+", await row.innerText());
    // Shares were '-' in the export: absent, shown as a dash.
    assert((await row.locator("[data-metric=shares]").count()) === 0 || (await row.locator("[data-metric=shares]").innerText()) === "—", "shares shown as a number");
    const chart = page.locator("[data-testid=perf-dash-chart][data-platform=xiaohongshu]");
    await chart.waitFor();
    assert((await chart.getAttribute("data-points")) === "1", `points: ${await chart.getAttribute("data-points")}`);
    assert((await page.locator("[data-testid=perf-dash-chart]").count()) === 1, "a chart for a platform filtered out");
    // Published Thursday 2026-03-05 20:00:05 Beijing time: one post in that slot.
    assert((await page.locator("[data-testid=perf-dash-slot]").evaluateAll((cells) => cells.map((c) => `${c.dataset.slot}:${c.textContent}`))).join() === "3-20:1", "posting grid");
    await shot("perf-10-dashboard-en-light");
    const [download] = await Promise.all([page.waitForEvent("download"), tid("perf-dash-export").click()]);
    const file = join(shots, "performance-dashboard.csv");
    await download.saveAs(file);
    const bytes = readFileSync(file);
    assert(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf, "the CSV starts with a BOM");
    const lines = bytes.toString("utf8").slice(1).trim().split(/\r?\n/);
    assert(lines.length === 2, `lines: ${lines.length}`);
    const header = lines[0].split(",");
    const cells = lines[1].split(",");
    const at = (name) => cells[header.indexOf(name)];
    assert(at("platform") === "xiaohongshu" && at("impressions") === "100000" && at("qualified").includes("impressions:lower_bound"), lines.join(" | "));
    assert(!header.includes("shares") || at("shares") === "", "an absent value was written");
    await tid("perf-dash-close").click();
    await tid("perf-dashboard").waitFor({ state: "detached" });
  });

  await check("Settings → Performance: the AI-context switch turned off stays off after a reload", async () => {
    const before = await call("perf.contextSetting", {});
    assert(before.enabled === true && before.decidedByPolicy === false, `a local workspace starts with it on: ${JSON.stringify(before)}`);
    await tid("open-settings").click();
    await tid("settings-performance").click();
    const toggle = tid("perf-context-toggle");
    await page.locator("[data-testid=perf-context]", { hasText: "Use performance history in AI context" }).waitFor();
    // The label shows before the setting is read; the switch is disabled until then.
    await page.locator("[data-testid=perf-context-toggle]:not([disabled])").waitFor();
    assert(await toggle.isChecked(), "the switch shows it on");
    await toggle.click();
    await page.locator("[data-testid=perf-context-toggle]:not(:checked):not([disabled])").waitFor();
    const stored = await call("perf.contextSetting", {});
    assert(stored.enabled === false && stored.setting === false, `stored: ${JSON.stringify(stored)}`);
    await shot("perf-12-context-off-en-light");
    await page.reload({ waitUntil: "commit" });
    await tid("open-settings").click();
    await tid("settings-performance").click();
    await page.locator("[data-testid=perf-context-toggle]:not([disabled])").waitFor();
    assert(!(await tid("perf-context-toggle").isChecked()), "the switch is on again after a reload");
    assert(!(await tid("perf-context-policy").count()), "a local workspace has no policy deciding it");
    await page.keyboard.press("Escape");
    await tid("settings").waitFor({ state: "detached" });
  });

  await check("the panel and the import preview in Chinese", async () => {
    await page.context().close();
    page = await open("zh-CN");
    tid = (id) => page.locator(`[data-testid=${id}]`);
    suite.onFailure = shot;
    await page.keyboard.press("Control+5");
    await page.locator("[data-testid=tab-performance]", { hasText: "数据" }).waitFor();
    await page.locator(`[data-testid=perf-item][data-id='${publicationId}'] [data-testid=perf-toggle]`).click();
    await tid("perf-snapshots").waitFor();
    const head = await page.locator("[data-testid=perf-snapshots] thead").innerText();
    assert(head.includes("曝光") && head.includes("发布后"), `headings: ${head}`);
    await shot("perf-07-metrics-zh-light");
    await tid("perf-import-open-dialog").click();
    await tid("perf-import-file").setInputFiles(FIXTURE);
    await tid("perf-import-already").filter({ hasText: "之前导入过" }).waitFor();
    await shot("perf-08-reimport-zh-light");
    await page.keyboard.press("Escape");
    await tid("perf-report-open").click();
    await tid("perf-report-association").filter({ hasText: "不代表因果" }).waitFor();
    await shot("perf-09-report-zh-light");
  });

  await check("the dashboard in Chinese, from the sidebar", async () => {
    await page.keyboard.press("Escape");
    await tid("perf-report").waitFor({ state: "detached" });
    await tid("open-dashboard").click();
    await tid("perf-dashboard").waitFor();
    await page.locator("#perf-dash-title", { hasText: "数据看板" }).waitFor();
    await page.locator("[data-testid=perf-dash-chart]").first().waitFor();
    assert((await tid("perf-dash-posting").innerText()).includes("周四"), "the weekdays in Chinese");
    await shot("perf-11-dashboard-zh-light");
  });

  await check("设置 → 数据: the switch is still off in Chinese; turned on again, it stays on after a reload", async () => {
    await page.reload({ waitUntil: "commit" });
    await tid("open-settings").click();
    await tid("settings-performance").click();
    await page.locator("[data-testid=perf-context]", { hasText: "在 AI 上下文中使用表现数据" }).waitFor();
    await page.locator("[data-testid=perf-context-toggle]:not([disabled])").waitFor();
    assert(!(await tid("perf-context-toggle").isChecked()), "the switch turned off in English shows on in Chinese");
    assert((await tid("perf-context").innerText()).includes("原始导出行绝不会发送"), "the help in Chinese");
    await shot("perf-13-context-off-zh-light");
    await tid("perf-context-toggle").click();
    await page.locator("[data-testid=perf-context-toggle]:checked:not([disabled])").waitFor();
    assert((await call("perf.contextSetting", {})).enabled === true, "turning it on was not stored");
    await page.reload({ waitUntil: "commit" });
    await tid("open-settings").click();
    await tid("settings-performance").click();
    await page.locator("[data-testid=perf-context-toggle]:not([disabled])").waitFor();
    assert(await tid("perf-context-toggle").isChecked(), "the switch is off again after a reload");
  });

  await check("no page errors", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of 40[49]/.test(e));
    assert(real.length === 0, real.join(" | "));
  });
}

await suite.run(main);
