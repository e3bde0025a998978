import { afterEach, describe, expect, it } from "vitest";
import { createDefaultTransport, TOKEN_STORAGE_KEY } from "./client";

afterEach(() => {
  delete (globalThis as Record<string, unknown>).isTauri;
  sessionStorage.clear();
  history.replaceState(null, "", "/");
});

describe("default transport", () => {
  it("uses HTTP in a browser, taking the token out of the real URL", () => {
    history.replaceState(null, "", "/#token=s3cret");
    const t = createDefaultTransport();
    expect(t.kind).toBe("http");
    expect(location.hash).toBe("");
    expect(location.href).not.toContain("s3cret");
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe("s3cret");
    // A reload has no hash but still finds the token.
    expect(createDefaultTransport().kind).toBe("http");
    expect(sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe("s3cret");
  });

  it("uses Tauri IPC inside the app", () => {
    (globalThis as Record<string, unknown>).isTauri = true;
    expect(createDefaultTransport().kind).toBe("tauri");
  });
});
