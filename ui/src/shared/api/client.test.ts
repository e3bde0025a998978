// @vitest-environment node
import type { TimelinePatch } from "./generated";
import { describe, expect, it } from "vitest";
import {
  ApiClient,
  type ClientError,
  createHttpTransport,
  createTauriTransport,
  type FetchFn,
  type HarnessEvent,
  SseParser,
  STALE_ADDRESS,
  type StreamEvent,
  TOKEN_STORAGE_KEY,
  takeToken,
} from "./client";
import type { ExportResult, Project } from "./generated";

const project: Project = {
  id: "p1",
  title: "春季上新",
  source: "",
  revision: 1,
  head: 1,
  platforms: [],
  brandProfileId: null,
  templateId: null,
  archived: false,
  createdAt: "2026-11-22T01:00:00Z",
  updatedAt: "2026-11-22T01:00:00Z",
};

const exported: ExportResult = {
  path: "/tmp/out",
  manifest: {
    format: "inkstone-export",
    formatVersion: 1,
    schemaVersion: 1,
    exportedAt: "2026-11-22T01:00:00Z",
    changeMarker: "m",
    counts: {
      projects: 1,
      versions: 0,
      comments: 0,
      activities: 0,
      brandProfiles: 0,
      templates: 0,
      media: 0,
      llmProfiles: 0,
      usageRecords: 0,
      platformDrafts: 0,
      sessions: 0,
      sessionEvents: 0,
    },
  },
};

/** What a turn streams: a live delta (sequence 0) and the logged message after it. */
const harnessEvents: HarnessEvent[] = [
  {
    eventId: "evt_2",
    sequence: 0,
    sessionId: "ses_1",
    turnId: "turn_1",
    createdAt: "2026-11-22T01:00:01Z",
    modelVisible: false,
    kind: "assistant_delta",
    payload: { text: "春季" },
  },
  {
    eventId: "evt_3",
    sequence: 3,
    sessionId: "ses_1",
    turnId: "turn_1",
    createdAt: "2026-11-22T01:00:02Z",
    modelVisible: true,
    kind: "user_message",
    payload: { text: "改短一点 🌸", wasQueued: false },
  },
];

/** Enough of a submit result for a transport to pass through untouched. */
const submitted = { queued: false, session: { lastSequence: 3 } };

interface Seen {
  url: string;
  init: RequestInit;
}

function fakeFetch(respond: (url: string, init: RequestInit) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const fn: FetchFn = async (url, init) => {
    seen.push({ url, init });
    return respond(url, init);
  };
  return { fn, seen };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

function byteStream(chunks: Uint8Array[], opts: { error?: Error } = {}): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(ch);
      if (opts.error) c.error(opts.error);
      else c.close();
    },
  });
}

function sse(chunks: Uint8Array[], status = 200, opts: { error?: Error } = {}): Response {
  return new Response(byteStream(chunks, opts), { status, headers: { "Content-Type": "text/event-stream" } });
}

async function rejection(p: Promise<unknown>): Promise<ClientError> {
  try {
    await p;
  } catch (e) {
    return e as ClientError;
  }
  throw new Error("expected a rejection");
}

