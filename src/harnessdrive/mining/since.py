"""How far back the history scan looks: ``Nd`` (days before now) or a ``YYYY-MM-DD`` date."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from harnessdrive.errors import Setting, UserError

DEFAULT_SINCE = "365d"

_DAYS = re.compile(r"(\d+)d")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SINCE = (Setting("since"),)


@dataclass(frozen=True)
class Since:
    text: str
    """What the user wrote."""
    moment: datetime
    """The oldest commit time included (timezone-aware)."""
    description: str
    """For sentences: ``365 days ago`` or ``2026-01-15``."""

    @property
    def git_arguments(self) -> list[str]:
        """Arguments for ``git log``: a raw timestamp, so git's date guessing never moves it."""
        seconds = int(self.moment.timestamp())
        # git reads @0 as "no commits"; a start before 1970 limits nothing anyway.
        return [f"--since=@{seconds}"] if seconds > 0 else []


def parse_since(text: str, now: datetime | None = None) -> Since:
    """Parse the history start; anything but ``Nd`` or a real ``YYYY-MM-DD`` date is a UserError."""
    now = now or datetime.now(UTC).astimezone()
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    if match := _DAYS.fullmatch(text):
        days = int(match.group(1))
        description = f"{days} day ago" if days == 1 else f"{days} days ago"
        try:
            return Since(text, now - timedelta(days=days), description)
        except OverflowError:
            raise UserError(
                f"the history start {text!r} reaches back before the year 1", settings=_SINCE
            ) from None
    if _DATE.fullmatch(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise UserError(
                f"the history start {text!r} is not a real date", settings=_SINCE
            ) from None
        # The start of that day where the user is.
        return Since(text, datetime.combine(day, time(), tzinfo=now.tzinfo), text)
    raise UserError(
        "the history start is a number of days such as 365d, or a date such as 2026-01-15, "
        f"not {text!r}",
        settings=_SINCE,
    )
