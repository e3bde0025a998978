import { describe, expect, it } from "vitest";
import { en, type Messages } from "./en";
import { describeError, detectLang, formatTime, translate } from "./index";
import { zh } from "./zh";

describe("i18n", () => {
  it("follows the browser language", () => {
    expect(detectLang("zh-CN")).toBe("zh");
    expect(detectLang("zh-Hant-TW")).toBe("zh");
    expect(detectLang("en-US")).toBe("en");
    expect(detectLang("de")).toBe("en");
    expect(detectLang(undefined)).toBe("en");
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
