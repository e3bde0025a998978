import { describe, expect, it } from "vitest";
import { en } from "./en";
import { formatMessage } from "./format";
import { zh } from "./zh";

const enRules = new Intl.PluralRules("en");

describe("the catalogs' message syntax", () => {
  it("fills values and leaves a missing one as its place", () => {
    expect(formatMessage("Saved as version {n} of {title}", { n: 12, title: "Spring" }, enRules)).toBe("Saved as version 12 of Spring");
    expect(formatMessage("Hello {who}", {}, enRules)).toBe("Hello {who}");
  });

  it("chooses a plural branch by the language's rules, an exact one first, and # is the count", () => {
    const m = "{n, plural, =0 {No changes} one {1 change in {file}} other {# changes in {file}}}";
    expect(formatMessage(m, { n: 0, file: "a" }, enRules)).toBe("No changes");
    expect(formatMessage(m, { n: 1, file: "a" }, enRules)).toBe("1 change in a");
    expect(formatMessage(m, { n: "3", file: "a" }, enRules)).toBe("3 changes in a");
    // A count that is not a number, or none, takes `other`.
    expect(formatMessage(m, { n: "1,234", file: "a" }, enRules)).toBe("1,234 changes in a");
    expect(formatMessage(m, { file: "a" }, enRules)).toBe("{n} changes in a");
    // Chinese has one form.
    expect(formatMessage("{n, plural, one {一} other {# 个}}", { n: 1 }, new Intl.PluralRules("zh"))).toBe("1 个");
  });

  it("keeps text that is not a message argument as it is", () => {
    expect(formatMessage("Markdown works: # heading, {not an arg}, a } alone", {}, enRules)).toBe("Markdown works: # heading, {not an arg}, a } alone");
    expect(formatMessage("{n, plural, one {unclosed", { n: 1 }, enRules)).toBe("{n, plural, one {unclosed");
  });

  it("every catalog message parses: no stray plural syntax shows to a person", () => {
    for (const table of [en, zh] as Record<string, string>[]) {
      for (const [id, text] of Object.entries(table)) {
        const shown = formatMessage(text, { n: 2 }, enRules);
        expect(shown, id).not.toMatch(/, plural,|\bother \{/);
      }
    }
  });
});
