// The drafting tests describe sessions by their event logs and `serveLog` (testLog.ts)
// answers for them. This holds that test fold to the core's: `__golden__/timeline.json`
// holds representative logs with what the core answers for each (every page of
// `session.timeline` asked, and the patch the live stream sends for each event), written
// and checked by the core's own test (src-tauri/api/tests/it/timeline_golden.rs). A
// change to the core's fold fails that test; a change to testLog.ts that answers
// otherwise fails this one.

import { describe, expect, it } from "vitest";
import type { HarnessEvent, StreamEvent } from "../../shared/api/client";
import { ApiClient, isClientError } from "../../shared/api/client";
import { FakeTransport } from "../../shared/api/fake";
import type { ErrorCode, SessionTimelineResult, TimelinePatch } from "../../shared/api/generated";
import golden from "./__golden__/timeline.json";
import { serveLog } from "./testLog";

interface Page {
  request: { since?: number; before?: string; limit?: number };
  result?: SessionTimelineResult;
  error?: { code: ErrorCode; message: string };
}

interface Case {
  name: string;
  about: string;
  events: HarnessEvent[];
  pages: Page[];
  patches: (TimelinePatch | null)[];
}

const cases = (golden as unknown as { cases: Case[] }).cases;

/** The logged events of a case: what the engine stores and `session.timeline` folds. */
const logged = (c: Case) => c.events.filter((e) => e.sequence > 0);

/** What `serveLog` answers a page request with (the answer, or the error's code and message). */
async function pageOf(c: Case, request: Page["request"]): Promise<Omit<Page, "request">> {
  const client = new ApiClient(serveLog(new FakeTransport(), logged(c)));
  try {
    return { result: await client.call("session.timeline", { sessionId: "ses_golden", ...request }) };
  } catch (error) {
    if (!isClientError(error)) throw error;
    return { error: { code: error.code, message: error.message } };
  }
}

/** The patch `serveLog` sends for each event of the case, streamed in order (null: none). */
async function patchesOf(c: Case): Promise<(TimelinePatch | null)[]> {
  const transport = serveLog(new FakeTransport(), []);
  const sent: (TimelinePatch | null)[] = [];
  let current: TimelinePatch[] = [];
  transport.on("session.submit", (_params, emit) => {
    for (const event of c.events) {
      current = [];
      emit(event);
      expect(current.length, `one event makes at most one patch (event ${event.sequence} ${event.kind})`).toBeLessThanOrEqual(1);
      sent.push(current[0] ?? null);
    }
    return { status: "completed" } as never;
  });
  await transport.stream("session.submit", { sessionId: "ses_golden", text: "", timeline: true }, (event: StreamEvent) => {
    if (event.type === "timeline") current.push(event.data);
  });
  return sent;
}

describe("the drafting tests' fold (testLog.ts) answers as the core's fold does", () => {
  it("has the core's golden cases", () => {
    expect(cases.length).toBeGreaterThan(10);
  });

  for (const c of cases) {
    describe(c.name, () => {
      it("pages session.timeline as the core does", async () => {
        for (const page of c.pages) {
          const { request, ...expected } = page;
          expect(await pageOf(c, request), `${c.name}: ${JSON.stringify(request)}`).toEqual(expected);
        }
      });

      it("sends the core's patch for each streamed event", async () => {
        const got = await patchesOf(c);
        c.patches.forEach((patch, at) => {
          const event = c.events[at];
          expect(got[at], `${c.name}: event ${at} (sequence ${event.sequence}, ${event.kind})`).toEqual(patch);
        });
      });
    });
  }
});
