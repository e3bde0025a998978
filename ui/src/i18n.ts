// A small message table keyed by id, in Simplified Chinese and English.
// Error codes map to `error.<CODE>`, hint ids to `hint.<id>`; unknown ones fall back to
// the English text the backend sent.

import type { ClientError } from "./api/client";

export type Lang = "en" | "zh";

const en = {
  "app.name": "Inkstone",
  "projects.heading": "Projects",
  "projects.loading": "Loading projects…",
  "projects.count": "{n} projects",
  "projects.count.one": "1 project",
  "new.label": "New project",
  "new.placeholder": "Title of a new project",
  "new.create": "Create",
  "new.creating": "Creating…",
  "new.shortcut": "{mod}+N",
  "empty.title": "No projects yet",
  "empty.body": "Type a title above and press Enter to start your first draft.",
  "empty.shortcut": "Press {mod}+N from anywhere to jump to the title box.",
  "welcome.title": "Pick a project, or start a new one",
  "welcome.body": "Projects are saved on this computer. The editor opens here.",
  "welcome.keys": "Keyboard",
  "welcome.key.new": "New project",
  "project.head": "v{n}",
  "project.head.none": "no versions yet",
  "project.updated": "Updated {time}",
  "project.created": "Created “{title}”",
  "error.dismiss": "Dismiss",
  "error.retry": "Try again",
  "error.NOT_FOUND": "That item no longer exists.",
  "error.VALIDATION": "Some of the input is not valid.",
  "error.CONFLICT": "Someone else changed this first. Reload to see the latest version.",
  "error.STORE_LOCKED": "The project store is in use by another Inkstone window or process.",
  "error.STORE_CORRUPT": "The project store is damaged and could not be read.",
  "error.INTERNAL": "Something went wrong inside Inkstone.",
  "error.OFFLINE": "Inkstone’s backend cannot be reached.",
  "hint.offline.check_running": "Check that Inkstone is still running, then try again.",
  "error.PERMISSION_DENIED": "Inkstone refused this request.",
  "error.TOOL_FORBIDDEN": "That tool is not allowed here.",
  "error.PROVIDER_AUTH": "The model provider did not accept the API key.",
  "error.PROVIDER_RATE_LIMITED": "The model provider is limiting requests. Wait a moment and try again.",
  "error.PROVIDER_UNAVAILABLE": "The model provider cannot be reached right now.",
  "error.CONTEXT_TOO_LONG": "The text is too long for this model.",
  "error.QUOTA_EXCEEDED": "The usage limit for this model has been reached.",
  "error.KEYCHAIN_UNAVAILABLE": "The system keychain is not available.",
  "error.TIMEOUT": "This took too long and was stopped.",
  "error.STORE_TOO_NEW": "This data folder was written by a newer Inkstone.",
  "error.IO": "A file could not be read or written.",
  "hint.retry": "Try again; if it keeps failing, restart Inkstone.",
  "hint.check_disk": "Check that the disk is not full and the data folder is writable.",
  "hint.check_path": "Check that the file or folder exists and is readable.",
  "hint.close_other_instance": "Close the other Inkstone window or command, then try again.",
  "hint.reload_and_merge": "Reload the project, compare both versions, and choose what to keep.",
  "hint.report_bug": "This is a bug in Inkstone. Your data is unchanged; please report what you did.",
  "hint.update_app": "Update Inkstone to the newest version.",
  "hint.use_launch_url": "Open the address that `inkstone-cli serve` printed.",
} as const;

export type MessageId = keyof typeof en;

