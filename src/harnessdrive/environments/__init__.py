"""Environments a task runs in other than the host's own system: OCI images."""
