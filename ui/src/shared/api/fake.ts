// A typed in-memory transport for tests. Each method is handled by a function with the
// method's own parameter and result types; unhandled methods reject with NOT_FOUND. A
// streaming method's handler sends its declared events through `emit`, which wraps each
// in the StreamEvent the real transports carry.
//
// A test that handles `sync.status` but not `sync.watch` gets the engine's watch as its
// first moment: the subscription sends what `sync.status` answers, then stays open
// (sending nothing) until the caller aborts it. A test that pushes statuses itself, or
// makes the subscription fail, handles `sync.watch`.

import type {
  ClientError,
  EventOf,
  MethodName,
  ParamsOf,
  ResultOf,
  StreamEvent,
  StreamingMethod,
  StreamOptions,
  Transport,
} from "./client";
import { STREAM_EVENT_TYPES } from "./generated";
import { abortError } from "./errors";

/** What a transport rejects with when its caller aborted (for fakes built on this one). */
export { abortError };

/** What a handler may send: the method's event payload, or nothing for a plain method. */
type EmitOf<M extends MethodName> = M extends StreamingMethod ? EventOf<M> : never;

export type Handlers = {
  [M in MethodName]?: (params: ParamsOf<M>, emit: (event: EmitOf<M>) => void) => ResultOf<M> | Promise<ResultOf<M>>;
};

export interface RecordedCall {
  method: MethodName;
  params: unknown;
}

export class FakeTransport implements Transport {
  readonly kind = "fake";
  readonly calls: RecordedCall[] = [];

  constructor(public handlers: Handlers = {}) {}

  on<M extends MethodName>(method: M, handler: NonNullable<Handlers[M]>): this {
    (this.handlers as Record<string, unknown>)[method] = handler;
    return this;
  }

  callsTo(method: MethodName): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.params);
  }

  async call(method: string, params: unknown): Promise<unknown> {
    return this.run(method, params, () => undefined);
  }

  async stream(
    method: string,
    params: unknown,
    onEvent: (event: StreamEvent) => void,
    options?: StreamOptions,
  ): Promise<unknown> {
    const type = (STREAM_EVENT_TYPES as Record<string, StreamEvent["type"] | undefined>)[method];
    if (method === "sync.watch" && !this.handlers["sync.watch"] && this.handlers["sync.status"]) {
      this.calls.push({ method: "sync.watch", params });
      const status = await (this.handlers["sync.status"] as (p: unknown, emit: () => void) => unknown)({}, () => undefined);
      onEvent({ type: "syncStatus", data: status } as StreamEvent);
      return new Promise((_, reject) => {
        const signal = options?.signal;
        if (signal?.aborted) reject(abortError());
        signal?.addEventListener("abort", () => reject(abortError()), { once: true });
      });
    }
    return this.run(method, params, (data) => {
      if (type === undefined) throw new Error(`${method} declares no stream events`);
      onEvent({ type, data } as StreamEvent);
    });
  }

  private async run(method: string, params: unknown, emit: (data: unknown) => void): Promise<unknown> {
    this.calls.push({ method: method as MethodName, params });
    const handler = (this.handlers as Record<string, ((p: unknown, cb: (d: unknown) => void) => unknown) | undefined>)[
      method
    ];
    if (!handler) {
      const err: ClientError = { code: "NOT_FOUND", message: `No fake handler for ${method}`, hints: [] };
      throw err;
    }
    return await handler(params, emit);
  }
}

/** Builds an ApiError-shaped rejection value for handlers to throw. */
export function apiError(
  code: ClientError["code"],
  message: string,
  hints: ClientError["hints"] = [],
): ClientError {
  return { code, message, hints };
}
