"""Render generic actions as tool calls in the vocabulary the client offered.

The client's tool list decides: a write tool (`Write`, `write_file`, `write`), an edit tool
(`Edit`, `replace`, `edit`), `apply_patch`, or a shell tool (`Bash`, `run_shell_command`, `bash`,
`exec_command`, `shell`). Argument names come from each tool's JSON schema (`file_path`,
`filePath` or `path`; `old_string`, `oldString`, or pi's `edits[{oldText, newText}]`), and any
other required argument gets a neutral filler. Without a file tool, writes and edits go
through the shell tool.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeGuard

from harnessdrive.testing.model_server.conversation import ModelRequest, ToolCall, ToolSpec
from harnessdrive.testing.model_server.patches import add_file_patch, update_file_patch
from harnessdrive.testing.model_server.script import Action, EditFile, RawToolCall, Shell, WriteFile

WRITE_TOOLS = ("Write", "write_file", "write", "create_file")
EDIT_TOOLS = ("Edit", "replace", "edit", "str_replace", "edit_file")
SHELL_TOOLS = ("Bash", "run_shell_command", "bash", "exec_command", "shell_command", "shell")
READ_TOOLS = ("Read", "read_file", "read")
PATCH_TOOL = "apply_patch"

_PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "filename")
_CONTENT_KEYS = ("content", "contents", "file_text", "text")
_OLD_KEYS = ("old_string", "oldString", "oldText", "old_str", "old_text", "old")
_NEW_KEYS = ("new_string", "newString", "newText", "new_str", "new_text", "new")
_COMMAND_KEYS = ("command", "cmd")

# mini-swe-agent ends a run only when the model runs this exact command.
MINI_SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


class RenderError(ValueError):
    """The client offers no tool that can carry out a scripted action."""


def render_actions(
    actions: Sequence[Action],
    request: ModelRequest,
    workdir: Path | None,
    ids: Callable[[int], str],
) -> tuple[ToolCall, ...]:
    """Tool calls for the actions; `ids(k)` names the k-th call of the turn."""
    calls: list[ToolCall] = []
    for action in actions:
        if _needs_read_first(action, workdir):
            read = _read_call(action.path, request, workdir)
            if read is not None:
                calls.append(read)
        calls.append(_render(action, request, workdir, ""))
    return tuple(replace(call, id=ids(k)) for k, call in enumerate(calls))


def _needs_read_first(action: Action, workdir: Path | None) -> TypeGuard[WriteFile | EditFile]:
    # Claude Code, opencode and Qwen Code refuse to change a file the model has not read.
    if isinstance(action, EditFile):
        return True
    return isinstance(action, WriteFile) and read_in_workdir(action.path, workdir) is not None


def _read_call(path: str, request: ModelRequest, workdir: Path | None) -> ToolCall | None:
    tool = _first(request, READ_TOOLS)
    key = _key(tool, _PATH_KEYS) if tool is not None else None
    if tool is None or key is None:
        return None
    return ToolCall("", tool.name, _fill_required(tool, {key: _resolve(path, workdir)}))


def submit_call(request: ModelRequest, call_id: str) -> ToolCall | None:
    """The tool call that ends the run, for clients that end only through a command."""
    if MINI_SUBMIT_MARKER not in request.prompt_text:
        return None
    shell = _first(request, SHELL_TOOLS)
    if shell is None:
        return None
    return _shell_call(shell, f"echo {MINI_SUBMIT_MARKER}", call_id)


def _render(action: Action, request: ModelRequest, workdir: Path | None, call_id: str) -> ToolCall:
    if isinstance(action, RawToolCall):
        spec = request.tool(action.name)
        if spec is not None and spec.kind == "custom":
            return ToolCall(call_id, action.name, text_input=str(action.arguments.get("input", "")))
        return ToolCall(call_id, action.name, dict(action.arguments))
    if isinstance(action, Shell):
        shell = _first(request, SHELL_TOOLS)
        if shell is None:
            raise RenderError(f"no shell tool among {_names(request)}")
        return _shell_call(shell, action.command, call_id)
    if isinstance(action, WriteFile):
        return _write_call(action, request, workdir, call_id)
    return _edit_call(action, request, workdir, call_id)


def _write_call(
    action: WriteFile, request: ModelRequest, workdir: Path | None, call_id: str
) -> ToolCall:
    tool = _first(request, WRITE_TOOLS)
    if tool is not None:
        path_key, content_key = _key(tool, _PATH_KEYS), _key(tool, _CONTENT_KEYS)
        if path_key and content_key:
            arguments = {path_key: _resolve(action.path, workdir), content_key: action.content}
            return ToolCall(call_id, tool.name, _fill_required(tool, arguments))
    patch = request.tool(PATCH_TOOL)
    if patch is not None:
        existing = read_in_workdir(action.path, workdir)
        if existing is None:
            text = add_file_patch(action.path, action.content)
        else:
            text = update_file_patch(action.path, existing, existing, action.content)
        return _patch_call(patch, text, call_id)
    shell = _first(request, SHELL_TOOLS)
    if shell is None:
        raise RenderError(f"no tool to write files among {_names(request)}")
    path, content = shlex.quote(action.path), shlex.quote(action.content)
    command = f"mkdir -p -- \"$(dirname -- {path})\" && printf '%s' {content} > {path}"
    return _shell_call(shell, command, call_id)


def _edit_call(
    action: EditFile, request: ModelRequest, workdir: Path | None, call_id: str
) -> ToolCall:
    tool = _first(request, EDIT_TOOLS)
    if tool is not None:
        arguments = _edit_arguments(tool, _resolve(action.path, workdir), action.old, action.new)
        if arguments is not None:
            return ToolCall(call_id, tool.name, _fill_required(tool, arguments))
    patch = request.tool(PATCH_TOOL)
    existing = read_in_workdir(action.path, workdir)
    if patch is not None and existing is not None:
        return _patch_call(
            patch, update_file_patch(action.path, existing, action.old, action.new), call_id
        )
    shell = _first(request, SHELL_TOOLS)
    if shell is None:
        raise RenderError(f"no tool to edit files among {_names(request)}")
    program = (
        "import pathlib,sys; p=pathlib.Path(sys.argv[1]); s=p.read_text(); o,n=sys.argv[2:4]; "
        "c=s.count(o); c==1 or sys.exit(f'old text found {c} times, expected once'); "
        "p.write_text(s.replace(o,n,1))"
    )
    words = ("python3", "-c", program, action.path, action.old, action.new)
    command = " ".join(shlex.quote(word) for word in words)
    return _shell_call(shell, command, call_id)


def _edit_arguments(tool: ToolSpec, path: str, old: str, new: str) -> dict[str, Any] | None:
    path_key = _key(tool, _PATH_KEYS)
    if path_key is None:
        return None
    old_key, new_key = _key(tool, _OLD_KEYS), _key(tool, _NEW_KEYS)
    if old_key and new_key:
        return {path_key: path, old_key: old, new_key: new}
    # pi: `edits: [{oldText, newText}]`.
    for name, schema in tool.properties.items():
        items = schema.get("items") if isinstance(schema, dict) else None
        if isinstance(items, dict) and schema.get("type") == "array":
            nested = ToolSpec(name, items)
            inner_old, inner_new = _key(nested, _OLD_KEYS), _key(nested, _NEW_KEYS)
            if inner_old and inner_new:
                return {path_key: path, name: [{inner_old: old, inner_new: new}]}
    return None


def _shell_call(tool: ToolSpec, command: str, call_id: str) -> ToolCall:
    key = _key(tool, _COMMAND_KEYS) or "command"
    schema = tool.properties.get(key, {})
    value: Any = command
    if isinstance(schema, dict) and schema.get("type") == "array":
        value = ["bash", "-lc", command]
    return ToolCall(call_id, tool.name, _fill_required(tool, {key: value}))


def _patch_call(tool: ToolSpec, patch: str, call_id: str) -> ToolCall:
    if tool.kind == "custom":
        return ToolCall(call_id, tool.name, text_input=patch)
    key = next(iter(tool.properties), "input")
    return ToolCall(call_id, tool.name, {key: patch})


def _fill_required(tool: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """Give required arguments we have no meaning for a neutral value of the right type."""
    filled = dict(arguments)
    for name in tool.required:
        if name in filled:
            continue
        schema = tool.properties.get(name, {})
        kind = schema.get("type") if isinstance(schema, dict) else None
        defaults: dict[Any, Any] = {"boolean": False, "integer": 0, "number": 0, "array": []}
        filled[name] = defaults.get(kind, {} if kind == "object" else "Scripted change.")
    return filled


def _first(request: ModelRequest, names: Sequence[str]) -> ToolSpec | None:
    for name in names:
        spec = request.tool(name)
        if spec is not None:
            return spec
    return None


def _key(tool: ToolSpec, candidates: Sequence[str]) -> str | None:
    properties = tool.properties
    return next((key for key in candidates if key in properties), None)


def _resolve(path: str, workdir: Path | None) -> str:
    if workdir is None or Path(path).is_absolute():
        return path
    return str(workdir / path)


def read_in_workdir(path: str, workdir: Path | None) -> str | None:
    """The text of a scripted path, read relative to the workdir when there is one."""
    target = Path(path) if Path(path).is_absolute() or workdir is None else workdir / path
    try:
        return target.read_text(encoding="utf-8")
    except OSError:
        return None


def _names(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]
