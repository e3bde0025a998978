// How performance numbers are shown: a metric that was not reported is "—", never 0;
// a lower bound (`10w+`) keeps its "+", a rounded value (`1.2万`) its "≈"; rates are
// percents, times seconds, money yuan. Times are shown in the publication's own zone.
import type { MetricSnapshot, MetricValue, Platform } from "../../shared/api/generated";
import type { Lang } from "../../shared/i18n";

export const ABSENT = "—";

export const PLATFORMS: Platform[] = ["wechat", "zhihu", "x", "douyin", "xiaohongshu"];

/** The metrics a platform usually shows, in the order its back office lists them:
 * the fields of manual entry. */
export const USUAL_METRICS: Record<Platform, string[]> = {
  wechat: ["readers", "views", "likes", "wow", "shares", "comments", "follows", "read_completion"],
  zhihu: ["views", "upvotes", "zhihu_likes", "comments", "saves", "shares"],
  x: ["impressions", "likes", "reposts", "comments", "saves", "engagements", "profile_visits"],
  douyin: ["views", "likes", "comments", "shares", "saves", "play_completion", "follows"],
  xiaohongshu: ["impressions", "views", "likes", "comments", "saves", "shares", "follows", "cover_ctr"],
};

/** A metric's value as shown, or "—" when it was not reported. */
export function formatMetric(lang: Lang, v: MetricValue | undefined | null): string {
  if (!v) return ABSENT;
  const locale = lang === "zh" ? "zh-CN" : "en";
  let text: string;
  switch (v.unit) {
    case "ratio":
      text = `${(v.value * 100).toLocaleString(locale, { maximumFractionDigits: 1 })}%`;
      break;
    case "seconds":
      text = `${v.value.toLocaleString(locale, { maximumFractionDigits: 1 })}s`;
      break;
    case "fen":
      text = `¥${(v.value / 100).toLocaleString(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
      break;
    case "count":
      text = v.value.toLocaleString(locale, { maximumFractionDigits: 2 });
      break;
  }
  if (v.qualifier === "lowerBound") return `${text}+`;
  if (v.qualifier === "rounded") return `≈${text}`;
  return text;
}

/** Hours since publishing, short: "5 h", "3 d". */
export function formatAge(lang: Lang, hours: number): string {
  if (hours < 48) {
    const h = Math.round(hours * 10) / 10;
    return lang === "zh" ? `${h} 小时` : `${h} h`;
  }
  const d = Math.round((hours / 24) * 10) / 10;
  return lang === "zh" ? `${d} 天` : `${d} d`;
}

/** `iso` as `YYYY-MM-DD HH:mm` in the IANA zone `zone` (the form the engine reads back). */
export function localTime(iso: string | number, zone: string): string {
  const date = new Date(iso);
  try {
    // Swedish writes dates as ISO does.
    return new Intl.DateTimeFormat("sv-SE", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    })
      .format(date)
      .replace("T", " ");
  } catch {
    return date.toISOString().slice(0, 16).replace("T", " ");
  }
}

/** The time zone a platform's times are in by default (as the engine has it). */
export function defaultZone(platform: Platform): string {
  return platform === "x" ? "UTC" : "Asia/Shanghai";
}

/** The metric keys any of `snapshots` reports, the platform's usual ones first; with
 * `withUsual`, the usual ones also when none reports them (a table's columns, where
 * what was not reported shows as "—"). */
export function reportedKeys(platform: Platform, snapshots: MetricSnapshot[], withUsual = false): string[] {
  const seen = new Set<string>();
  for (const s of snapshots) for (const k of Object.keys(s.metrics)) seen.add(k);
  const usual = USUAL_METRICS[platform].filter((k) => withUsual || seen.has(k));
  const rest = [...seen].filter((k) => !usual.includes(k)).sort();
  return [...usual, ...rest];
}

/** Snapshots ordered by age since publishing (the trend's x axis). */
export function byAge(snapshots: MetricSnapshot[]): MetricSnapshot[] {
  return [...snapshots].sort((a, b) => a.ageHours - b.ageHours || a.id.localeCompare(b.id));
}