describe("HTTP transport: calls", () => {
  it("POSTs JSON params to /api/<method> with the bearer token and returns the result", async () => {
    const f = fakeFetch(() => json(200, project));
    const client = new ApiClient(createHttpTransport({ token: "tok123", fetch: f.fn }));
    const result = await client.call("project.create", { title: "春季上新" });
    expect(result).toEqual(project);
    expect(f.seen).toHaveLength(1);
    const { url, init } = f.seen[0];
    expect(url).toBe("/api/project.create");
    expect(init.method).toBe("POST");
    const headers = init.headers as Record<string, string>;
    expect(headers.Authorization).toBe("Bearer tok123");
    expect(headers["Content-Type"]).toBe("application/json");
    expect(JSON.parse(init.body as string)).toEqual({ title: "春季上新" });
  });

  it("prefixes a base URL and omits Authorization without a token", async () => {
    const f = fakeFetch(() => json(200, { projects: [] }));
    const client = new ApiClient(createHttpTransport({ token: null, baseUrl: "http://127.0.0.1:9/", fetch: f.fn }));
    await expect(client.call("project.list", {})).resolves.toEqual({ projects: [] });
    expect(f.seen[0].url).toBe("http://127.0.0.1:9/api/project.list");
    expect((f.seen[0].init.headers as Record<string, string>).Authorization).toBeUndefined();
  });

  it("rejects with the ApiError body of a non-200 answer", async () => {
    const body = {
      code: "VALIDATION",
      message: "title must not be empty",
      hints: [{ id: "project.title_required", message: "Give the project a title." }],
      details: { field: "title" },
    };
    const f = fakeFetch(() => json(400, body));
    const client = new ApiClient(createHttpTransport({ token: "t", fetch: f.fn }));
    const err = await rejection(client.call("project.create", { title: "" }));
    expect(err).toEqual(body);
  });

  it("names a refused launch token (401) as a stale address and tells the listeners, for calls and streams", async () => {
    const body = { code: "PERMISSION_DENIED", message: "Missing or wrong access token.", hints: [{ id: "use_launch_url", message: "Open the URL." }] };
    const f = fakeFetch(() => json(401, body));
    const client = new ApiClient(createHttpTransport({ token: "from-an-earlier-launch", fetch: f.fn }));
    let told = 0;
    const stop = client.onStaleAddress(() => told++);
    const err = await rejection(client.call("project.list", {}));
    expect(err.messageId).toBe(STALE_ADDRESS);
    expect(err.code).toBe("PERMISSION_DENIED");
    await rejection(client.stream("import.markdown", { path: "/x" }, () => undefined));
    expect(told).toBe(2);
    // Other refusals (403: a foreign Host or Origin) are not about the address's token.
    const other = new ApiClient(createHttpTransport({ token: "t", fetch: fakeFetch(() => json(403, body)).fn }));
    other.onStaleAddress(() => told++);
    expect((await rejection(other.call("project.list", {}))).messageId).toBeUndefined();
    stop();
    await rejection(client.call("project.list", {}));
    expect(told).toBe(2);
  });

  it("treats every non-200 status as an error, even 2xx ones", async () => {
    const f = fakeFetch(() => json(201, { code: "CONFLICT", message: "x", hints: [] }));
    const client = new ApiClient(createHttpTransport({ token: "t", fetch: f.fn }));
    expect((await rejection(client.call("project.list", {}))).code).toBe("CONFLICT");
  });

  it("fills in missing hints and maps a non-JSON error body to INTERNAL", async () => {
    const f1 = fakeFetch(() => json(409, { code: "CONFLICT", message: "stale" }));
    const e1 = await rejection(new ApiClient(createHttpTransport({ token: "t", fetch: f1.fn })).call("project.list", {}));
    expect(e1).toEqual({ code: "CONFLICT", message: "stale", hints: [] });

    const f2 = fakeFetch(() => new Response("<html>bad gateway</html>", { status: 502 }));
    const e2 = await rejection(new ApiClient(createHttpTransport({ token: "t", fetch: f2.fn })).call("project.list", {}));
    expect(e2.code).toBe("INTERNAL");
    expect(e2.details).toEqual({ status: 502 });
  });

  it("maps a network failure to OFFLINE with a hint", async () => {
    const f = fakeFetch(() => {
      throw new TypeError("Failed to fetch");
    });
    const err = await rejection(new ApiClient(createHttpTransport({ token: "t", fetch: f.fn })).call("project.list", {}));
    expect(err.code).toBe("OFFLINE");
    expect(err.hints.map((h) => h.id)).toEqual(["offline.check_running"]);
    expect(err.details).toEqual({ reason: "Failed to fetch" });
  });

  it("maps a 200 answer that is not JSON to INTERNAL", async () => {
    const f = fakeFetch(() => new Response("not json", { status: 200 }));
    const err = await rejection(new ApiClient(createHttpTransport({ token: "t", fetch: f.fn })).call("project.list", {}));
    expect(err.code).toBe("INTERNAL");
  });
});

