"""The terminal form of ``harnessdrive show``: sections of plain text, nothing interpreted.

What the agent wrote is printed as it is, with control characters made visible, so a hostile
transcript cannot move the cursor or recolour the terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from harnessdrive.report.show import Clipped, TrialView
from harnessdrive.transcript.models import Event

EVENT_TEXT = 600
"""Characters shown of one message, tool input or command output."""
RESULT_LINES = 6
DIFF_LINES = 40
"""Lines shown of one tool result (a file read, an edit's answer); the transcript has them all."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def render_trial(view: TrialView) -> str:
    return "\n".join(_lines(view)) + "\n"


def _lines(view: TrialView) -> Iterator[str]:
    yield f"Trial {view.trial_id}  (attempt {view.attempt})"
    yield f"  {view.variant} on {view.task}, repetition {view.repetition}: {view.outcome}"
    yield f"  status {view.status}; harness {view.harness} {view.harness_version or ''}".rstrip()
    yield (
        "  "
        + ", ".join(
            f"{name} {safe_text(value)}"
            for name, value in (
                ("model", view.model),
                ("effort", view.effort),
                ("treatment", view.treatment),
            )
            if value
        )
        if (view.model or view.effort or view.treatment)
        else "  model not recorded"
    )
    yield f"  {_spent(view)}"
    yield f"  tests: {tests_line(view)}"
    if view.protocol is not None:
        yield f"  protocol {view.protocol}"
    if view.plugins is not None:
        yield "  supplied by " + "; ".join(
            f"{what} {part.name}: {part.distribution or 'no installed distribution'}"
            + (f" {part.version}" if part.version else "")
            for what, part in (
                ("harness", view.plugins.harness),
                ("grader kind", view.plugins.grader_kind),
                ("protocol", view.plugins.protocol),
            )
            if part is not None
        )
    if view.details:
        shown = json.dumps(view.details, sort_keys=True, default=str)
        yield "  grader kind's details: " + safe_text(shown[:EVENT_TEXT])
    if view.rounds > 1 and view.round == 0:
        yield f"  no round of {view.rounds} was kept: the untouched repository counted"
    elif view.rounds > 1:
        yield f"  round {view.round} of {view.rounds} shown (it decided the verdict)"
    if view.reverted:
        yield f"  reverted rounds: {', '.join(str(n) for n in view.reverted)}"
    yield f"  folder {view.folder}"
    if view.review is not None:
        note = f": {view.review.note}" if view.review.note else ""
        yield f"  review: {view.review.decision}{note}"
    yield from _section("Prompt", _clip(view.prompt))
    yield from _section("Transcript", list(_events(view.events)) or ["(no transcript)"])
    yield from _section("Diff", _clip(view.diff) or ["(no change)"])
    failing = []
    for test in view.failing_tests:
        failing.append(f"{test.kind.upper()} {safe_text(test.name)}  [{test.source}]")
        if test.message and not _repeated(test.message, test.output):
            # The assertion once: pytest's output usually repeats the message.
            failing.append(f"  {_short(test.message)}")
        failing += [f"  | {line}" for line in safe_text(test.output).splitlines()[-30:]]
    if view.test_log is not None:
        failing += ["(tail of the deciding test command's log)", *_clip(view.test_log)]
    if failing:
        yield from _section("Failing tests", failing)
    if view.findings:
        yield from _section(
            "Findings",
            [
                f"{f.code} ({f.severity}) {safe_text(str(f.path or ''))} {safe_text(str(f.detail))}"
                for f in view.findings
            ],
        )
    yield from _section("Cost", list(_cost(view)))
    if view.provenance is not None:
        fields = view.provenance.model_dump(exclude_defaults=True)
        yield from _section("Provenance", [f"{k}: {_value(v)}" for k, v in fields.items()])


def _section(title: str, lines: list[str]) -> Iterator[str]:
    yield ""
    yield f"== {title} " + "=" * max(0, 60 - len(title))
    yield from lines


def _events(events: tuple[Event, ...]) -> Iterator[str]:
    for index, event in enumerate(events):
        data = event.data
        if event.kind == "message":
            yield f"[message] {_short(event.text)}"
        elif event.kind == "tool_call":
            shown = data.get("input")
            detail = f" {_short(json.dumps(shown, default=str))}" if shown else ""
            yield f"[tool] {safe_text(event.text)}{detail}"
        elif event.kind == "tool_result":
            output = _text(data.get("output", ""))
            failed = " (error)" if data.get("error") else ""
            yield f"[tool result] {safe_text(event.text) or 'tool'}{failed}"
            lines = safe_text(output).splitlines()
            yield from (f"  | {line[:200]}" for line in lines[:RESULT_LINES])
            if len(lines) > RESULT_LINES:
                yield f"  | [... {len(lines) - RESULT_LINES} more lines]"
        elif event.kind == "command":
            code = data.get("exit_code")
            yield f"[command] $ {_short(event.text)}  -> exit {code if code is not None else '?'}"
            said = _text(data.get("output") or "")
            before = events[index - 1] if index else None
            # The shell call's result just above already showed this output.
            if (
                before is not None
                and before.kind == "tool_result"
                and _text(before.data.get("output", "")).strip() == said.strip()
            ):
                continue
            yield from (f"  | {line}" for line in _short(said).splitlines()[:20])
        elif event.kind == "file_change":
            yield f"[file] {safe_text(event.text)}"
            # Codex logs each change's diff in its session log (its stream has only paths).
            diff = safe_text(_text(data.get("diff") or "")).splitlines()
            yield from (f"  | {line[:200]}" for line in diff[:DIFF_LINES])
            if len(diff) > DIFF_LINES:
                yield f"  | [... {len(diff) - DIFF_LINES} more lines]"
        else:
            yield f"[{event.kind}] {_short(event.text or json.dumps(data, default=str))}"


def _repeated(message: str, output: str) -> bool:
    """Every line of ``message`` is in ``output`` already (pytest's ``E`` lines)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return bool(lines) and all(line in output for line in lines)


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _spent(view: TrialView) -> str:
    cost = f"${view.cost.usd:.4f}" if view.cost.usd is not None else "cost not priced"
    turns = f", {view.turns} turns" if view.turns is not None else ""
    return (
        f"agent {_duration(view.agent_seconds)} of {_duration(view.total_seconds)} in all; "
        f"{view.tokens:,} tokens over {view.calls} model calls{turns}; {cost}"
    )


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m {rest:02d}s" if minutes else f"{seconds:.1f}s"


def tests_line(view: TrialView) -> str:
    if not view.tests:
        return "not graded"
    parts = []
    for count in view.tests:
        extra = [
            f"{n} {word}"
            for n, word in (
                (count.failed, "failed"),
                (count.errors, "errors"),
                (count.skipped, "skipped"),
            )
            if n
        ]
        how = "" if count.source == "junit" else " (exit status only)"
        more = f" ({', '.join(extra)})" if extra else ""
        parts.append(f"{count.tests} {count.passed} of {count.total} passed{more}{how}")
    return "; ".join(parts)


def _cost(view: TrialView) -> Iterator[str]:
    cost = view.cost
    usd = f"${cost.usd:.4f}" if cost.usd is not None else "not priced"
    yield f"{usd} ({cost.source}); counted toward the cap: ${cost.charged_usd:.4f}"
    if cost.proxy_usage is not None:
        agreed = "DISAGREES with" if cost.usage_mismatch else "agrees with"
        yield f"tokens seen by the proxy: {cost.proxy_usage.total:,} ({agreed} the CLI's log)"
    if cost.note:
        yield f"note: {safe_text(cost.note)}"
    ledger = view.ledger or {}
    for call in ledger.get("calls", []) if isinstance(ledger.get("calls"), list) else []:
        if isinstance(call, dict):
            model = safe_text(str(call.get("model")))
            yield f"  call {call.get('index')}: {model} {_call_usd(call)}"


def _call_usd(call: dict[str, object]) -> str:
    tiers = call.get("cost")
    if not isinstance(tiers, dict):
        return "unpriced"
    total = 0.0
    for value in tiers.values():
        try:
            total += float(str(value))
        except ValueError:
            continue
    return f"${total:.6f}"


def _clip(text: Clipped) -> list[str]:
    lines = safe_text(text.text).splitlines()
    if text.cut:
        lines.append(f"[... cut; the whole file is {text.file}]")
    return lines


def _short(text: str) -> str:
    text = safe_text(text)
    return text if len(text) <= EVENT_TEXT else text[:EVENT_TEXT] + " [...]"


def safe_text(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _value(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)
