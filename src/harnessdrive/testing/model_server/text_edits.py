"""Render generic actions as text, for clients that edit from the answer text (aider).

aider's system prompt names its edit format: *SEARCH/REPLACE* blocks (`--edit-format diff`)
or a *file listing* of the whole file (`--edit-format whole`). Both are rendered here. A shell
action becomes a ```bash block in the diff format (aider shows it as a suggestion and, even with
`--yes-always`, does not run it) and a plain sentence in the whole format.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from harnessdrive.testing.model_server.conversation import ModelRequest
from harnessdrive.testing.model_server.script import Action, EditFile, RawToolCall, Shell, WriteFile
from harnessdrive.testing.model_server.tools import RenderError, read_in_workdir

TextFormat = Literal["diff", "whole"]


def detect_text_format(request: ModelRequest) -> TextFormat | None:
    """The edit format a tool-less client asks for, or None for an ordinary side request."""
    if "SEARCH/REPLACE" in request.prompt_text:
        return "diff"
    if "*file listing*" in request.prompt_text:
        return "whole"
    return None


def render_text_actions(
    actions: Sequence[Action], text_format: TextFormat, workdir: Path | None
) -> str:
    blocks = [_render(action, text_format, workdir) for action in actions]
    return "\n\n".join(blocks)


def _render(action: Action, text_format: TextFormat, workdir: Path | None) -> str:
    if isinstance(action, Shell):
        # In the whole format every fenced block is a file listing, so no fence there.
        if text_format == "whole":
            return f"Run this command: `{action.command}`"
        return f"```bash\n{action.command}\n```"
    if isinstance(action, RawToolCall):
        raise RenderError(f"raw tool call {action.name!r} cannot be said in text")
    existing = read_in_workdir(action.path, workdir)
    if text_format == "whole":
        return _listing(action.path, _new_content(action, existing))
    if isinstance(action, WriteFile):
        # An empty SEARCH appends to an existing file, so overwrite by searching all of it.
        return _search_replace(action.path, existing or "", action.content)
    if existing is not None and existing.count(action.old) == 1:
        before, after = _whole_lines(existing, action.old, action.new)
        return _search_replace(action.path, before, after)
    return _search_replace(action.path, action.old, action.new)


def _new_content(action: WriteFile | EditFile, existing: str | None) -> str:
    if isinstance(action, WriteFile):
        return action.content
    if existing is None:
        raise RenderError(f"whole-file format needs {action.path} readable in the workdir")
    return existing.replace(action.old, action.new, 1)


def _whole_lines(existing: str, old: str, new: str) -> tuple[str, str]:
    start_of_old = existing.index(old)
    start = existing.rfind("\n", 0, start_of_old) + 1
    end_of_old = start_of_old + len(old)
    end = existing.find("\n", end_of_old)
    end = len(existing) if end == -1 else end + 1
    before = existing[start:end]
    return before, existing[start:start_of_old] + new + existing[end_of_old:end]


def _fence(*texts: str) -> str:
    return "````" if any("```" in text for text in texts) else "```"


def _search_replace(path: str, search: str, replace: str) -> str:
    fence = _fence(search, replace)
    return (
        f"{path}\n{fence}\n<<<<<<< SEARCH\n{_line_block(search)}=======\n"
        f"{_line_block(replace)}>>>>>>> REPLACE\n{fence}"
    )


def _listing(path: str, content: str) -> str:
    fence = _fence(content)
    return f"{path}\n{fence}\n{_line_block(content)}{fence}"


def _line_block(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
