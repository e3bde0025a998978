// The message catalogs (messages/<lang>/<feature>.json at the repository root) keyed by
// id, in Simplified Chinese (./zh.ts) and English (./en.ts, which defines the ids). Error
// codes map to `error.<CODE>`, hint ids to `hint.<id>`; unknown ones fall back to the
// English text the backend sent.
//
// Each language's catalog is its own chunk, loaded on demand (`loadMessages`): the first
// screen parses only the active language's table (main.tsx waits for it before the first
// render), and the other loads when the person switches to it (the switch waits for it).
// Every arrival of a catalog moves a generation (`messagesGeneration`) that whatever words
// text outside a React render subscribes to (`onMessages`), so nothing keeps the wording
// it had before a catalog came: the app's `t` changes with it (so every component, and
// the CodeMirror extensions fed from it, re-render or reconfigure), and the command
// palette's English keywords, read while filtering, appear once the English catalog is in.

import { useSyncExternalStore } from "react";
import type { ClientError } from "../api/client";
import type { MessageId } from "./en";
import { formatMessage } from "./format";

export type { MessageId, Messages } from "./en";

export type Lang = "en" | "zh";

type Table = Record<string, string>;

const loaders: Record<Lang, () => Promise<Table>> = {
  en: () => import("./en").then((m) => m.en),
  zh: () => import("./zh").then((m) => m.zh),
};
const tables: Partial<Record<Lang, Table>> = {};
const loading: Partial<Record<Lang, Promise<void>>> = {};
let generation = 0;
const listeners = new Set<() => void>();

function arrived(lang: Lang, table: Table) {
  tables[lang] = table;
  generation += 1;
  for (const listener of [...listeners]) listener();
}

/** Loads `lang`'s catalog (once; a failed load is tried again on the next call). Until it
 * is in, `translate` words `lang` from the English table if that is loaded, else shows
 * ids, so callers wait for this before showing `lang`. */
export function loadMessages(lang: Lang): Promise<void> {
  if (tables[lang]) return Promise.resolve();
  return (loading[lang] ??= loaders[lang]().then(
    (table) => {
      delete loading[lang];
      arrived(lang, table);
    },
    (error: unknown) => {
      delete loading[lang];
      throw error;
    },
  ));
}

/** Whether `lang`'s catalog is loaded. */
export function messagesLoaded(lang: Lang): boolean {
  return tables[lang] !== undefined;
}

/** Grows by one each time a catalog arrives. */
export function messagesGeneration(): number {
  return generation;
}

