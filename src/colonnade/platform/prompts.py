"""Prompts that help an agent or a person use the gateway (`prompts/list`, `prompts/get`).

Each renders its arguments into messages; none reads data a caller might not see: the `llm` block's
fields come from the contract model, an error code's words from the one error registry.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from colonnade.calls.call_errors import REGISTRY
from colonnade.contracts.model import LlmBlock
from colonnade.platform.refusal import PlatformRefusal

__all__ = ["PLATFORM_PROMPTS", "PlatformPrompt", "PromptArgument", "find_prompt"]


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class PlatformPrompt:
    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]
    render: Callable[[Mapping[str, str]], str]

    def text(self, arguments: Mapping[str, str]) -> str:
        missing = [a.name for a in self.arguments if a.required and not arguments.get(a.name)]
        unknown = sorted(set(arguments) - {a.name for a in self.arguments})
        if missing or unknown:
            wanted = ", ".join(f"{a.name}{'*' if a.required else ''}" for a in self.arguments)
            problem = f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
            raise PlatformRefusal("I-REQ-SCHEMA", f"prompt {self.name}: {problem} (arguments: {wanted})")
        return self.render(arguments)


def _llm_block(arguments: Mapping[str, str]) -> str:
    fields = "\n".join(f"- {name}: {info.description}" for name, info in LlmBlock.model_fields.items())
    summary = arguments.get("summary")
    return (
        f"Write the `llm` block of the UAC contract endpoint `{arguments['endpoint']}`"
        + (f" (it {summary})" if summary else "")
        + ".\n\nThe block has exactly these fields:\n"
        + fields
        + "\n\nRules: side_effects is what one call does to the world (a DELETE is destructive; a POST "
        "or PUT writes); destructive operations set requires_human_approval: true and are gated for "
        "approval; safe_for_agents is false for anything an autonomous agent must not call unattended; "
        "examples use synthetic data only, never real customers or secrets. Answer with the YAML of the "
        "block only, then run `colonnade contract validate` (or the tool colonnade__validate_contract) "
        "on the contract."
    )


def _explain_error(arguments: Mapping[str, str]) -> str:
    code = arguments["code"].strip()
    spec = REGISTRY.get(code)
    if spec is None:
        near = difflib.get_close_matches(code, list(REGISTRY), n=3)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        raise PlatformRefusal("I-REQ-SCHEMA", f"no error code {code!r} in the registry{hint}")
    context = arguments.get("message")
    return (
        f"A call through the Colonnade gateway failed with {code} ({spec.status.value}): {spec.title}.\n"
        + (f"Its message was: {context}\n" if context else "")
        + f"The registry's fix: {spec.fix}\n\n"
        "Explain to the user in two or three sentences what went wrong and what to do next. "
        + (
            "The status says it may succeed if retried later, with the same idempotency key."
            if spec.status.value == "retryable_error"
            else "Do not retry the same call unchanged: it would fail the same way."
        )
    )


def _approval_request(arguments: Mapping[str, str]) -> str:
    tool, why = arguments["tool"], arguments.get("reason")
    given = arguments.get("arguments")
    return (
        f"Prepare a request for a human approver of the call of `{tool}`"
        + (f" with the arguments {given}" if given else "")
        + ".\n"
        + (f"The reason for the call: {why}\n" if why else "")
        + "\nWrite, in at most five lines: what the call will do and to what, why it is needed now, what "
        "happens if it is not approved, and how to undo it if that is possible. Then make the call: the "
        "gateway answers `pending` with an approval id; give the approver that id and this text (they "
        "approve with `colonnade approvals approve <id>` or POST /v1/approvals/<id>/approve); call again "
        'with the approval token (MCP _meta["colonnade/approval_token"]) once it is approved.'
    )


PLATFORM_PROMPTS: tuple[PlatformPrompt, ...] = (
    PlatformPrompt(
        "write_llm_block",
        "Write an llm block",
        "Draft the `llm` block of a contract endpoint: summary, intent, tool name, side effects, approval.",
        (
            PromptArgument("endpoint", "the endpoint, e.g. POST /invoices/{id}/void", required=True),
            PromptArgument("summary", "what the endpoint does, in plain words"),
        ),
        _llm_block,
    ),
    PlatformPrompt(
        "explain_error",
        "Explain an error code",
        "Explain a Colonnade error code (e.g. A-AUTH-SUBSCRIPTION-REQUIRED) and what to do next.",
        (
            PromptArgument("code", "the error.code of the failed call", required=True),
            PromptArgument("message", "the error.message, for context"),
        ),
        _explain_error,
    ),
    PlatformPrompt(
        "prepare_approval_request",
        "Prepare an approval request",
        "Write what a human approver needs to decide on a call that waits for approval.",
        (
            PromptArgument("tool", "the tool to call (its name)", required=True),
            PromptArgument("arguments", "the call's arguments, as JSON"),
            PromptArgument("reason", "why the call is needed"),
        ),
        _approval_request,
    ),
)


def find_prompt(name: str) -> PlatformPrompt:
    for prompt in PLATFORM_PROMPTS:
        if prompt.name == name:
            return prompt
    names = ", ".join(prompt.name for prompt in PLATFORM_PROMPTS)
    raise PlatformRefusal("I-REQ-SCHEMA", f"no prompt named {name!r} (prompts: {names})")
