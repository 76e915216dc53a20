"""A scripted agent that follows its instruction file, for testing treatments.

Load it by dotted path: ``harnessdrive.testing.instructed:InstructedAgent``. It reads
``AGENTS.md`` in its workspace: when that file says ``solve``, it applies the task's reference
solution; otherwise it changes nothing. Its transcript lists every top-level file it found, so
a test can see which of a treatment's files reached it.
"""

from __future__ import annotations

from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.options import NoOptions, parse_options
from harnessdrive.sandbox.clock import now
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, Transcript
from harnessdrive.workspace.solution import apply_solution

INSTRUCTIONS = "AGENTS.md"


class InstructedAgent:
    """Applies the reference solution only when its AGENTS.md says ``solve``."""

    name = "instructed"
    instruction_files = (INSTRUCTIONS,)
    runs_foreign_code = False

    def info(self) -> HarnessInfo:
        return HarnessInfo(name=self.name, installed=True, version="scripted")

    def check_variant(self, variant: VariantSpec) -> None:
        parse_options(NoOptions, variant, self.name)

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        found = sorted(p.name for p in request.workspace.iterdir() if p.name != ".git")
        instructions = request.workspace / INSTRUCTIONS
        told = instructions.read_text() if instructions.is_file() else ""
        touched = apply_solution(request.task, request.workspace) if "solve" in told else []
        events = [
            Event(kind="note", text="files", data={"files": found}),
            *(Event(kind="file_change", text=path) for path in touched),
            Event(kind="message", text=f"instructions: {told.strip() or 'none'}"),
        ]
        request.stdout.write_text("followed my instructions\n")
        return AgentRun(
            exit_code=0,
            timed_out=False,
            seconds=now() - started,
            transcript=Transcript(events=tuple(events), final_message=told.strip() or None),
            version="scripted",
        )