/** Calls `listener` each time a catalog arrives; returns the unsubscribe. */
export function onMessages(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The catalogs' generation in a React component: it re-renders when a catalog arrives. */
export function useMessagesGeneration(): number {
  return useSyncExternalStore(onMessages, messagesGeneration);
}

/** Test seam: makes `lang`'s catalog unloaded and loaded by `load` instead of its chunk
 * (a test decides when it arrives). Returns the undo, which puts the real catalog back. */
export function replaceCatalogForTest(lang: Lang, load: () => Promise<Table>): () => Promise<void> {
  const real = loaders[lang];
  delete tables[lang];
  delete loading[lang];
  loaders[lang] = load;
  return () => {
    loaders[lang] = real;
    delete tables[lang];
    delete loading[lang];
    return loadMessages(lang);
  };
}

/** `lang`'s table, empty until it is loaded. */
function table(lang: Lang): Table {
  return tables[lang] ?? {};
}

export function detectLang(language: string | undefined | null): Lang {
  return (language ?? "").toLowerCase().startsWith("zh") ? "zh" : "en";
}

export function has(lang: Lang, id: string): boolean {
  return Object.prototype.hasOwnProperty.call(table(lang), id);
}

const pluralRules: Record<Lang, Intl.PluralRules> = { en: new Intl.PluralRules("en"), zh: new Intl.PluralRules("zh") };

export function translate(lang: Lang, id: MessageId, vars: Record<string, string | number> = {}): string {
  // A count reads "1 change" and "3 changes", not "1 change(s)": the catalogs word counts
  // as ICU plurals, chosen by the language's plural rules (./format.ts).
  const template = table(lang)[id] ?? table("en")[id] ?? id;
  return formatMessage(template, vars, pluralRules[lang]);
}

export interface DescribedError {
  title: string;
  /** Extra lines: the backend's specific message (English UI only) and the hints. */
  details: string[];
}

/** The client's own OFFLINE: the app's backend is gone (the core's OFFLINE is about a
 * server it talks to: a model provider or the workspace server). */
function backendGone(error: ClientError): boolean {
  return error.code === "OFFLINE" && error.hints.some((h) => h.id === "offline.check_running");
}

/** Turns an error into text in the user's language: the wording of its particular
 * problem when the core names one, else its code's; then its hints. */
export function describeError(lang: Lang, error: ClientError): DescribedError {
  const problemId = error.messageId ? `problem.${error.messageId}` : "";
  if (problemId && has(lang, problemId)) {
    const vars = valuesOf(error.params);
    wordValue(lang, vars, "ai.proposal.status", "status");
    return { title: translate(lang, problemId as MessageId, vars), details: hintLines(lang, error, []) };
  }
  const codeId = backendGone(error) ? "error.BACKEND_OFFLINE" : `error.${error.code}`;
  const known = has(lang, codeId);
  const title = known ? table(lang)[codeId] : error.message;
  const details: string[] = [];
  // The backend's message is English and specific; show it under the headline in English.
  if (known && lang === "en" && error.message && error.message !== title) details.push(error.message);
  return { title, details: hintLines(lang, error, details) };
}

function hintLines(lang: Lang, error: ClientError, details: string[]): string[] {
  for (const hint of error.hints) {
    const text = describeHint(lang, hint);
    if (text && !details.includes(text)) details.push(text);
  }
  return details;
}

/** What the core gives as a hint: a stable id, its English, and the values it names. */
export interface WordedHint {
  id: string;
  message: string;
  params?: { [key in string]?: string };
}

/** A hint in the user's language (`hint.<id>` filled with its values); its English when
 * the UI has no wording for it. */
export function describeHint(lang: Lang, hint: WordedHint): string {
  const id = `hint.${hint.id}`;
  return has(lang, id) ? translate(lang, id as MessageId, valuesOf(hint.params)) : hint.message;
}

/** What a finding carries for its text: the English and, when it has one, its wording. */
export interface WordedFinding {
  message: string;
  suggestion: string | null;
  messageId?: string;
  params?: { [key in string]?: string };
  suggestionId?: string;
}

/** Replaces the value `key` (an id such as `title` or `superseded`) by its wording
 * `<prefix>.<value>` in the user's language, when there is one. */
function wordValue(lang: Lang, vars: Record<string, string>, prefix: string, key: string) {
  const id = `${prefix}.${vars[key]}`;
  if (key in vars && has(lang, id)) vars[key] = translate(lang, id as MessageId, vars);
}

/** A wording's values, without the absent ones. */
function valuesOf(params: { [key in string]?: string } | undefined): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined) vars[k] = v;
  return vars;
}

/** A finding's message and suggestion in the user's language, from its wording id and
 * values (`finding.<id>`, `finding.fix.<id>`); the English text when it has none. */
export function describeFinding(lang: Lang, f: WordedFinding): { message: string; suggestion: string | null } {
  const vars = valuesOf(f.params);
  wordValue(lang, vars, "finding.field", "field");
  wordValue(lang, vars, "finding.unit", "unit");
  vars.route = vars.route ? translate(lang, "finding.limit.route", { route: describeRoute(lang, vars.route) }) : "";
  if (vars.list) vars.list = profileName(lang, vars.list);
  const messageId = f.messageId ? `finding.${f.messageId}` : "";
  const fixId = f.suggestionId ? `finding.fix.${f.suggestionId}` : "";
  return {
    message: messageId && has(lang, messageId) ? translate(lang, messageId as MessageId, vars) : f.message,
    suggestion: f.suggestion === null ? null : fixId && has(lang, fixId) ? translate(lang, fixId as MessageId, vars) : f.suggestion,
  };
}

/** A profile or risk list by its name, not its id: `wechat@draft-v1` is "WeChat draft
 * rules v1" / "微信公众号草稿规则 v1", an override (`…+local.2`) says it is the
 * person's own. An id of another shape stays as it is. */
