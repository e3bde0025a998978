import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyPlatformFonts, fontOs } from "./platformFonts";

describe("platform fonts", () => {
  it("marks Linux (WebKitGTK's navigator.platform) and nothing else", () => {
    expect(fontOs("Linux x86_64")).toBe("linux");
    expect(fontOs("Linux aarch64")).toBe("linux");
    expect(fontOs("MacIntel")).toBeUndefined();
    expect(fontOs("Win32")).toBeUndefined();
    const root = document.createElement("html");
    applyPlatformFonts("Linux x86_64", root);
    expect(root.dataset.os).toBe("linux");
    applyPlatformFonts("MacIntel", root);
    expect(root.dataset.os).toBeUndefined();
  });

  it("gives Linux generic families only: no named family for fontconfig to look up", () => {
    const css = readFileSync(join(__dirname, "../../app/styles.css"), "utf8");
    const rule = /:root\[data-os="linux"\]\s*\{([^}]*)\}/.exec(css);
    expect(rule, "styles.css has the Linux font rule").not.toBeNull();
    const decls = Object.fromEntries([...rule![1].matchAll(/(--[a-z]+):\s*([^;]+);/g)].map((m) => [m[1], m[2].trim()]));
    expect(decls["--font"]).toBe("sans-serif");
    expect(decls["--mono"]).toBe("monospace");
  });
});
