// Pure helpers for the AI models and usage sections: no IO, no React.

import type { LlmPreset, UsageRow, UsageTotals } from "../../shared/api/generated";
import { has, translate, type Lang, type MessageId } from "../../shared/i18n";

/**
 * True when a key sent to `baseUrl` would cross the network unencrypted: plain
 * http:// to a host that is not this machine. This mirrors the core's rule
 * (`llm::profile::key_would_travel_in_clear`) only to warn while the person types;
 * the core still refuses such a key unless `allowPlainHttp` confirms it.
 */
export function keyTravelsInClear(baseUrl: string): boolean {
  const url = baseUrl.trim().toLowerCase();
  if (!url.startsWith("http://")) return false;
  const host = hostOf(url);
  return host !== "" && !isLoopbackHost(host);
}

/** The host of an http(s) URL, lower case, without brackets or port; "" when there is none. */
function hostOf(baseUrl: string): string {
  const url = baseUrl.trim().toLowerCase();
  const scheme = /^https?:\/\//.exec(url);
  if (!scheme) return "";
  const authority = url.slice(scheme[0].length).split(/[/?#]/)[0] ?? "";
  if (authority.startsWith("[")) return authority.slice(1).split("]")[0] ?? "";
  return authority.split(":")[0] ?? "";
}

function isLoopbackHost(host: string): boolean {
  // An address, not a name that starts like one: 127.example.com is another machine.
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * True when `baseUrl` names a server on this computer (as the core's
 * `llm::profile::is_loopback`): such a server usually takes no key, so a new custom
 * profile starts with "No key needed" ticked for it.
 */
export function isLocalServer(baseUrl: string): boolean {
  const host = hostOf(baseUrl);
  return host !== "" && isLoopbackHost(host);
}

/** "••••abcd" from the stored fingerprint ("…abcd"); the key itself never comes back. */
export function maskedFingerprint(fingerprint: string): string {
  return `••••${fingerprint.replace(/^…/, "")}`;
}

const DAY_MS = 86_400_000;

/** The UTC day (`YYYY-MM-DD`, as usage reports key them) of a time. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Midnight UTC of the day `n_days - 1` days before `now_ms`: the start of a window of `n_days` days ending today. */
export function windowStart(nowMs: number, nDays: number): number {
  const today = Date.parse(`${utcDay(nowMs)}T00:00:00Z`);
  return today - (nDays - 1) * DAY_MS;
}

/** Midnight UTC of the first day of the month of `now_ms`. */
export function monthStart(nowMs: number): number {
  return Date.parse(`${utcDay(nowMs).slice(0, 7)}-01T00:00:00Z`);
}

export const EMPTY_TOTALS: UsageTotals = {
  calls: 0,
  failedCalls: 0,
  pricedCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cost: 0,
  estimated: false,
  latencyMsTotal: 0,
};

/** One row per day of the window, oldest first; days without calls get zero totals. */
export function fillDays(rows: UsageRow[], fromMs: number, nDays: number): UsageRow[] {
  const byKey = new Map(rows.map((r) => [r.key, r.totals]));
  return Array.from({ length: nDays }, (_, i) => {
    const key = utcDay(fromMs + i * DAY_MS);
    return { key, totals: byKey.get(key) ?? EMPTY_TOTALS };
  });
}

export function formatTokens(lang: Lang, n: number): string {
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en").format(n);
}

/** Costs carry no currency (a workspace's profiles share one); small ones keep more digits. */
export function formatCost(lang: Lang, n: number): string {
  const digits = n !== 0 && Math.abs(n) < 0.01 ? 4 : 2;
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en", {
    minimumFractionDigits: 2,
    maximumFractionDigits: digits,
  }).format(n);
}

/** Parses an optional number field: blank is `undefined`, anything unparsable is `null`. */
export function parseOptionalNumber(text: string): number | undefined | null {
  const s = text.trim();
  if (s === "") return undefined;
  const n = Number(s);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** The model to start from in a server's list: the preset's usual one when offered, else
 * the first that is not for embeddings. */
export function chatModel(models: string[], exampleModel?: string): string | undefined {
  if (exampleModel !== undefined && models.includes(exampleModel)) return exampleModel;
  return models.find((m) => !/embed/i.test(m)) ?? models[0];
}

/**
 * What the model field holds once the server's list has arrived. A model the server
 * offers, or one the person typed or saved, is kept (the picker shows it as not offered).
 * A preset's placeholder (`placeholder`, e.g. llama.cpp's "default") the server does not
 * offer gives way: to the server's only model, else to none, so the person picks one.
 * An empty field takes the server's only model.
 */
export function modelAfterListing(current: string, offered: string[], placeholder: string | undefined): string {
  if (offered.length === 0 || offered.includes(current)) return current;
  const isPlaceholder = current.trim() === "" || (placeholder !== undefined && current === placeholder);
  if (!isPlaceholder) return current;
  return offered.length === 1 ? offered[0] : "";
}

/** A preset's name in the person's language (`preset.<id>`); brand names stay as they
 * are, so a preset without a wording shows the core's label. */
export function presetLabel(lang: Lang, preset: Pick<LlmPreset, "id" | "label">): string {
  const id = `preset.${preset.id}`;
  return has(lang, id) ? translate(lang, id as MessageId) : preset.label;
}

/**
 * How a model id is shown. A local server may name its model by the file it loaded
 * (llama.cpp: "/models/…/SmolLM2-135M-Instruct.Q4_1.gguf"): then the file name, which
 * tells models apart where a long shared folder would fill the field. Other ids
 * ("gpt-4o-mini", "Qwen/Qwen2.5-7B-Instruct") are shown as they are.
 */
export function modelLabel(id: string): string {
  if (!/^(\/|~\/|[A-Za-z]:[\\/])/.test(id)) return id;
  const name = id.split(/[\\/]/).filter((part) => part !== "").at(-1);
  return name ?? id;
}