export function profileName(lang: Lang, id: string): string {
  const m = /^([a-z0-9-]+)@(?:(draft|growth)-)?v(\d+)(?:\+local\.(\d+))?$/.exec(id);
  if (!m) return id;
  const [, base = "", kind, version = "", local] = m;
  let name: string | null = null;
  if (kind) {
    const platform = `platform.${base}`;
    if (has(lang, platform)) name = translate(lang, `profile.${kind}` as MessageId, { platform: table(lang)[platform] ?? base, v: version });
  } else if (has(lang, `profile.list.${base}`)) {
    name = translate(lang, `profile.list.${base}` as MessageId, { v: version });
  }
  if (name === null) return id;
  return local === undefined ? name : translate(lang, "profile.local", { name, n: local });
}

/** A platform's publishing route (`editor`, `image-text`, `app`, …) in the user's
 * language; the id itself when the UI has no wording for it. */
export function describeRoute(lang: Lang, route: string): string {
  const id = `finding.route.${route}`;
  return has(lang, id) ? table(lang)[id] : route;
}

/** Where a finding is (`title`, `post 3`, `title candidate “…” (x)`), in the user's
 * language; the English text when the place is not one of these. */
export function describeLocation(lang: Lang, location: string): string {
  const post = /^post (\d+)$/.exec(location);
  if (post) return translate(lang, "finding.field.post", { post: post[1] });
  const field = `finding.field.${location}`;
  if (has(lang, field)) return table(lang)[field];
  const candidate = /^title candidate “(.*)”(?: \((\w+)\))?$/s.exec(location);
  if (candidate) {
    const [, title, platform] = candidate;
    if (platform === undefined) return translate(lang, "finding.location.titleCandidate", { title });
    const name = `platform.${platform}`;
    return translate(lang, "finding.location.titleCandidateOn", { title, platform: has(lang, name) ? table(lang)[name] : platform });
  }
  return location;
}

/** What a platform-fit point carries for its text (see `FitPoint`). */
export interface WordedFitPoint {
  check: string;
  measured: string;
  rule: string;
  messageId?: string;
  params?: { [key in string]?: string };
  findings?: WordedFinding[];
}

/** A fit point's measurement and rule in the user's language. English keeps the rule in
 * the profile's own words; Chinese names the rule and leaves the profile's words (which
 * may be English) to `ruleDetail`. Reports recorded before wordings existed show their
 * English text. */
export function describeFitPoint(lang: Lang, p: WordedFitPoint): { measured: string; rule: string; ruleDetail: string | null } {
  const vars = valuesOf(p.params);
  const measuredId = `fit.measured.${p.messageId ?? ""}`;
  const measured =
    p.messageId === "limits.over" && p.findings?.length
      ? p.findings.map((f) => describeFinding(lang, f).message).join(lang === "zh" ? "；" : "; ")
      : p.messageId && has(lang, measuredId)
        ? translate(lang, measuredId as MessageId, vars)
        : p.measured;
  const ruleId = `fit.rule.${p.check}`;
  if (lang === "en" || !p.messageId || !has(lang, ruleId)) return { measured, rule: p.rule, ruleDetail: null };
  return { measured, rule: translate(lang, ruleId as MessageId, vars), ruleDetail: p.rule };
}

/** The last sync failure in the user's language, from its code; English adds the
 * specific message under it. An unknown code shows the English message. */
export function describeSyncProblem(lang: Lang, code: string | undefined, message: string): { title: string; detail: string | null } {
  const id = `sync.problem.${code ?? ""}`;
  if (!code || !has(lang, id)) return { title: message, detail: null };
  return { title: table(lang)[id], detail: lang === "en" ? message : null };
}

export function modKeyLabel(platform: string | undefined | null): string {
  return /mac|iphone|ipad/i.test(platform ?? "") ? "⌘" : "Ctrl";
}

/** "3 minutes ago" for recent times, a date for older ones. */
export function formatTime(lang: Lang, iso: string, now: number = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const locale = lang === "zh" ? "zh-CN" : "en";
  const diff = (t - now) / 1000;
  const abs = Math.abs(diff);
  if (abs < 45) {
    return lang === "zh" ? "刚刚" : "just now";
  }
  const rtf = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  if (abs < 3600) return rtf.format(Math.round(diff / 60), "minute");
  if (abs < 86400) return rtf.format(Math.round(diff / 3600), "hour");
  if (abs < 7 * 86400) return rtf.format(Math.round(diff / 86400), "day");
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium" }).format(new Date(t));
}

export function formatFullTime(lang: Lang, iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return new Intl.DateTimeFormat(lang === "zh" ? "zh-CN" : "en", { dateStyle: "medium", timeStyle: "short" }).format(
    new Date(t),
  );
}
