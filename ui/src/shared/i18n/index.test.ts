import { describe, expect, it } from "vitest";
import { en, type Messages } from "./en";
import { describeError, describeFinding, describeHint, describeFitPoint, describeLocation, detectLang, formatTime, loadMessages, messagesGeneration, messagesLoaded, onMessages, profileName, replaceCatalogForTest, translate } from ".";
import { zh } from "./zh";

describe("i18n", () => {
  it("a catalog loads once, on demand; its arrival moves the generation and is heard; a failed load is tried again", async () => {
    let calls = 0;
    let fail = true;
    const restore = replaceCatalogForTest("zh", async () => {
      calls++;
      if (fail) throw new Error("chunk missing");
      return zh;
    });
    try {
      expect(messagesLoaded("zh")).toBe(false);
      // Before it arrives the Chinese words are the English ones, never ids.
      expect(translate("zh", "projects.heading")).toBe(en["projects.heading"]);
      await expect(loadMessages("zh")).rejects.toThrow("chunk missing");
      fail = false;
      const heard: number[] = [];
      const stop = onMessages(() => heard.push(messagesGeneration()));
      const before = messagesGeneration();
      await Promise.all([loadMessages("zh"), loadMessages("zh")]);
      await loadMessages("zh");
      stop();
      expect(calls).toBe(2);
      expect(heard).toEqual([before + 1]);
      expect(translate("zh", "projects.heading")).toBe(zh["projects.heading"]);
    } finally {
      await restore();
    }
  });

  it("follows the browser language", () => {
    expect(detectLang("zh-CN")).toBe("zh");
    expect(detectLang("zh-Hant-TW")).toBe("zh");
    expect(detectLang("en-US")).toBe("en");
    expect(detectLang("de")).toBe("en");
    expect(detectLang(undefined)).toBe("en");
  });

  it("words a count of one in the singular where the table has it", () => {
    expect(translate("en", "ai.approval.applyWhat", { summary: "Fix", target: "the source", n: 1 })).toBe("Write “Fix” into the source: 1 change, exactly this:");
    expect(translate("en", "ai.approval.applyWhat", { summary: "Fix", target: "the source", n: 3 })).toBe("Write “Fix” into the source: 3 changes, exactly these:");
    expect(translate("en", "ai.review.rebaseConflicts", { n: 1 })).toBe("1 change overlapped your edits and was left out.");
    expect(translate("en", "ai.staging.bar", { n: 1 })).toBe("1 proposal staged, not applied yet");
    expect(translate("zh", "ai.approval.applyWhat", { summary: "改", target: "正文", n: 1 })).toBe("将“改”写入正文：共 1 处修改，内容如下：");
  });

  it("words counts by the language's plural rules: one and other in English, one form in Chinese", () => {
    expect(translate("en", "data.imported", { n: 1 })).toBe("Imported 1 project");
    expect(translate("en", "data.imported", { n: 2 })).toBe("Imported 2 projects");
    expect(translate("en", "data.imported", { n: 0 })).toBe("Imported 0 projects");
    expect(translate("zh", "data.imported", { n: 1 })).toBe("已导入 1 个项目");
    expect(translate("en", "drafts.compiling", { n: 1 })).toBe("Compiling 1 platform draft…");
    expect(translate("en", "ai.input.edits", { summary: "Fix", n: 1 })).toBe("“Fix”: 1 edit");
    expect(translate("en", "ai.input.edits", { summary: "Fix", n: 2 })).toBe("“Fix”: 2 edits");
    expect(translate("en", "data.backupCounts", { p: translate("en", "projects.count", { n: 1 }), v: translate("en", "data.versionCount", { n: 1 }) })).toBe("1 project, 1 version");
    // The core's wordings carry counts as text; "(s)" is the English the core writes.
    const images = (n: string) => describeFinding("en", { message: `${n} image(s): …`, suggestion: null, messageId: "wechat.images", params: { n } }).message;
    expect(images("1")).toBe("1 image: WeChat needs it uploaded to its own image host (external image URLs are filtered).");
    expect(images("3")).toBe("3 images: WeChat needs them uploaded to its own image host (external image URLs are filtered).");
    expect(describeFinding("zh", { message: "", suggestion: null, messageId: "wechat.images", params: { n: "1" } }).message).toBe("1 张图片：微信需要先上传到它自己的图床（外部图片地址会被过滤）。");
    // No English count wording is left without its singular ("version {n} conflicts" is a
    // verb, not a count).
    const verbs = new Set(["restore.done", "restore.doneSnapshot", "sync.conflictBar"]);
    const counted = Object.entries(en).filter(([id, text]) => !/\.(one|other)$/.test(id) && !verbs.has(id) && /\{n\} \w+s\b|\(s\)/.test(text));
    expect(counted.filter(([id]) => !(`${id}.one` in en)).map(([id]) => id)).toEqual([]);
  });

  it("fills variables", () => {
    expect(translate("en", "project.head", { n: 12 })).toBe("v12");
    expect(translate("zh", "project.head", { n: 12 })).toBe("第 12 版");
  });

  it("describes errors from code and hint ids, falling back to the English text", () => {
    const err = {
      code: "VALIDATION" as const,
      message: "title must not be empty",
      hints: [
        { id: "offline.check_running", message: "english hint" },
        { id: "unknown.hint", message: "Use a shorter title." },
      ],
    };
    expect(describeError("zh", err)).toEqual({
      title: "部分输入无效。",
      details: ["请确认 Inkstone 仍在运行，然后重试。", "Use a shorter title."],
    });
    expect(describeError("en", err)).toEqual({
      title: "Some of the input is not valid.",
      details: ["title must not be empty", "Check that Inkstone is still running, then try again.", "Use a shorter title."],
    });
  });

  it("words an error's particular problem when the core names one", () => {
    const stale = { code: "CONFLICT" as const, message: "Project prj_1 changed elsewhere (revision 5 is newer than 3).", hints: [], messageId: "project.changed", params: { current: "5", base: "3" } };
    expect(describeError("zh", stale).title).toBe("这个项目已在别处被修改（修订号 5 比 3 新）；没有任何内容被覆盖。");
    expect(describeError("en", stale)).toEqual({ title: "This project was changed elsewhere (revision 5 is newer than 3); nothing was overwritten.", details: [] });
    const closed = { code: "CONFLICT" as const, message: "Proposal p is superseded; …", hints: [], messageId: "proposal.not_open", params: { status: "superseded" } };
    expect(describeError("zh", closed).title).toBe("这个建议已不再待审阅（状态：已被替代）；只有待审阅的建议可以接受或拒绝。");
    // The workspace server is not Inkstone's own backend.
    const server = { code: "OFFLINE" as const, message: "The workspace server could not be reached (…).", hints: [], messageId: "sync.unreachable" };
    expect(describeError("zh", server).title).toBe("无法连接工作区服务器。");
    expect(describeError("zh", { code: "OFFLINE", message: "provider host", hints: [] }).title).toBe("无法连接服务器。");
    expect(describeError("zh", { code: "OFFLINE", message: "x", hints: [{ id: "offline.check_running", message: "x" }] }).title).toBe("无法连接 Inkstone 后端。");
    // An id the UI has no wording for falls back to the code's.
    expect(describeError("en", { code: "CONFLICT", message: "Specific.", hints: [], messageId: "no.such" })).toEqual({ title: "This conflicts with the current state; nothing was changed or overwritten.", details: ["Specific."] });
  });

  it("words hints with their values in either language", () => {
    const open = { id: "open_newer", message: "Review the newer proposal prop_2 instead.", params: { newer: "prop_2" } };
    expect(describeHint("zh", open)).toBe("请改为审阅更新的建议（prop_2）。");
    expect(describeHint("en", open)).toBe("Review the newer proposal (prop_2) instead.");
    const url = { id: "reconnect_previous", message: "Connect to https://a.example again …", params: { url: "https://a.example" } };
    expect(describeHint("zh", url)).toBe("请重新连接 https://a.example 并恢复同步，先把这些版本送达。");
    // A harness hint of the AI panel, and one the UI has no wording for.
    expect(describeHint("zh", { id: "approve", message: "Approve or deny the request to continue." })).toBe("请批准或拒绝这个请求，以便继续。");
    expect(describeHint("zh", { id: "no.such", message: "Plain English." })).toBe("Plain English.");
    const err = { code: "CONFLICT" as const, message: "Nothing is staged in session ses_1.", hints: [{ id: "stage", message: "Stage … ses_1", params: { session: "ses_1" } }] };
    expect(describeError("zh", err).details).toEqual(["请先暂存一个建议。"]);
  });

  it("words findings from their id and values in either language", () => {
    const limit = {
      message: "The post 3 is 300 weighted characters; the limit is 280.",
      suggestion: "Cut the post 3 to at most 280 weighted characters.",
      messageId: "limit.over",
      params: { field: "post", post: "3", length: "300", bound: "280", unit: "xWeighted" },
      suggestionId: "limit.shorten",
    };
    expect(describeFinding("en", limit)).toEqual({ message: limit.message, suggestion: limit.suggestion });
    expect(describeFinding("zh", limit)).toEqual({ message: "第 3 条帖子为 300 加权字符，上限为 280。", suggestion: "把第 3 条帖子控制在 280 加权字符以内。" });
    const routed = { ...limit, message: "", messageId: "limit.under", params: { field: "title", length: "2", bound: "5", unit: "chars", route: "app" } };
    expect(describeFinding("en", routed).message).toBe("The title is 2 characters; at least 5 are expected on the app route.");
    expect(describeFinding("zh", routed).message).toBe("标题为 2 字，App发布方式下至少应为 5。");
    expect(describeFinding("zh", { ...routed, params: { ...routed.params, route: "image-text" } }).message).toBe("标题为 2 字，图文发布方式下至少应为 5。");
    const cta = { message: "x", suggestion: "y", messageId: "cta.missing", params: { brand: "山行", cta: "关注我们" }, suggestionId: "cta.missing" };
    expect(describeFinding("zh", cta)).toEqual({ message: "缺少品牌设定“山行”的行动号召：“关注我们”。", suggestion: "在文末附近加上它。" });
    expect(describeFinding("zh", { message: "Unknown wording.", suggestion: null, messageId: "no.such" })).toEqual({ message: "Unknown wording.", suggestion: null });
  });

  it("names profiles and risk lists by name, not by their ids", () => {
    expect(profileName("en", "wechat@draft-v1")).toBe("WeChat draft rules v1");
    expect(profileName("zh", "wechat@draft-v1")).toBe("微信公众号草稿规则 v1");
    expect(profileName("en", "xiaohongshu@growth-v2")).toBe("Xiaohongshu audience profile v2");
    expect(profileName("zh", "ad-law-zh@v2")).toBe("广告法用语表 v2");
    expect(profileName("en", "growth-promise@v1+local.3")).toBe("growth-promise terms v1 (your override 3)");
    expect(profileName("en", "zhihu@draft-v1+local.1")).toBe("Zhihu draft rules v1 (your override 1)");
    // Not a profile id: as it is.
    expect(profileName("en", "my-list@v1")).toBe("my-list@v1");
    expect(profileName("zh", "gpt-4o")).toBe("gpt-4o");
    const adLaw = { message: "x", suggestion: null, messageId: "ad_law", params: { term: "最佳", list: "ad-law-zh@v2" } };
    expect(describeFinding("zh", adLaw).message).not.toContain("@");
    expect(describeFinding("zh", adLaw).message).toContain("广告法用语表 v2");
  });

  it("words a limit's fix and a finding's place in either language", () => {
    const limit = { message: "m", suggestion: "Bring the title to at least 5 characters.", messageId: "limit.under", params: { field: "title", length: "3", bound: "5", unit: "chars", source: "x.com" }, suggestionId: "limit.lengthen" };
    expect(describeFinding("zh", limit).suggestion).toBe("把标题补足到至少 5 字。");
    expect(describeFinding("en", limit).suggestion).toBe(limit.suggestion);
    const xhs = { ...limit, suggestion: "", messageId: "limit.over", suggestionId: "limit.shorten", params: { field: "title", length: "30", bound: "20", unit: "xhsUnits" } };
    expect(describeFinding("zh", xhs)).toEqual({ message: "标题为 30 字（两个英文字母或数字算一个字），上限为 20。", suggestion: "把标题控制在 20 字（两个英文字母或数字算一个字）以内。" });
    expect(describeLocation("zh", "post 3")).toBe("第 3 条帖子");
    expect(describeLocation("zh", "title")).toBe("标题");
    expect(describeLocation("en", "title")).toBe("title");
    expect(describeLocation("zh", "title candidate “春天 (上)”")).toBe("标题候选“春天 (上)”");
    expect(describeLocation("zh", "title candidate “春天” (xiaohongshu)")).toBe("标题候选“春天”（小红书）");
    expect(describeLocation("en", "title candidate “Spring” (x)")).toBe("title candidate “Spring” (X)");
    expect(describeLocation("zh", "somewhere else")).toBe("somewhere else");
  });

  it("words fit points: the measurement from its id, the rule named in Chinese with the profile's words kept", () => {
    const title = { check: "title_length", measured: "title 2 characters; the rule is 9–100", rule: "Phrase as a question; 9-100 characters.", messageId: "title_length", params: { n: "2", min: "9", max: "100" } };
    expect(describeFitPoint("en", title)).toEqual({ measured: title.measured, rule: title.rule, ruleDetail: null });
    expect(describeFitPoint("zh", title)).toEqual({ measured: "标题 2 字；规则为 9–100 字", rule: "标题长度", ruleDetail: title.rule });
    const over = {
      check: "limits",
      measured: "The title is 300 characters; the limit is 64.",
      rule: "The limits of wechat@draft-v1",
      messageId: "limits.over",
      params: { profile: "wechat@draft-v1" },
      findings: [{ message: "The title is 300 characters; the limit is 64.", suggestion: null, messageId: "limit.over", params: { field: "title", length: "300", bound: "64", unit: "chars" } }],
    };
    expect(describeFitPoint("zh", over)).toEqual({ measured: "标题为 300 字，上限为 64。", rule: "wechat@draft-v1 的限制", ruleDetail: over.rule });
    expect(describeFitPoint("en", over).measured).toBe(over.measured);
    // A report recorded before wordings existed keeps its English.
    const old = { check: "hook", measured: "the first sentence is 5 characters", rule: "A hook" };
    expect(describeFitPoint("zh", old)).toEqual({ measured: old.measured, rule: old.rule, ruleDetail: null });
  });

  it("formats recent and older times", () => {
    const now = Date.parse("2026-11-22T12:00:00Z");
    expect(formatTime("en", "2026-11-22T11:59:50Z", now)).toBe("just now");
    expect(formatTime("zh", "2026-11-22T11:59:50Z", now)).toBe("刚刚");
    expect(formatTime("en", "2026-11-22T10:00:00Z", now)).toBe("2 hours ago");
    expect(formatTime("en", "2026-11-21T12:00:00Z", now)).toBe("yesterday");
    expect(formatTime("en", "not a date", now)).toBe("not a date");
  });

  it("types the Chinese table against the English ids", () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
    // @ts-expect-error an id English does not define is a compile error
    const extra: Messages = { ...zh, "no.such.id": "多余" };
    const { "app.name": _dropped, ...missing } = zh;
    // @ts-expect-error so is a table that lacks an id
    const incomplete: Messages = missing;
    expect(Object.keys(extra).length - Object.keys(incomplete).length).toBe(2);
  });
});