describe("SSE parser", () => {
  it("parses events, comments, multi-line data and CRLF", () => {
    const p = new SseParser();
    const events = [
      ...p.push(": keep-alive\n\nevent: progress\ndata: {\"a\":1}\n\n"),
      ...p.push("event:result\r\ndata: line1\r\ndata: line2\r\n\r\n"),
      ...p.push("data: plain\n\n"),
      ...p.push("id: 7\nretry: 100\n\n"),
    ];
    expect(events).toEqual([
      { event: "progress", data: '{"a":1}' },
      { event: "result", data: "line1\nline2" },
      { event: "message", data: "plain" },
    ]);
  });

  it("waits for the \\n after a trailing \\r", () => {
    const p = new SseParser();
    expect(p.push("data: x\r")).toEqual([]);
    expect(p.push("\n\r")).toEqual([]);
    expect(p.push("\n")).toEqual([{ event: "message", data: "x" }]);
  });

  it("delivers a last event without its blank line at the end", () => {
    const p = new SseParser();
    expect(p.push("event: result\ndata: 1")).toEqual([]);
    expect(p.end()).toEqual([{ event: "result", data: "1" }]);
  });
});

describe("HTTP transport: streams", () => {
  const text =
    ": hello\n\n" +
    'event: progress\ndata: {"step":"编译","n":1}\n\n' +
    'event: progress\r\ndata: {"step":"检查","n":2}\r\n\r\n' +
    "event: progress\ndata: {\"step\":\"multi\",\ndata: \"n\":3}\n\n" +
    'event: result\ndata: {"id":"p1","title":"春季上新 🌸"}\n\n';
  const bytes = new TextEncoder().encode(text);
  // The transport hands on each progress event as the StreamEvent the Tauri channel carries.
  const expectedProgress = [
    { step: "编译", n: 1 },
    { step: "检查", n: 2 },
    { step: "multi", n: 3 },
  ].map((data) => ({ type: "progress", data }));

  async function runWithChunks(chunks: Uint8Array[]) {
    const f = fakeFetch(() => sse(chunks));
    const transport = createHttpTransport({ token: "t", fetch: f.fn });
    const progress: StreamEvent[] = [];
    const result = await transport.stream("project.create", { title: "x" }, (e) => progress.push(e));
    return { result, progress, seen: f.seen };
  }

  it("POSTs to /api/stream/<method> and asks for an event stream", async () => {
    const { seen, result, progress } = await runWithChunks([bytes]);
    expect(seen[0].url).toBe("/api/stream/project.create");
    const headers = seen[0].init.headers as Record<string, string>;
    expect(headers.Accept).toBe("text/event-stream");
    expect(headers.Authorization).toBe("Bearer t");
    expect(result).toEqual({ id: "p1", title: "春季上新 🌸" });
    expect(progress).toEqual(expectedProgress);
  });

  it("gives the same answer whichever byte positions the chunks are split at", async () => {
    // Every single cut, then every pair of cuts on a stride (covers splits inside UTF-8
    // sequences, inside "\r\n", inside field names and between events).
    const cuts: number[][] = [];
    for (let i = 1; i < bytes.length; i++) cuts.push([i]);
    for (let i = 1; i < bytes.length; i += 3) for (let j = i + 1; j < bytes.length; j += 5) cuts.push([i, j]);
    for (const c of cuts) {
      const chunks: Uint8Array[] = [];
      let prev = 0;
      for (const at of [...c, bytes.length]) {
        chunks.push(bytes.slice(prev, at));
        prev = at;
      }
      const { result, progress } = await runWithChunks(chunks);
      expect(result, `cuts ${c.join(",")}`).toEqual({ id: "p1", title: "春季上新 🌸" });
      expect(progress, `cuts ${c.join(",")}`).toEqual(expectedProgress);
    }
  });

  it("handles one byte per chunk", async () => {
    const { result, progress } = await runWithChunks([...bytes].map((b) => new Uint8Array([b])));
    expect(result).toEqual({ id: "p1", title: "春季上新 🌸" });
    expect(progress).toEqual(expectedProgress);
  });

  it("rejects with the ApiError of an error event", async () => {
    const body = 'event: progress\ndata: {"n":1}\n\nevent: error\ndata: {"code":"STORE_LOCKED","message":"locked","hints":[{"id":"store.close_other","message":"Close the other window."}]}\n\n';
    const f = fakeFetch(() => sse([new TextEncoder().encode(body)]));
    const progress: StreamEvent[] = [];
    const err = await rejection(createHttpTransport({ token: "t", fetch: f.fn }).stream("m", {}, (e) => progress.push(e)));
    expect(progress).toEqual([{ type: "progress", data: { n: 1 } }]);
    expect(err).toEqual({
      code: "STORE_LOCKED",
      message: "locked",
      hints: [{ id: "store.close_other", message: "Close the other window." }],
    });
  });

  it("rejects with the ApiError body when the stream request itself fails", async () => {
    const f = fakeFetch(() => json(401, { code: "PERMISSION_DENIED", message: "Missing or wrong access token.", hints: [] }));
    const err = await rejection(createHttpTransport({ token: null, fetch: f.fn }).stream("m", {}, () => undefined));
    expect(err.code).toBe("PERMISSION_DENIED");
  });

  it("maps a stream that ends or breaks before its result to OFFLINE", async () => {
    const part = new TextEncoder().encode('event: progress\ndata: {"n":1}\n\n');
    const f1 = fakeFetch(() => sse([part]));
    expect((await rejection(createHttpTransport({ token: "t", fetch: f1.fn }).stream("m", {}, () => undefined))).code).toBe(
      "OFFLINE",
    );
    const f2 = fakeFetch(() => sse([part], 200, { error: new TypeError("network error") }));
    expect((await rejection(createHttpTransport({ token: "t", fetch: f2.fn }).stream("m", {}, () => undefined))).code).toBe(
      "OFFLINE",
    );
  });

  it("passes the abort signal to fetch", async () => {
    const ac = new AbortController();
    const f = fakeFetch((_u, init) => {
      expect(init.signal).toBe(ac.signal);
      return sse([new TextEncoder().encode("event: result\ndata: 1\n\n")]);
    });
    await expect(createHttpTransport({ token: "t", fetch: f.fn }).stream("m", {}, () => undefined, { signal: ac.signal })).resolves.toBe(1);
  });

  it("hands a session's harness events to the caller, whichever way the bytes are chunked", async () => {
    const body =
      harnessEvents.map((e) => `event: harness\ndata: ${JSON.stringify(e)}\n\n`).join("") +
      `event: result\ndata: ${JSON.stringify(submitted)}\n\n`;
    const bytes = new TextEncoder().encode(body);
    for (const cut of [bytes.length, 1, 17, Math.floor(bytes.length / 2), bytes.length - 3]) {
      const f = fakeFetch(() => sse([bytes.slice(0, cut), bytes.slice(cut)]));
      const client = new ApiClient(createHttpTransport({ token: "t", fetch: f.fn }));
      const seen: HarnessEvent[] = [];
      const res = await client.stream("session.submit", { sessionId: "ses_1", text: "改短一点" }, (e) => seen.push(e));
      expect(f.seen[0].url).toBe("/api/stream/session.submit");
      expect(res, `cut ${cut}`).toEqual(submitted);
      expect(seen, `cut ${cut}`).toEqual(harnessEvents);
    }
  });
});

