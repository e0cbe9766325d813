// Run by tests/client/test_typescript_client.py against a gateway it starts (COLONNADE_URL and
// COLONNADE_TOKEN), and
// on its own without one (the live tests then skip, saying why).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ColonnadeClient, retryable, type CallResult, type CallStatus } from "../src/index.js";

const STATUSES: CallStatus[] = [
  "success", "success_prep", "pending", "retryable_error", "terminal_error", "invalid_request",
];
const url = process.env.COLONNADE_URL;
const token = process.env.COLONNADE_TOKEN;
const golden = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../tests/surfaces/golden");

test("every golden envelope reads as a CallResult and writes back the same", () => {
  const files = readdirSync(golden).filter((name) => name.endsWith(".json"));
  assert.ok(files.length >= 10, `only ${files.length} golden envelopes`);
  for (const file of files) {
    const recorded = JSON.parse(readFileSync(join(golden, file), "utf8")).result;
    const typed: CallResult = { call_id: "golden", metrics: { duration_ms: 1 }, ...recorded };
    assert.ok(STATUSES.includes(typed.status), `${file}: status ${typed.status}`);
    assert.equal(typed.error === null, ["success", "success_prep", "pending"].includes(typed.status), file);
    assert.deepEqual(JSON.parse(JSON.stringify(typed)), typed, file);
  }
});

test("a live call answers with the backend's record", { skip: url ? false : "COLONNADE_URL is not set" }, async () => {
  const client = new ColonnadeClient(url!, { token });
  const result = await client.call("acme:items:read_item", { item_id: "I-1" });
  assert.equal(result.status, "success", JSON.stringify(result));
  assert.deepEqual(result.output, { id: "I-1", value: "one" });
  assert.equal(result.provenance?.tool_id, "acme:items:read_item");
  assert.equal(retryable(result), false);
});

test("a refusal is an envelope with a stable code", { skip: url ? false : "COLONNADE_URL is not set" }, async () => {
  const client = new ColonnadeClient(url!, { token });
  const result = await client.call("acme:items:no_such_tool", {});
  assert.equal(result.status, "invalid_request");
  assert.equal(result.error?.code, "I-REQ-UNKNOWN-TOOL");
  assert.ok(result.error?.fix);
});
