"""What the scripted model says: turns, generic tool actions and the usage to report.

A Script is an ordered list of turns; the last one is a plain answer. Files use the same shape
(TOML or JSON), validated by these models:

    side_reply = { text = "Scripted title" }      # optional; answers title and other side requests

    [[turns]]
    text = "Creating the file."
    usage = { input = 100, cache_read = 30, cache_write = 20, output = 50, reasoning = 7 }
    model = "other-model"                         # optional; reported instead of the requested
    actions = [
      { kind = "write_file", path = "hello.txt", content = "hello\\n" },
      { kind = "edit_file", path = "app.py", old = "x = 1", new = "x = 2" },
      { kind = "shell", command = "ls" },
      { kind = "raw", name = "TodoWrite", arguments = { todos = [] } },
    ]

    [[turns]]
    text = "Done."
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError, model_validator

from harnessdrive.errors import UserError


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Usage(_Frozen):
    """Token counts for one model call, in tiers that never overlap.

    `input` is fresh input (neither read from nor written to a cache), `output` is visible
    output without reasoning. `cache_write_1h` is the part of `cache_write` written with a
    one-hour lifetime (only the Anthropic protocol reports it apart). Each protocol encoder
    folds these into its own fields.
    """

    input: NonNegativeInt = 0
    cache_read: NonNegativeInt = 0
    cache_write: NonNegativeInt = 0
    cache_write_1h: NonNegativeInt = 0
    output: NonNegativeInt = 0
    reasoning: NonNegativeInt = 0

    @model_validator(mode="after")
    def _one_hour_part_of_cache_write(self) -> Usage:
        if self.cache_write_1h > self.cache_write:
            raise ValueError("cache_write_1h is a part of cache_write and cannot exceed it")
        return self

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input=self.input + other.input,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            cache_write_1h=self.cache_write_1h + other.cache_write_1h,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
        )

    @property
    def prompt_total(self) -> int:
        """Everything the model read: fresh input plus cache reads and writes."""
        return self.input + self.cache_read + self.cache_write

    @property
    def completion_total(self) -> int:
        """Everything the model wrote: visible output plus reasoning."""
        return self.output + self.reasoning


class WriteFile(_Frozen):
    """Create or overwrite a file; `path` is relative to the workspace (or absolute)."""

    kind: Literal["write_file"] = "write_file"
    path: str = Field(min_length=1)
    content: str


class EditFile(_Frozen):
    """Replace the one occurrence of `old` with `new` in an existing file."""

    kind: Literal["edit_file"] = "edit_file"
    path: str = Field(min_length=1)
    old: str = Field(min_length=1)
    new: str


class Shell(_Frozen):
    """Run a shell command in the workspace."""

    kind: Literal["shell"] = "shell"
    command: str = Field(min_length=1)


class RawToolCall(_Frozen):
    """Call a tool by its own name with these arguments, verbatim."""

    kind: Literal["raw"] = "raw"
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


Action = Annotated[WriteFile | EditFile | Shell | RawToolCall, Field(discriminator="kind")]


class Turn(_Frozen):
    """One model reply: optional text, then tool actions, with the usage reported for it.

    `model` is the model id the reply names as the one that answered; left out, it is the
    model the request asked for. A turn can so stand in for a call a router or a fallback
    answered with another model.
    """

    text: str | None = None
    actions: tuple[Action, ...] = ()
    usage: Usage = Usage()
    model: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _says_something(self) -> Turn:
        if not self.text and not self.actions:
            raise ValueError("a turn needs text, actions, or both")
        return self


class SideReply(_Frozen):
    """The answer to requests that are not part of the scripted conversation (titles and such)."""

    text: str = "Scripted session"
    usage: Usage = Usage()
    model: str | None = Field(default=None, min_length=1)
    """The model id the reply names; left out, the one the request asked for."""


class Script(_Frozen):
    """An ordered list of turns; turn N answers a request that already holds N model replies."""

    turns: tuple[Turn, ...] = Field(min_length=1)
    side_reply: SideReply = SideReply()
    overrun_text: str = "The script has no more turns."
    refusals: tuple[Annotated[int, Field(ge=400, le=599)], ...] = ()
    """Statuses the first model requests are answered with, one each, before any turn is
    played: ``[429, 529]`` refuses two requests for load, as a busy provider does."""

    @model_validator(mode="after")
    def _ends_with_answer(self) -> Script:
        if self.turns[-1].actions:
            raise ValueError("the last turn must be a plain answer without actions")
        return self


def load_script(path: str | Path) -> Script:
    """Read a Script from a `.toml` or `.json` file; bad files raise UserError."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(f"cannot read script {file}: {error.strerror}") from error
    try:
        if file.suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif file.suffix == ".json":
            data = json.loads(text)
        else:
            raise UserError(f"script {file} must end in .toml or .json")
        return Script.model_validate(data)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"script {file} is not valid {file.suffix[1:].upper()}: {error}") from error
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or 'script'}: {issue['msg']}"
            for issue in error.errors()
        )
        raise UserError(f"script {file} does not validate: {problems}") from error
