"""What one endpoint accepts, learnt from its refusals and remembered by the judge.

OpenAI-compatible servers differ: llama-cpp-python's server answers ``json_schema``
with HTTP 500, older Ollama and LM Studio builds refuse it with a 400, some reasoning
models refuse ``temperature`` or want ``max_completion_tokens``. Such a refusal is not
transient: sending the same request again only fails again. :func:`refused_parameter`
recognises one from the server's message, and :meth:`Capabilities.degrade` steps that
part of the request down once, for every later request of the same judge:

* ``response_format``: ``json_schema`` -> ``json_object`` with the schema written into
  the prompt (once: an endpoint refusing that too fails as before);
* ``temperature`` and ``seed``: dropped;
* ``max_tokens``: renamed ``max_completion_tokens``, then dropped.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

import openai

from aimem.judges.transport import server_message

__all__ = ["Capabilities", "refused_parameter"]

log = logging.getLogger("aimem")

Parameter = Literal["response_format", "temperature", "seed", "max_tokens"]
#: The words a refusal names, for each parameter the judge can step down.
_NAMES: tuple[tuple[Parameter, re.Pattern[str]], ...] = (
    ("response_format", re.compile(r"response_format|json_schema|json_object|structured", re.I)),
    ("max_tokens", re.compile(r"max_tokens|max_completion_tokens", re.I)),
    ("temperature", re.compile(r"\btemperature\b", re.I)),
    ("seed", re.compile(r"\bseed\b", re.I)),
)
#: Statuses that mean "not this request" rather than "not you" (401/403), "not here"
#: (404) or "not now" (408/409/429).
_REFUSAL_STATUSES = frozenset({400, 422, 500, 501})


def refused_parameter(exc: BaseException) -> Parameter | None:
    """The request parameter an endpoint's error names as unsupported, or None."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in _REFUSAL_STATUSES:
        return None
    message = server_message(exc)
    for parameter, pattern in _NAMES:
        if pattern.search(message):
            return parameter
    return None


@dataclass
class Capabilities:
    """How this judge shapes its requests; starts at the full OpenAI feature set."""

    response_format: Literal["json_schema", "json_object"] = "json_schema"
    temperature: bool = True
    seed: bool = True
    max_tokens: Literal["max_tokens", "max_completion_tokens", "none"] = "max_tokens"
    #: Bumped by every step down: a refusal of a request built before the last step is
    #: stale (another request already stepped down), so the request is just sent again.
    generation: int = 0

    def degrade(self, parameter: Parameter, endpoint: str) -> bool:
        """Step ``parameter`` down once; False when it is already as low as it goes."""
        before = self.describe(parameter)
        if parameter == "response_format":
            if self.response_format != "json_schema":
                return False
            self.response_format = "json_object"
        elif parameter == "max_tokens":
            if self.max_tokens == "none":
                return False
            self.max_tokens = "max_completion_tokens" if self.max_tokens == "max_tokens" else "none"
        elif parameter == "temperature":
            if not self.temperature:
                return False
            self.temperature = False
        else:
            if not self.seed:
                return False
            self.seed = False
        self.generation += 1
        log.info(
            "aimem: %s refused %s; this judge now sends %s",
            endpoint,
            before,
            self.describe(parameter),
        )
        return True

    def describe(self, parameter: Parameter) -> str:
        """The current form of ``parameter``, for the log line."""
        if parameter == "response_format":
            return {
                "json_schema": "response_format json_schema",
                "json_object": "response_format json_object (schema in the prompt)",
            }[self.response_format]
        if parameter == "max_tokens":
            return self.max_tokens if self.max_tokens != "none" else "no reply-length bound"
        sent = self.temperature if parameter == "temperature" else self.seed
        return parameter if sent else f"no {parameter}"

    def request_options(
        self,
        schema_format: dict[str, Any],
        *,
        temperature: float | None,
        seed: int | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` beyond model and messages."""
        options: dict[str, Any] = {}
        options["response_format"] = (
            schema_format if self.response_format == "json_schema" else {"type": "json_object"}
        )
        if temperature is not None and self.temperature:
            options["temperature"] = temperature
        if seed is not None and self.seed:
            options["seed"] = seed
        if max_tokens is not None and self.max_tokens != "none":
            options[self.max_tokens] = max_tokens
        return options

    def schema_note(self, schema_format: dict[str, Any]) -> str | None:
        """The schema as prompt text, when the endpoint cannot be sent it as a format."""
        if self.response_format == "json_schema":
            return None
        schema = schema_format["json_schema"]["schema"]
        return (
            "Reply with only a JSON object (no prose, no code fence) that matches this "
            "JSON schema:\n" + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
        )
