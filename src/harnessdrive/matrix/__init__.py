"""The matrix: a variant is harness x model x effort x treatment (docs/matrix.md).

The library API, for the command line, the pytest plugin and scripts alike:

- :mod:`harnessdrive.harnesses.ladder`: :class:`EffortLadder`, the rungs a harness declares
  (on its ``HarnessEntry.efforts``) and the portable aliases ``min``/``mid``/``max``.
- :func:`resolve_effort`: a variant with its alias resolved to the harness's rung; an unknown
  rung is a one-line :class:`UserError` before anything runs.
- :func:`load_treatment` / :class:`Treatment`: an overlay folder and the files each harness gets
  (its own instruction file, ``AGENTS.md`` or ``CLAUDE.md``, and every shared file);
  :func:`check_treatment` refuses a treatment that has nothing for a harness it is swept over.
- :func:`expand_matrix`: base arms x models x efforts x treatments, each treatment beside its
  control; :func:`load_sweep` reads a sweep file.
- :func:`resolve_matrix`: what :func:`harnessdrive.running.plan.make_plan` calls first: every
  alias resolved, every treatment found and checked, every control present.
"""

from harnessdrive.harnesses.ladder import ALIASES, EffortLadder
from harnessdrive.matrix.effort import resolve_effort
from harnessdrive.matrix.resolve import resolve_matrix
from harnessdrive.matrix.sweep import expand_matrix, load_sweep
from harnessdrive.matrix.treatment import Treatment, check_treatment, load_treatment

__all__ = [
    "ALIASES",
    "EffortLadder",
    "Treatment",
    "check_treatment",
    "expand_matrix",
    "load_sweep",
    "load_treatment",
    "resolve_effort",
    "resolve_matrix",
]
