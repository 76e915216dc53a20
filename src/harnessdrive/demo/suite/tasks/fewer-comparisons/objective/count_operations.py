"""The workload of the objective: dupes.finder.repeated on the runner's keys.

The objective runner (harnessdrive's ``{measure} operations``) holds the keys' values and counts
every ``==`` and ``hash`` this process asks of them; the count never passes through here.
"""

import sys

# The runner's side first, before the repository is on the path.
from harnessdrive_objective import keys, report

sys.path.insert(0, ".")

from dupes.finder import repeated  # noqa: E402

report(repeated(keys()))