describe("token from the URL", () => {
  function env(hash: string, stored: string | null = null) {
    const store = new Map<string, string>();
    if (stored !== null) store.set(TOKEN_STORAGE_KEY, stored);
    const replaced: string[] = [];
    return {
      store,
      replaced,
      env: {
        location: { hash, pathname: "/", search: "?x=1" },
        storage: {
          getItem: (k: string) => store.get(k) ?? null,
          setItem: (k: string, v: string) => void store.set(k, v),
        },
        history: { state: null, replaceState: (_s: unknown, _t: string, url?: string | URL | null) => void replaced.push(String(url)) },
      },
    };
  }

  it("takes the token from the hash, keeps it in session storage and removes it from the URL", () => {
    const e = env("#token=abc-123");
    expect(takeToken(e.env)).toBe("abc-123");
    expect(e.store.get(TOKEN_STORAGE_KEY)).toBe("abc-123");
    expect(e.replaced).toEqual(["/?x=1"]);
  });

  it("keeps other hash parameters", () => {
    const e = env("#token=abc&view=list");
    expect(takeToken(e.env)).toBe("abc");
    expect(e.replaced).toEqual(["/?x=1#view=list"]);
  });

  it("uses the stored token after a reload, and prefers a fresh one from the hash", () => {
    const reload = env("", "old");
    expect(takeToken(reload.env)).toBe("old");
    expect(reload.replaced).toEqual([]);
    const fresh = env("#token=new", "old");
    expect(takeToken(fresh.env)).toBe("new");
    expect(fresh.store.get(TOKEN_STORAGE_KEY)).toBe("new");
  });

  it("returns null with neither", () => {
    expect(takeToken(env("").env)).toBeNull();
  });
});

