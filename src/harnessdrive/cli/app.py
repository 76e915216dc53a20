"""The ``harnessdrive`` command. It parses arguments and calls the library; nothing more.

Bad input is one line on stderr and exit code 2; Ctrl-C is exit 130; anything else that escapes
is a bug and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

import typer

# Typer vendors click; its exception types are what a failed parse raises.
from typer._click.exceptions import ClickException

from harnessdrive import __version__
from harnessdrive.cli.flags import error_message
from harnessdrive.errors import UserError

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_READER_GONE = 141
"""128 + SIGPIPE: what a command killed by a closed pipe exits with (``run ... | head``)."""

COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run_cmd", "run"),
    "demo": ("run_cmd", "demo"),
    "estimate": ("estimate_cmd", "estimate"),
    "report": ("report_cmd", "report"),
    "compare": ("compare_cmd", "compare"),
    "check": ("check_cmd", "check"),
    "mine": ("mine_cmd", "mine_command"),
    "harnesses": ("info_cmd", "harnesses"),
    "doctor": ("info_cmd", "doctor"),
    "install-clis": ("install_cmd", "install_clis"),
    "index": ("report_cmd", "index"),
    "schema": ("info_cmd", "schema"),
    "show": ("show_cmd", "show"),
    "watch": ("watch_cmd", "watch_results"),
    "review": ("show_cmd", "review"),
    "cases": ("cases_cmd", "cases_app"),
    "import": ("import_cmd", "import_app"),
    "export": ("export_cmd", "export_app"),
    "images": ("images_cmd", "images_app"),
}
"""Each command's module in ``harnessdrive.cli`` and its function (or sub-app), in help order.
A command line imports only the module of the command it names: importing all of them costs
more than many a command takes."""


def _version(value: bool) -> None:
    if value:
        print(f"harnessdrive {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Test-drive AI coding-agent harnesses on the same tasks; code decides what passed."""


def build_app(names: Sequence[str] | None = None) -> typer.Typer:
    """The command line with the commands ``names`` (all of them when None)."""
    app = typer.Typer(
        name="harnessdrive",
        help="Test-drive AI coding-agent harnesses on the same tasks; code decides what passed.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback()(_root)
    for name in COMMANDS if names is None else names:
        module, attribute = COMMANDS[name]
        target = getattr(importlib.import_module(f"harnessdrive.cli.{module}"), attribute)
        if isinstance(target, typer.Typer):
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)
    return app


def _named_command(args: Sequence[str]) -> list[str] | None:
    """The command the arguments name, when they name one; None means every command (help,
    --version, a typo that wants the full list for its message)."""
    first = next((a for a in args if not a.startswith("-")), None)
    if first is None or first not in COMMANDS or args[0] != first:
        return None
    return [first]


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = typer.main.get_command(build_app(_named_command(args)))
    try:
        result = command.main(
            args=args or ["--help"],
            prog_name="harnessdrive",
            standalone_mode=False,
        )
    except UserError as exc:
        print(f"error: {error_message(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except ClickException as exc:
        message = " ".join(exc.format_message().split())
        print(f"error: {message}", file=sys.stderr)
        return exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("Stopped.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of our output went away (``| head``): what was recorded stays recorded;
        # the rest of the output goes nowhere, quietly, as with any other command line tool.
        _output_to_nowhere()
        return EXIT_READER_GONE
    return result if isinstance(result, int) else 0


def _output_to_nowhere() -> None:
    nowhere = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(nowhere, stream.fileno())
    os.close(nowhere)


def main() -> None:
    sys.exit(run_cli())
