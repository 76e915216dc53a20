"""Reading what a Harbor verifier wrote: ``reward.txt`` (one number) or ``reward.json`` (named
numbers). Both are written by task code that ran after the agent, so both are hostile data: a
missing, oversized or non-numeric reward is an error, never a pass."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import AgentDataError, GradingError
from harnessdrive.grading.hostile import load_json, read_bounded

_MAX_REWARD_BYTES = 64 * 1024
_MAX_NAMED = 100
MAIN_REWARD = "reward"


@dataclass(frozen=True)
class Reward:
    value: float
    """The reward that decides: reward.txt's number, or reward.json's ``reward`` (its only
    value, or the mean of its values, when it has no ``reward``)."""
    named: dict[str, float]
    """Every named reward of reward.json (empty for reward.txt)."""


def read_reward(folder: Path) -> Reward:
    """The reward in ``folder`` (the verifier's ``/logs/verifier``); :class:`GradingError`
    when there is none or it is not a number."""
    text_file, json_file = folder / "reward.txt", folder / "reward.json"
    try:
        if text_file.exists() or text_file.is_symlink():
            raw = read_bounded(text_file, "reward.txt", _MAX_REWARD_BYTES)
            return Reward(_number(raw.decode("utf-8", errors="replace").strip(), "reward.txt"), {})
        if json_file.exists() or json_file.is_symlink():
            data = load_json(
                read_bounded(json_file, "reward.json", _MAX_REWARD_BYTES), "reward.json"
            )
            return _named(data)
    except AgentDataError as exc:
        raise GradingError(f"the verifier's reward is unreadable: {exc}") from None
    raise GradingError("the verifier wrote no reward (reward.txt or reward.json)")


def _named(data: object) -> Reward:
    if not isinstance(data, dict) or not data or len(data) > _MAX_NAMED:
        raise GradingError("reward.json is not an object of 1 to 100 named numbers")
    named = {str(k)[:100]: _number(v, f"reward.json {k!r}") for k, v in data.items()}
    mean = sum(named.values()) / len(named)
    return Reward(named.get(MAIN_REWARD, mean), named)


def _number(value: object, what: str) -> float:
    if isinstance(value, bool):
        raise GradingError(f"{what} is not a number")
    try:
        number = float(value) if isinstance(value, (int, float, str)) else math.nan
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise GradingError(f"{what} is not a number: {str(value)[:40]!r}")
    return number
