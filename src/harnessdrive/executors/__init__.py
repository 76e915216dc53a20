"""Where trials run: the executor interface, the per-host worker context, the local thread pool."""
