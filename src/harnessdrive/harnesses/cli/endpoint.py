"""Pointing an agent CLI at another model server: a local model, a gateway, the scripted server.

A variant names the server in its ``endpoint`` option::

    [[variants]]
    harness = "codex"
    model = "qwen3-coder"
    options = { endpoint = { openai = "http://127.0.0.1:8000/v1", api_key_env = "LOCAL_KEY" } }

Each CLI speaks one wire protocol (Claude Code the Anthropic Messages API, Gemini CLI the Gemini
API, the others OpenAI's), so an endpoint gives a base URL per protocol and each adapter takes the
one it speaks, writing it into the CLI's private config (a custom provider, a base-URL variable).
``{task}`` in a URL is replaced by the task id, so one server can tell the tasks of a run apart.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError, field_validator

from harnessdrive.errors import UserError

Protocol = Literal["anthropic", "openai", "gemini"]
DEFAULT_PROVIDER = "local"
_PLACEHOLDER_KEY = "harnessdrive-local"


class EndpointSpec(BaseModel):
    """The ``endpoint`` variant option, as written in suite.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    anthropic: str | None = None
    """Base URL for the Anthropic Messages API, without ``/v1`` (Claude Code)."""
    openai: str | None = None
    """Base URL for the OpenAI APIs, ending in ``/v1`` (Codex, opencode, pi, Qwen, aider, mini)."""
    gemini: str | None = None
    """Base URL for the Gemini API, without ``/v1beta`` (Gemini CLI)."""
    api_key: str | None = None
    """The key itself (for local servers that want any non-empty key)."""
    api_key_env: str | None = None
    """A variable of your environment holding the key; read when the trial runs."""
    provider: str = Field(default=DEFAULT_PROVIDER, min_length=1)
    """Who bills the model, recorded on every model call (and used to price it)."""
    max_retries: NonNegativeInt | None = None
    """Retries of a failed model request, where the CLI lets us set them."""

    @field_validator("anthropic", "openai", "gemini")
    @classmethod
    def _http(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError(f"must be an http(s) URL, not {url!r}")
        return url


@dataclass(frozen=True)
class Endpoint:
    """The endpoint one trial uses, with ``{task}`` filled in and the key read."""

    url: str
    api_key: str
    provider: str
    max_retries: int | None


def parse_endpoint(raw: Any, label: str) -> EndpointSpec:
    """Validate the ``endpoint`` option; bad input is a one-line UserError."""
    if not isinstance(raw, Mapping):
        raise UserError(f"variant {label}: 'endpoint' must be a table of base URLs")
    try:
        spec = EndpointSpec.model_validate(dict(raw))
    except ValidationError as exc:
        detail = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'endpoint'}: "
            f"{str(err['msg']).removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        raise UserError(f"variant {label}: bad 'endpoint': {detail}") from None
    return spec


def require(spec: EndpointSpec, protocol: Protocol, harness: str, label: str) -> str:
    """The URL for the protocol this CLI speaks; a UserError names what is missing."""
    url: str | None = getattr(spec, protocol)
    if url is None:
        raise UserError(
            f"variant {label}: {harness} speaks the {_PROTOCOL_NAMES[protocol]}; "
            f"give endpoint.{protocol}"
        )
    return url


def resolve(
    spec: EndpointSpec,
    protocol: Protocol,
    task_id: str,
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """The endpoint for one trial. A named key variable that is unset is a UserError."""
    source = os.environ if environ is None else environ
    url = getattr(spec, protocol)
    assert url is not None  # check_variant has required it
    if spec.api_key_env:
        key = source.get(spec.api_key_env)
        if not key:
            raise UserError(f"endpoint.api_key_env names {spec.api_key_env}, which is not set")
    else:
        key = spec.api_key or _PLACEHOLDER_KEY
    return Endpoint(
        url=url.replace("{task}", task_id).rstrip("/"),
        api_key=key,
        provider=spec.provider,
        max_retries=spec.max_retries,
    )


_PROTOCOL_NAMES: dict[Protocol, str] = {
    "anthropic": "Anthropic Messages API",
    "openai": "OpenAI API",
    "gemini": "Gemini API",
}
