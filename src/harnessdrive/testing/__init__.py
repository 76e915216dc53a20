"""Public test doubles for harnessdrive and its plugins: a scripted model server, scripted agents,
a repository builder, suites, price files and wheels for tests."""
