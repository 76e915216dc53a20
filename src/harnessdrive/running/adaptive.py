"""Run until decided: schedule only the trials that the comparisons still open need.

The plan lists every trial the budget could take; this schedule takes from it as the
comparisons need (stats/sequential_design.py). The first pass runs every arm on every task.
After it, each open comparison needs its next slot (a task drawn at random, at its next
repetition) from both its arms: an arm whose comparisons are all decided runs no more, and a
slot serves every open comparison of the arms that run it. Of the trials wanted, the earliest
slot goes first, then the arm that serves the most open comparisons, then the arm of the least
settled one (the widest interval), so a decision lands as early as the trials allow.

The state is never kept apart from the store: after every recorded trial it is derived again
from the recorded results, in slot order, so a run killed and resumed reaches exactly the
decisions an uninterrupted one would, and looks at the data no more often than the confidence
sequences allow (after every observation, which they allow).
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from harnessdrive.accounting.spend_gate import SpendGate
from harnessdrive.errors import Setting, UserError
from harnessdrive.running.concurrency import Slots
from harnessdrive.running.plan import Plan, PlannedTrial
from harnessdrive.running.schedule import Next, Schedule, is_done
from harnessdrive.stats.sequential_design import (
    Cell,
    DecisionSettings,
    Outcome,
    PairState,
    fixed_design_passes,
    follow,
    pair_alpha,
    slot_plan,
)
from harnessdrive.store.decisions_file import (
    DecisionRules,
    DecisionsFile,
    PairDecision,
    all_decisions,
)
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store


class AdaptiveSchedule(Schedule):
    """A :class:`Schedule` whose queue is what the comparisons still open need next."""

    def __init__(
        self,
        plan: Plan,
        store: Store,
        gate: SpendGate,
        settings: DecisionSettings,
        slots: Slots | None = None,
        lookahead: int = 1,
    ) -> None:
        self._standing: dict[str, TrialResult] = {}
        super().__init__(plan, store, gate, slots)
        self._record_to = store.paths.run_decisions(plan.run_id)
        self.plan = plan
        self.settings = settings
        self.lookahead = max(lookahead, 1)
        """Slots of an open pair that may run at once: more keeps more workers busy, at the
        price of trials a decision at an earlier slot leaves unread."""
        self.arms = [v.label for v in plan.variants]
        self.tasks = [t.id for t in plan.suite.tasks]
        self.draws = slot_plan(self.tasks, settings.max_repeats)
        if any(repetition > plan.repeat for _, repetition in self.draws):
            raise ValueError("the plan must list every repeat the slots may take")
        self._cells = {(t.variant.label, t.task.id, t.repetition): t for t in plan.trials}
        self._in_flight: set[str] = set()
        self._fixed: dict[tuple[tuple[str, str], tuple[int, ...]], int | None] = {}
        self._unfinished: dict[str, str] = {}
        """Trials of this run that ended without a standing result (not tried again here)."""
        self.spent: str | None = None
        """Why the spend cap ended the run, once it has."""
        self.states = self._follow()
        self.announced: set[tuple[str, str]] = set()
        """Pairs whose decision has been told (those decided before a resume are told once)."""
        self._refill()

    def _stands(self, trial_id: str, result: TrialResult) -> None:
        self._standing[trial_id] = result

    # What the driver calls.

    def next(self, *, in_flight: int) -> Next | None:
        step = super().next(in_flight=in_flight)
        if step is None:
            return None
        if step.skip is None:
            self._in_flight.add(step.trial.trial_id)
        elif step.trial.variant.label not in self.skipped_harnesses:
            # The spend cap: nothing more starts; the open comparisons end inconclusive.
            self.spent = f"the spend cap was reached ({step.skip})"
            self._queue.clear()
            self.states = self._follow()
        return step

    def finished(self, trial: PlannedTrial, result: TrialResult) -> str | None:
        message = super().finished(trial, result)
        self._in_flight.discard(trial.trial_id)
        if is_done(result, trial):
            self._standing[trial.trial_id] = result
        elif result.status != "interrupted":  # a stop: the pair stays open for a resume
            self._unfinished[trial.trial_id] = result.status.replace("_", " ")
        self.states = self._follow()
        self._refill()
        lines = [message] if message else []
        decided = self.newly_decided()
        if decided:
            self.write(finished=False)  # each decision is on disk before it is told
        lines += decided
        return "\n".join(lines) or None

    def newly_decided(self) -> list[str]:
        """One line for each decision not told yet; each is told once."""
        lines = []
        for state in self.states:
            if not state.open and state.pair not in self.announced:
                self.announced.add(state.pair)
                lines.append(describe(state, len(self.tasks), self.fixed_passes(state)))
        return lines

    # The sequential state, from the records.

    def _outcome(self, arm: str, task: str, repetition: int) -> Outcome | None:
        trial = self._cells.get((arm, task, repetition))
        result = self._standing.get(trial.trial_id) if trial else None
        if result is None or result.status == "could_not_run":
            return None  # no evidence about the agent either way: the pair cannot read on
        return Outcome(passed=result.outcome == "pass", usd=result.cost.charged_usd)

    def _stopped(self, pair: tuple[str, str], waiting: list[Cell]) -> str | None:
        for arm in pair:
            if arm in self.skipped_harnesses:
                return f"{arm} could not run: {self.skipped_harnesses[arm]}"
        for cell in waiting:
            trial_id = self._cells[cell].trial_id
            if trial_id in self._unfinished:
                status = self._unfinished[trial_id]
                return f"{trial_id} ended {status}; the same command tries it again"
            standing = self._standing.get(trial_id)
            if standing is not None and standing.status == "could_not_run":
                why = standing.agent.hint or standing.agent.error or "see its agent.stderr"
                return f"{trial_id} could not run ({why}) and was charged, so it stands"
        return self.spent

    def _follow(self) -> list[PairState]:
        return follow(
            self.arms,
            self.tasks,
            self._outcome,
            self.settings,
            slots=self.draws,
            stopped=self._stopped,
        )

    def fixed_passes(self, state: PairState) -> int | None:
        """Passes a fixed design of the same power would have taken for a decided pair (an
        estimate from its own trials; computed once, the trials of a decision never change)."""
        if state.verdict not in ("better", "worse", "equivalent") or not state.differences:
            return None
        key = (state.pair, state.differences)
        if key not in self._fixed:
            alpha = pair_alpha(self.settings, len(self.arms))
            self._fixed[key] = fixed_design_passes(
                state.differences,
                len(self.tasks),
                alpha,
                self.settings,
                state.verdict,
                seed="/".join(state.pair),
            )
        return self._fixed[key]

    def _refill(self) -> None:
        """The queue: every trial the open comparisons' next round lacks, most useful first."""
        if self.spent:
            self._queue.clear()
            return
        open_pairs = [s for s in self.states if s.open]
        serving = {arm: sum(arm in s.pair for s in open_pairs) for arm in self.arms}
        widest = {
            arm: max((s.upper - s.lower for s in open_pairs if arm in s.pair), default=0.0)
            for arm in self.arms
        }
        wanted: dict[str, tuple[tuple[int, int, float, int], PlannedTrial]] = {}
        taken = (self._standing, self._in_flight, self._unfinished)
        for state in open_pairs:
            if state.first_pass_done:
                ahead = self.draws[state.slots_read : state.slots_read + self.lookahead]
                # The first pass is position 0; slot i (from 0) is position i + 1.
                cells = [(state.slots_read + 1 + i, cell) for i, cell in enumerate(ahead)]
            else:
                cells = [(0, (task, 1)) for task in self.tasks]
            for arm in state.pair:
                for order, (position, (task, repetition)) in enumerate(cells):
                    trial = self._cells[(arm, task, repetition)]
                    if any(trial.trial_id in each for each in taken):
                        continue
                    rank = (position, -serving[arm], -widest[arm], order)
                    wanted[trial.trial_id] = (rank, trial)
        self._queue = deque(trial for _, trial in sorted(wanted.values(), key=lambda w: w[0]))

    # What the run leaves behind.

    def recorded(self) -> tuple[int, float]:
        """Trials recorded for the plan and what they were charged."""
        return len(self._standing), sum(r.cost.charged_usd for r in self._standing.values())

    def write(self, *, finished: bool) -> None:
        self.decisions(finished=finished).write(self._record_to)

    def decisions(self, *, finished: bool) -> DecisionsFile:
        trials, usd = self.recorded()
        states = self.states
        if finished:
            # A run that ends with comparisons open ran out of trials for them.
            reason = self.spent or "the run was stopped before they were decided"
            states = [
                replace(s, verdict="inconclusive", reason=reason) if s.open else s for s in states
            ]
        return DecisionsFile(
            run_id=self.plan.run_id,
            suite_id=_suite_id(self.plan),
            arms=tuple(self.arms),
            rules=rules(self.settings),
            tasks=len(self.tasks),
            pairs=tuple(_pair_record(s, len(self.tasks), self.fixed_passes(s)) for s in states),
            trials=trials,
            usd=usd,
            finished=finished,
        )

    def summary(self) -> list[str]:
        """The closing lines: what was decided, what it took, what a fixed design would."""
        trials, usd = self.recorded()
        decided = [s for s in self.states if s.verdict in ("better", "worse", "equivalent")]
        lines = [
            f"Until decided: {len(decided)} of {len(self.states)} comparison(s) decided with "
            f"{trials} trials (${usd:.2f}); the budget allowed "
            f"{self.settings.max_repeats * len(self.tasks) * len(self.arms)}."
        ]
        for state in self.states:
            if state.verdict == "inconclusive":
                lines.append(f"  {state.first} vs {state.second}: inconclusive, {state.reason}.")
            elif state.open:
                lines.append(
                    f"  {state.first} vs {state.second}: still open after {state.trials} "
                    "trials; the same command goes on."
                )
        fixed = [n for s in decided if (n := self.fixed_passes(s)) is not None]
        if fixed:
            # A fixed design runs every arm on every task, as many passes as the most demanding.
            passes = max(fixed)
            fixed_trials = passes * len(self.tasks) * len(self.arms)
            per_trial = usd / trials if trials else 0.0
            lines.append(
                f"A fixed design of the same power for these decisions: every arm on every "
                f"task {passes} time(s), {fixed_trials} trials (${fixed_trials * per_trial:.2f}); "
                "an estimate from this run's data."
            )
        return lines


