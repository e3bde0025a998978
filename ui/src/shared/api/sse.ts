// Server-sent events, read from a fetch body (the browser's own SSE client cannot send a
// bearer token): the parser, and the reader that turns `inkstone-cli serve`'s event
// stream into StreamEvents and a result.

import { abortError, type ClientError, internalError, offlineError, toClientError } from "./errors";
import type { StreamEvent } from "./generated";

export interface SseEvent {
  event: string;
  data: string;
}

/** Incremental SSE parser: feed decoded text in arbitrary pieces. */
export class SseParser {
  private buffer = "";
  private eventType = "";
  private dataLines: string[] = [];
  private hasData = false;

  /** Feeds text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      if (ch === "\r") {
        // A lone '\r' at the very end may be the first half of "\r\n": wait for more.
        if (i + 1 === this.buffer.length) break;
      }
      const line = this.buffer.slice(start, i);
      if (ch === "\r" && this.buffer[i + 1] === "\n") i++;
      start = i + 1;
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** Ends the input; an event lacking its final blank line is still delivered. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer !== "") {
      const rest = this.buffer.replace(/\r$/, "");
      this.buffer = "";
      const ev = this.line(rest);
      if (ev) out.push(ev);
    }
    const ev = this.line("");
    if (ev) out.push(ev);
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === "") {
      if (!this.hasData) {
        this.eventType = "";
        return null;
      }
      const ev = { event: this.eventType || "message", data: this.dataLines.join("\n") };
      this.eventType = "";
      this.dataLines = [];
      this.hasData = false;
      return ev;
    }
    if (line.startsWith(":")) return null; // comment / keep-alive
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.eventType = value;
    else if (field === "data") {
      this.dataLines.push(value);
      this.hasData = true;
    }
    // "id", "retry" and unknown fields are ignored.
    return null;
  }
}

export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: StreamEvent) => void,
  signal?: AbortSignal,
): Promise<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  const parser = new SseParser();

  type Outcome = { done: true; value: unknown } | { done: true; error: ClientError } | { done: false };
  const handle = (events: SseEvent[]): Outcome => {
    for (const ev of events) {
      let data: unknown;
      try {
        data = ev.data === "" ? null : JSON.parse(ev.data);
      } catch {
        return { done: true, error: internalError("The backend sent a stream event that is not valid JSON.") };
      }
      if (ev.event === "result") return { done: true, value: data };
      if (ev.event === "error") return { done: true, error: toClientError(data) };
      // serve names every other event by its StreamEvent type (`progress`, `harness`)
      // and sends the payload as data; rebuild the StreamEvent the Tauri channel carries.
      // An unnamed event ("message") is not one serve sends.
      if (ev.event !== "message") onEvent({ type: ev.event, data } as StreamEvent);
    }
    return { done: false };
  };

  const finish = async (o: Outcome): Promise<unknown> => {
    reader.cancel().catch(() => undefined);
    if ("error" in o) throw o.error;
    if ("value" in o) return o.value;
    return undefined;
  };

  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (e) {
      if (signal?.aborted) throw abortError();
      throw offlineError(e);
    }
    if (chunk.done) {
      const o = handle([...parser.push(decoder.decode()), ...parser.end()]);
      if (o.done) return finish(o);
      throw offlineError("The stream ended before a result arrived.");
    }
    const o = handle(parser.push(decoder.decode(chunk.value, { stream: true })));
    if (o.done) return finish(o);
  }
}
