"""The ``harnessdrive`` command. It parses arguments and calls the library; nothing more.

Bad input is one line on stderr and exit code 2; Ctrl-C is exit 130; anything else that escapes
is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

# Typer vendors click; its exception types are what a failed parse raises.
from typer._click.exceptions import ClickException

from harnessdrive import __version__
from harnessdrive.cli import (
    check_cmd,
    compare_cmd,
    estimate_cmd,
    info_cmd,
    install_cmd,
    mine_cmd,
    report_cmd,
    run_cmd,
    show_cmd,
)
from harnessdrive.cli.cases_cmd import cases_app
from harnessdrive.cli.flags import error_message
from harnessdrive.errors import UserError

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="harnessdrive",
    help="Test-drive AI coding-agent harnesses on the same tasks; code decides what passed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command()(run_cmd.run)
app.command()(run_cmd.demo)
app.command()(estimate_cmd.estimate)
app.command()(report_cmd.report)
app.command()(compare_cmd.compare)
app.command()(check_cmd.check)
app.command("mine")(mine_cmd.mine_command)
app.command()(info_cmd.harnesses)
app.command()(info_cmd.doctor)
app.command("install-clis")(install_cmd.install_clis)
app.command()(report_cmd.index)
app.command()(info_cmd.schema)
app.command()(show_cmd.show)
app.command()(show_cmd.review)
app.add_typer(cases_app, name="cases")


def _version(value: bool) -> None:
    if value:
        print(f"harnessdrive {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Test-drive AI coding-agent harnesses on the same tasks; code decides what passed."""


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code."""
    command = typer.main.get_command(app)
    args = list(sys.argv[1:] if argv is None else argv)
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
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run_cli())