const zh: Record<MessageId, string> = {
  "app.name": "Inkstone",
  "projects.heading": "项目",
  "projects.loading": "正在加载项目…",
  "projects.count": "{n} 个项目",
  "projects.count.one": "1 个项目",
  "new.label": "新建项目",
  "new.placeholder": "新项目的标题",
  "new.create": "创建",
  "new.creating": "正在创建…",
  "new.shortcut": "{mod}+N",
  "empty.title": "还没有项目",
  "empty.body": "在上方输入标题并按回车，开始第一篇稿件。",
  "empty.shortcut": "在任何位置按 {mod}+N 都能回到标题输入框。",
  "welcome.title": "选择一个项目，或新建一个",
  "welcome.body": "项目保存在这台电脑上，编辑器将在这里打开。",
  "welcome.keys": "快捷键",
  "welcome.key.new": "新建项目",
  "project.head": "第 {n} 版",
  "project.head.none": "尚无版本",
  "project.updated": "更新于 {time}",
  "project.created": "已创建“{title}”",
  "error.dismiss": "关闭",
  "error.retry": "重试",
  "error.NOT_FOUND": "该内容已不存在。",
  "error.VALIDATION": "部分输入无效。",
  "error.CONFLICT": "内容已被其他地方修改，请重新加载查看最新版本。",
  "error.STORE_LOCKED": "项目库正被另一个 Inkstone 窗口或进程使用。",
  "error.STORE_CORRUPT": "项目库已损坏，无法读取。",
  "error.INTERNAL": "Inkstone 内部出错了。",
  "error.OFFLINE": "无法连接 Inkstone 后端。",
  "hint.offline.check_running": "请确认 Inkstone 仍在运行，然后重试。",
  "error.PERMISSION_DENIED": "Inkstone 拒绝了此请求。",
  "error.TOOL_FORBIDDEN": "此处不允许使用该工具。",
  "error.PROVIDER_AUTH": "模型服务商未接受该 API 密钥。",
  "error.PROVIDER_RATE_LIMITED": "模型服务商正在限制请求频率，请稍后重试。",
  "error.PROVIDER_UNAVAILABLE": "暂时无法连接模型服务商。",
  "error.CONTEXT_TOO_LONG": "文本超出了该模型的长度上限。",
  "error.QUOTA_EXCEEDED": "该模型的用量已达上限。",
  "error.KEYCHAIN_UNAVAILABLE": "系统钥匙串不可用。",
  "error.TIMEOUT": "耗时过长，已停止。",
  "error.STORE_TOO_NEW": "此数据文件夹由更新版本的 Inkstone 写入。",
  "error.IO": "无法读取或写入文件。",
  "hint.retry": "请重试；如果仍然失败，请重启 Inkstone。",
  "hint.check_disk": "请确认磁盘未满，且数据文件夹可写。",
  "hint.check_path": "请确认文件或文件夹存在且可读。",
  "hint.close_other_instance": "请关闭另一个 Inkstone 窗口或命令，然后重试。",
  "hint.reload_and_merge": "请重新加载项目，对比两个版本，再决定保留哪些内容。",
  "hint.report_bug": "这是 Inkstone 的缺陷。你的数据未受影响，请反馈你的操作步骤。",
  "hint.update_app": "请将 Inkstone 更新到最新版本。",
  "hint.use_launch_url": "请打开 `inkstone-cli serve` 输出的地址。",
};

const tables: Record<Lang, Record<string, string>> = { en, zh };

export function detectLang(language: string | undefined | null): Lang {
  return (language ?? "").toLowerCase().startsWith("zh") ? "zh" : "en";
}

export function has(lang: Lang, id: string): boolean {
  return Object.prototype.hasOwnProperty.call(tables[lang], id);
}

export function translate(lang: Lang, id: MessageId, vars: Record<string, string | number> = {}): string {
  const template = tables[lang][id] ?? en[id] ?? id;
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}

export interface DescribedError {
  title: string;
  /** Extra lines: the backend's specific message (English UI only) and the hints. */
  details: string[];
}

/** Turns an error into text in the user's language, from its code and hint ids. */
export function describeError(lang: Lang, error: ClientError): DescribedError {
  const codeId = `error.${error.code}`;
  const known = has(lang, codeId);
  const title = known ? tables[lang][codeId] : error.message;
  const details: string[] = [];
  // The backend's message is English and specific; show it under the headline in English.
  if (known && lang === "en" && error.message && error.message !== title) details.push(error.message);
  for (const hint of error.hints) {
    const hintId = `hint.${hint.id}`;
    const text = has(lang, hintId) ? tables[lang][hintId] : hint.message;
    if (text && !details.includes(text)) details.push(text);
  }
  return { title, details };
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
