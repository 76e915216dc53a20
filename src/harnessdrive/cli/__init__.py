"""The ``harnessdrive`` command line: one module per command, each parsing its arguments and
calling the library, and what serves only the command line: ``doctor``, the variants named by
``--harness``, ``--cmd`` and ``--model``, and the flag for each library setting in messages."""
