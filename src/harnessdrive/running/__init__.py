"""Running a suite: the plan of trials, the driver that runs them and records each result, one
trial from workspace to verdict, the sandbox choice and progress."""
