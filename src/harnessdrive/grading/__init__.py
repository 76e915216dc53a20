"""Grading: judging an agent's change by code, in a fresh copy of the repository the agent never
saw (tamper and scope checks, the hidden tests run in a sandbox, junit results read back), and
the verdict it produces."""
