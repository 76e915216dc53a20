"""The variant options every agent-CLI adapter takes; an adapter's own model extends them."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from harnessdrive.harnesses.cli.endpoint import EndpointSpec
from harnessdrive.harnesses.options import HarnessOptions

Permissions = Literal["least", "full"]


class CliOptions(HarnessOptions):
    """``options`` of a variant of a real agent CLI."""

    expected: ClassVar[dict[str, str]] = {
        "binary": "a path or a command name",
        "permissions": "'least' or 'full'",
        "max_turns": "a whole number above 0",
        "login": "true or false",
        "env": "a list of variable names",
    }

    binary: StrictStr | None = None
    """Path (or command name) of the CLI's executable; default: the pinned install, then PATH."""
    endpoint: EndpointSpec | None = None
    """Another model server: base URLs per wire protocol (docs/harnesses.md)."""
    env: tuple[StrictStr, ...] = ()
    """Names of variables passed through from your environment."""
    max_turns: Annotated[StrictInt, Field(gt=0)] | None = None
    """The CLI's own turn limit, where it has one."""
    permissions: Permissions = "least"
    """``least`` (the adapter's narrow approvals) or ``full`` (the CLI's bypass mode)."""
    login: StrictBool = False
    """Copy the CLI's login file from your HOME into the trial's private HOME."""
