"""The grader's self-test (``harnessdrive check``): every case of every task as a trial job."""
