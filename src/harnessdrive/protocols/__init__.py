"""Trial protocols: how one trial drives an agent and grades what it leaves (a single attempt
today), and the stages that name the machinery that failed."""
