"""Harnesses: the adapter interface every agent CLI implements, the registry that finds one by
name, the adapters of the supported CLIs, the `command` template harness and the built-in
scripted agents."""