def rules(settings: DecisionSettings) -> DecisionRules:
    return DecisionRules(
        confidence=settings.confidence,
        margin=settings.margin,
        max_repeats=settings.max_repeats,
    )


def check_rules_unchanged(store: Store, plan: Plan, settings: DecisionSettings) -> None:
    """The same arms on the same suite are compared under the rules they were first compared
    with: a margin or a confidence changed after seeing the data would void the guarantee. (A
    larger budget is fine: it reads on along the same sequence.)"""
    arms = sorted(v.label for v in plan.variants)
    ours = (settings.confidence, settings.margin)
    for earlier in all_decisions(store.paths.run_decisions(plan.run_id).parent):
        if earlier.suite_id != _suite_id(plan) or sorted(earlier.arms) != arms:
            continue
        if (earlier.rules.confidence, earlier.rules.margin) == ours:
            continue
        margin = "none" if earlier.rules.margin is None else f"{earlier.rules.margin:g}"
        raise UserError(
            f"these arms were compared on this suite with confidence "
            f"{earlier.rules.confidence:g} and margin {margin} (run {earlier.run_id}); go on with "
            "the same, or use another results folder for other rules",
            settings=(Setting("margin"),),
        )


def _suite_id(plan: Plan) -> str:
    return plan.trials[0].suite_id if plan.trials else plan.suite.name


def describe(state: PairState, tasks: int, fixed: int | None = None) -> str:
    """One line for a final decision, with what it took."""
    return _pair_record(state, tasks, fixed).line()


def _pair_record(state: PairState, tasks: int, fixed: int | None) -> PairDecision:
    per_trial = state.usd / state.trials if state.trials else 0.0
    fixed_trials = None if fixed is None else 2 * tasks * fixed
    return PairDecision(
        first=state.first,
        second=state.second,
        verdict=state.verdict,
        difference=state.difference,
        lower=state.lower,
        upper=state.upper,
        trials=state.trials,
        usd=state.usd,
        reason=state.reason,
        fixed_design_passes=fixed,
        fixed_design_trials=fixed_trials,
        fixed_design_usd=None if fixed_trials is None else per_trial * fixed_trials,
    )
