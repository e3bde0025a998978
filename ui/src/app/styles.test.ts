// @vitest-environment node
// The stylesheet parses, and no rule sits inside another rule. The UI does not use CSS
// nesting, so a nested rule is a lost closing brace (a merge can drop one), which
// silently scopes every later rule under the one left open.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postcss from "postcss";
import { describe, expect, it } from "vitest";

describe("styles.css", () => {
  const css = readFileSync(join(__dirname, "styles.css"), "utf8");

  it("parses, with every block closed", () => {
    expect(() => postcss.parse(css, { from: "styles.css" })).not.toThrow();
  });

  it("has no rule inside another rule", () => {
    const nested: string[] = [];
    postcss.parse(css, { from: "styles.css" }).walkRules((rule) => {
      if (rule.parent?.type === "rule") nested.push(`line ${rule.source?.start?.line}: ${rule.selector} inside ${(rule.parent as postcss.Rule).selector}`);
    });
    expect(nested).toEqual([]);
  });
});
