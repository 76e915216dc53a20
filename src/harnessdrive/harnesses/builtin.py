"""harnessdrive's own harnesses, registered through the same hook as any plugin's."""

from __future__ import annotations

from harnessdrive.harnesses.aider import Aider
from harnessdrive.harnesses.claude import ClaudeCode
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.codex import Codex
from harnessdrive.harnesses.command import CommandHarness, CommandOptions
from harnessdrive.harnesses.cursor import CursorCli
from harnessdrive.harnesses.entry import HarnessEntry
from harnessdrive.harnesses.gemini import GeminiCli
from harnessdrive.harnesses.goose import Goose
from harnessdrive.harnesses.ladder import EffortLadder
from harnessdrive.harnesses.mini_swe_agent import MiniSweAgent
from harnessdrive.harnesses.opencode import OpenCode
from harnessdrive.harnesses.pi import Pi
from harnessdrive.harnesses.qwen import QwenCode
from harnessdrive.harnesses.scripted import SCRIPTED_AGENTS
from harnessdrive.plugins.hookspecs import hookimpl

_CLIS: tuple[type[AgentCli], ...] = (
    ClaudeCode,
    Codex,
    GeminiCli,
    OpenCode,
    Pi,
    QwenCode,
    Aider,
    MiniSweAgent,
    CursorCli,
    Goose,
)


@hookimpl
def harnessdrive_harnesses() -> list[HarnessEntry]:
    entries = [HarnessEntry(agent.name, agent) for agent in SCRIPTED_AGENTS]
    entries.append(HarnessEntry("command", CommandHarness, CommandOptions))
    entries += [
        HarnessEntry(
            cli.name,
            cli,
            cli.options_model,
            efforts=EffortLadder(cli.efforts),
            instruction_files=cli.instruction_files,
        )
        for cli in _CLIS
    ]
    return entries
