"""Typed harness options: every harness's model refuses unknown and ill-typed options in one line
naming the variant, the adapters read the parsed values, and the models reach the JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from harnessdrive.cli.app import run_cli
from harnessdrive.errors import PluginError, UserError
from harnessdrive.harnesses.aider import AiderOptions
from harnessdrive.harnesses.cli.options import CliOptions
from harnessdrive.harnesses.command import CommandOptions
from harnessdrive.harnesses.options import NoOptions
from harnessdrive.harnesses.registry import available, check_options, get_harness, harness_entry
from harnessdrive.harnesses.scripted import NoopAgent
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.agents import SpenderOptions
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task


class LaxOptions(BaseModel):
    level: int = 0


class LaxHarness(NoopAgent):
    options_model = LaxOptions


def refusal(harness: str, options: dict[str, Any], name: str = "arm") -> str:
    with pytest.raises(UserError) as caught:
        check_options(VariantSpec(harness=harness, name=name, options=options))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"variant {name}: "), message
    return message


def test_every_harness_declares_a_model_that_refuses_unknown_options() -> None:
    for name, entry in available().items():
        assert entry.options.model_config.get("extra") == "forbid", name
        assert "not_an_option" in refusal(name, {"not_an_option": 1}), name


def test_the_models_are_the_ones_each_harness_declares() -> None:
    assert harness_entry("aider").options is AiderOptions
    assert harness_entry("command").options is CommandOptions
    assert harness_entry("noop").options is NoOptions
    for cli in ("claude", "codex", "gemini", "opencode", "pi", "qwen", "goose", "cursor"):
        assert harness_entry(cli).options is CliOptions
    # A harness named by its dotted path brings its model along; one without takes none.
    assert harness_entry("harnessdrive.testing.agents:SpendingAgent").options is SpenderOptions
    assert harness_entry("harnessdrive.harnesses.scripted:NoopAgent").options is NoOptions


@pytest.mark.parametrize(
    ("harness", "options", "said"),
    [
        ("claude", {"max_turns": True}, "'max_turns' must be a whole number above 0"),
        ("claude", {"max_turns": "5"}, "'max_turns' must be a whole number above 0"),
        ("codex", {"login": "yes"}, "'login' must be true or false"),
        ("pi", {"env": "OPENAI_API_KEY"}, "'env' must be a list of variable names"),
        ("qwen", {"binary": 7}, "'binary' must be a path or a command name"),
        ("opencode", {"permissions": "all"}, "'permissions' must be 'least' or 'full'"),
        ("gemini", {"endpoint": {"gemini": "ftp://x"}}, "must be an http(s) URL"),
        ("gemini", {"endpoint": {"gemini": "http://x", "prot": 1}}, "'endpoint.prot'"),
        ("aider", {"files": 3}, '\'files\' must be "none", "all" or a list of paths'),
        ("aider", {"edit_format": "patch"}, "'edit_format' must be one of diff, whole"),
        ("aider", {"auto_test": "yes"}, "'auto_test' must be true or false"),
        ("command", {}, "command needs option 'template'"),
        ("command", {"template": "  "}, "'template' must be a non-empty command line"),
        ("command", {"template": "x", "stdin_prompt": 1}, "'stdin_prompt' must be true or false"),
        ("command", {"template": "x", "set_env": {"A": [1]}}, "'set_env' must be a table"),
        ("claude", {"edit_format": "diff"}, "unknown option(s) for claude: edit_format"),
        ("noop", {"x": 1, "y": 2}, "noop takes no options, got x, y"),
    ],
)
def test_ill_typed_options_are_one_line_naming_the_variant(
    harness: str, options: dict[str, Any], said: str
) -> None:
    assert said in refusal(harness, options)


def test_good_options_parse_to_the_typed_model() -> None:
    parsed = check_options(
        VariantSpec(
            harness="aider",
            options={"files": ["a.py"], "auto_test": True, "env": ["K"], "max_turns": 3},
        )
    )
    assert isinstance(parsed, AiderOptions)
    assert parsed.files == ["a.py"] and parsed.auto_test and parsed.env == ("K",)
    assert parsed.edit_format is None and parsed.permissions == "least"
    command = check_options(VariantSpec(harness="command", options={"template": "t", "env": "K"}))
    assert isinstance(command, CommandOptions) and command.env == "K"


def test_the_adapter_checks_use_the_same_model() -> None:
    with pytest.raises(UserError, match=r"^variant codex: unknown option\(s\) for codex: bianry"):
        get_harness("codex").check_variant(VariantSpec(harness="codex", options={"bianry": "x"}))
    with pytest.raises(UserError, match="command needs option 'template'"):
        get_harness("command").check_variant(VariantSpec(harness="command"))


def test_an_unknown_option_in_a_suite_is_exit_2_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        tmp_path,
        [add_task("t")],
        variants=[{"harness": "aider", "name": "a", "options": {"auto_tset": True}}],
    )
    results = tmp_path / "results"
    assert run_cli(["run", str(suite), "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: variant a: unknown option(s) for aider: auto_tset (did you mean 'auto_test'?) "
        "(known: auto_test, binary, edit_format, endpoint, env, files, login, max_turns, "
        "permissions)"
    ]
    assert not results.exists()


def test_each_harness_options_model_is_in_the_suite_and_result_schemas(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli(["schema", "suite"]) == 0
    schema = json.loads(capsys.readouterr().out)
    definitions = schema["$defs"]
    branches = {
        branch["if"]["properties"]["harness"]["const"]: branch["then"]["properties"]["options"]
        for branch in definitions["VariantSpec"]["allOf"]
    }
    assert set(branches) == set(available())
    assert branches["aider"] == {"$ref": "#/$defs/aider.options"}
    aider = definitions["aider.options"]
    assert aider["additionalProperties"] is False
    assert {"files", "edit_format", "auto_test", "binary", "max_turns"} <= set(aider["properties"])
    assert "whole" in json.dumps(aider["properties"]["edit_format"])
    assert definitions["command.options"]["required"] == ["template"]
    assert definitions["noop.options"].get("properties", {}) == {}
    endpoint_ref = json.dumps(definitions["claude.options"]["properties"]["endpoint"])
    assert "#/$defs/EndpointSpec" in endpoint_ref and "EndpointSpec" in definitions
    assert run_cli(["schema", "result"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert "aider.options" in result["$defs"]


def test_every_option_of_a_built_in_harness_is_in_the_harness_doc() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "harnesses.md").read_text()
    missing = [
        f"{name}: {option}"
        for name, entry in available().items()
        for option in entry.options.model_fields
        if f"`{option}`" not in text
    ]
    assert missing == []


def test_an_options_model_that_lets_unknown_keys_through_is_refused() -> None:
    with pytest.raises(PluginError, match=r"LaxOptions must refuse unknown keys"):
        harness_entry(f"{__name__}:LaxHarness")