describe("Tauri transport", () => {
  it("invokes api_call with method and params", async () => {
    const seen: [string, unknown][] = [];
    const t = createTauriTransport({
      invoke: async (cmd, args) => {
        seen.push([cmd, args]);
        return { projects: [project] };
      },
      makeChannel: () => ({ onmessage: () => undefined }),
    });
    const client = new ApiClient(t);
    const res = await client.call("project.list", { includeArchived: true });
    expect(res.projects[0].title).toBe("春季上新");
    expect(seen).toEqual([["api_call", { method: "project.list", params: { includeArchived: true } }]]);
  });

  it("passes the ApiError rejection through and wraps anything else as INTERNAL", async () => {
    const apiErr = { code: "NOT_FOUND", message: "no such project", hints: [{ id: "h", message: "m" }] };
    const t1 = createTauriTransport({ invoke: () => Promise.reject(apiErr), makeChannel: () => ({ onmessage: () => undefined }) });
    expect(await rejection(new ApiClient(t1).call("project.list", {}))).toEqual(apiErr);
    const t2 = createTauriTransport({
      invoke: () => Promise.reject("command api_call not found"),
      makeChannel: () => ({ onmessage: () => undefined }),
    });
    const e2 = await rejection(new ApiClient(t2).call("project.list", {}));
    expect(e2).toEqual({ code: "INTERNAL", message: "command api_call not found", hints: [] });
  });

  it("streams progress over a channel and resolves with the final result", async () => {
    let args: Record<string, unknown> | undefined;
    const channel = { onmessage: (_m: unknown) => undefined as void };
    const t = createTauriTransport({
      invoke: async (cmd, a) => {
        expect(cmd).toBe("api_stream");
        args = a;
        const ch = a?.onEvent as typeof channel;
        ch.onmessage({ type: "progress", data: { n: 1 } });
        ch.onmessage({ type: "other", data: "ignored" });
        ch.onmessage({ type: "progress", data: { n: 2 } });
        return exported;
      },
      makeChannel: () => channel,
    });
    const progress: unknown[] = [];
    const res = await new ApiClient(t).stream("export.run", { path: "/tmp/out" }, (d) => progress.push(d));
    expect(res).toEqual(exported);
    expect(progress).toEqual([{ n: 1 }, { n: 2 }]);
    expect(args?.method).toBe("export.run");
    expect(args?.params).toEqual({ path: "/tmp/out" });
    expect(args?.onEvent).toBe(channel);
  });

  it("hands a session's harness events to the caller, in order", async () => {
    const t = createTauriTransport({
      invoke: async (_cmd, a) => {
        const ch = a?.onEvent as { onmessage: (m: unknown) => void };
        for (const event of harnessEvents) ch.onmessage({ type: "harness", data: event });
        return submitted;
      },
      makeChannel: () => ({ onmessage: () => undefined }),
    });
    const seen: HarnessEvent[] = [];
    const res = await new ApiClient(t).stream("session.submit", { sessionId: "ses_1", text: "改短一点" }, (e) => seen.push(e));
    expect(res).toEqual(submitted);
    expect(seen).toEqual(harnessEvents);
  });

  it("asks a turn for the timeline's patches and hands on those alone", async () => {
    let asked: unknown = null;
    const patch: TimelinePatch = { sequence: 0, items: [], removed: [], append: { key: "4", text: "春", reasoning: false }, state: null };
    const t = createTauriTransport({
      invoke: async (_cmd, a) => {
        asked = a?.params;
        const ch = a?.onEvent as { onmessage: (m: unknown) => void };
        ch.onmessage({ type: "timeline", data: patch });
        // An event of another type (a backend that sends both) is not handed on.
        ch.onmessage({ type: "harness", data: harnessEvents[0] });
        return submitted;
      },
      makeChannel: () => ({ onmessage: () => undefined }),
    });
    const seen: TimelinePatch[] = [];
    const res = await new ApiClient(t).streamTimeline("session.submit", { sessionId: "ses_1", text: "改短一点" }, (p) => seen.push(p));
    expect(res).toEqual(submitted);
    expect(asked).toEqual({ sessionId: "ses_1", text: "改短一点", timeline: true });
    expect(seen).toEqual([patch]);
  });
});
