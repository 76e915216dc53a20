"""The CLI-adapter kit: what every adapter of a real agent CLI shares (the AgentCli base, finding
and pinning executables, flag checks, endpoints, session-log binding, fatal-error hints)."""
