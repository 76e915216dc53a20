"""Extension points: one pluggy hook specification through which harnesses, grader kinds, trial
protocols, executors and report renderers are registered, built-ins and third parties alike."""
