"""The ``differential`` grader kind: the agent's implementation is compared with a reference
(the oracle) on frozen, hidden, rule-tagged cases whose answers only the oracle decided.

Modules, one job each: :mod:`.spec` (the ``[grade]`` table), :mod:`.loading` (the task's own
callables), :mod:`.compare` (canonical JSON and comparators), :mod:`.casesets` (generating,
tagging, bucket filling, freezing), :mod:`.static_check` (the module allowlist),
:mod:`.execute` (running cases in the sandbox, one worker restarted after a hang or crash),
:mod:`.minimise` (delta debugging of failing cases), :mod:`.claims` (the agent's checkable
claims), :mod:`.service` (the oracle as a loopback server for the agent's run) and :mod:`.kind`
(the grader kind).
"""
