"""Find harnesses by name: every one is registered through the ``harnessdrive_harnesses`` hook.

harnessdrive's own come from :mod:`harnessdrive.harnesses.builtin`, third-party ones from
installed plugins (docs/plugins.md). A harness nobody registered can still be named as
``package.module:Factory``; its options model is the factory's ``options_model`` attribute, and
without one it takes no options.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import cast

from pydantic import BaseModel

from harnessdrive.errors import PluginError, UnknownHarnessError, did_you_mean
from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.entry import HarnessEntry
from harnessdrive.harnesses.ladder import EffortLadder
from harnessdrive.harnesses.options import NoOptions, parse_options
from harnessdrive.plugins.registry import registered_by, registrations
from harnessdrive.tasks.models import VariantSpec

HOOK = "harnessdrive_harnesses"
RETIRED_GROUP = "harnessdrive.harnesses"
"""The entry-point group of harnessdrive 0.1, no longer read (docs/plugins.md)."""


def available() -> dict[str, HarnessEntry]:
    """Every registered harness, by name."""
    found = dict(sorted(registrations(HOOK, HarnessEntry).items()))
    for name, entry in found.items():
        _check_options_model(name, entry.options)
    return found


def origins() -> dict[str, str]:
    """Where each registered harness came from: ``built-in``, or the plugin that registered it."""
    return registered_by(HOOK, HarnessEntry)


def harness_entry(name: str) -> HarnessEntry:
    """The registration of ``name``, or one made from a ``package.module:Factory`` path."""
    table = available()
    if name in table:
        return table[name]
    if ":" not in name:
        raise UnknownHarnessError(
            f"unknown harness {name!r}{did_you_mean(name, table)}{_retired(name)}; known "
            f"harnesses: {', '.join(table)}"
        )
    module_name, _, attribute = name.partition(":")
    try:
        factory = cast(
            Callable[[], Harness], getattr(importlib.import_module(module_name), attribute)
        )
    except (ImportError, AttributeError) as exc:
        raise UnknownHarnessError(f"cannot load harness {name!r}: {exc}") from None
    options = getattr(factory, "options_model", NoOptions)
    _check_options_model(name, options)
    efforts = getattr(factory, "efforts", None)
    return HarnessEntry(
        name=name,
        factory=factory,
        options=options,
        efforts=None if efforts is None else EffortLadder(tuple(efforts)),
        instruction_files=tuple(getattr(factory, "instruction_files", ())),
    )


def get_harness(name: str) -> Harness:
    """A harness by registered name, or by ``package.module:Factory`` for one not registered."""
    return harness_entry(name).factory()


def check_options(variant: VariantSpec) -> BaseModel:
    """The variant's options, checked against its harness's options model."""
    entry = harness_entry(variant.harness)
    return parse_options(entry.options, variant, entry.name)


def _check_options_model(name: str, options: object) -> None:
    """An options model must be a pydantic model that refuses unknown keys."""
    if not (isinstance(options, type) and issubclass(options, BaseModel)):
        raise PluginError(f"harness {name!r}: its options model is not a pydantic model class")
    if options.model_config.get("extra") != "forbid":
        raise PluginError(
            f"harness {name!r}: its options model {options.__name__} must refuse unknown keys "
            '(model_config extra="forbid", or derive from HarnessOptions)'
        )


def _retired(name: str) -> str:
    """A hint when ``name`` is only registered in the retired entry-point group."""
    for entry in entry_points(group=RETIRED_GROUP):
        if entry.name == name:
            return (
                f" (it is registered in the entry-point group {RETIRED_GROUP!r}, which is no "
                "longer read: register it through the 'harnessdrive' group, docs/plugins.md)"
            )
    return ""
