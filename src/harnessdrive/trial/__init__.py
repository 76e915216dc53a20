"""One trial on a worker: the job and its settings, the worker's context and scratch layout, and
the core that turns a job into a result (snapshot, setup, the protocol's rounds, pricing,
provenance). The driver (running/) and the executors (executors/) build on it; it imports
neither."""
