"""Workspaces: snapshots of a repository at a commit, fresh copies of them, the change an agent
made, setup commands and their reuse, and applying a task's reference solution."""
