"""The task audit: scripted exploit agents run against every task, and the verdict on whether
the task can be trusted (docs/audit.md)."""
