"""``harnessdrive images``: the image cache, listed, inspected and pruned."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from harnessdrive.cli.output import stdout
from harnessdrive.environments.oci.cache import ImageCache, read_root
from harnessdrive.errors import UserError

images_app = typer.Typer(help="The image cache: unpacked roots by digest.")


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


@images_app.command("list")
def list_images() -> None:
    """Every unpacked image, its size and the sources that named it."""
    cache = ImageCache()
    table = Table(title=f"Images in {cache.folder}", title_justify="left")
    for column in ("Digest", "Size", "Sources"):
        table.add_column(column)
    for image in cache.images():
        table.add_row(image.digest[:19], _mib(image.size), str(len(image.tags)))
    console = stdout()
    console.print(table)
    console.print(f"Cache size: {_mib(cache.size())}")


@images_app.command("inspect")
def inspect(
    digest: Annotated[str, typer.Argument(help="A digest, or its start.")],
) -> None:
    """An image's digest, root, env, working folder and user, as JSON."""
    cache = ImageCache()
    wanted = digest.removeprefix("sha256:")
    found = [i for i in cache.images() if i.digest.removeprefix("sha256:").startswith(wanted)]
    if len(found) != 1:
        raise UserError(f"image {digest}: {'no' if not found else 'more than one'} image matches")
    root = read_root(found[0].root)
    data = {
        "digest": root.digest,
        "root": str(root.root),
        "env": dict(root.env),
        "workdir": root.workdir,
        "user": root.user,
        "size": found[0].size,
    }
    typer.echo(json.dumps(data, indent=2))


@images_app.command("prune")
def prune() -> None:
    """Remove every cached image (they are copied and unpacked again when named)."""
    freed = ImageCache().prune()
    stdout().print(f"Freed {_mib(freed)}")
