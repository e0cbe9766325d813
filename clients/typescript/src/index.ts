/**
 * A small client of the Colonnade gateway's REST calls (`POST /v1/calls`), typed with the envelope
 * types generated from the gateway's JSON Schemas (src/generated, never edited by hand).
 *
 * Every answer is an envelope, refusals included: `call` resolves with it whatever the HTTP status,
 * and throws only when the gateway cannot be reached or answers something that is not an envelope.
 */
import type { ColonnadeCallRequest } from "./generated/call-request.js";
import type { CallError, CallStatus, ColonnadeCallResult, Pending } from "./generated/call-result.js";
import type { ColonnadeCallResultEnvelopeVersion1 } from "./generated/call-result-v1.js";

export type { CallError, CallStatus, Pending };
export type CallRequest = ColonnadeCallRequest;
export type CallResult = ColonnadeCallResult;
/** Envelope version 1 (four outcomes), what REST answers a client that does not ask for version 2. */
export type CallResultV1 = ColonnadeCallResultEnvelopeVersion1;

export interface ClientOptions {
  /** A bearer token or API key, when the gateway asks for one. */
  token?: string;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
}

const RETRYABLE: ReadonlySet<CallStatus> = new Set(["retryable_error"]);

export class NotAnEnvelope extends Error {
  constructor(readonly httpStatus: number, body: string) {
    super(`the gateway answered HTTP ${httpStatus} without a call envelope: ${body.slice(0, 200)}`);
  }
}

export class ColonnadeClient {
  private readonly fetcher: typeof fetch;

  constructor(readonly baseUrl: string, private readonly options: ClientOptions = {}) {
    this.fetcher = options.fetch ?? fetch;
  }

  /** One call; `extra` carries the rest of the envelope (tool_version, constraints, context...). */
  async call(
    toolId: string,
    input: Record<string, unknown> = {},
    extra: Partial<Omit<CallRequest, "tool_id" | "input">> = {},
  ): Promise<CallResult> {
    const body: CallRequest = { ...extra, tool_id: toolId, input } as CallRequest;
    // Envelope version 2 (success_prep, pending), the shape CallResult describes.
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "colonnade-envelope-version": "2",
    };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    const response = await this.fetcher(new URL("/v1/calls", this.baseUrl), {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new NotAnEnvelope(response.status, text);
    }
    if (!isEnvelope(parsed)) throw new NotAnEnvelope(response.status, text);
    return parsed;
  }
}

/** Whether the outcome says the same call may be sent again (after `retry_after_ms`, if given). */
export function retryable(result: CallResult): boolean {
  return RETRYABLE.has(result.status);
}

function isEnvelope(value: unknown): value is CallResult {
  if (typeof value !== "object" || value === null) return false;
  const fields = value as Record<string, unknown>;
  return typeof fields.status === "string" && typeof fields.envelope_version === "number";
}
