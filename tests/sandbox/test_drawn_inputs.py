"""Drawn inputs (issue 31, point 4): a driver's random inputs are seeded per submission and battle; both backends.

A submission that read the drivers can learn the answers to every fixed input. Inputs a driver draws
(``observe.drawn``) come from ``drivers_seed(battle seed, submission bytes)``: the same battle draws the same
inputs, and no submission can know its own before it is written. The memorizer below replays the
reference's answers to the random-traffic driver as drawn with seed 0 (what reading our source and running
the reference once would give): it matches the reference at seed 0 and fails under the battle's seed.
"""

from __future__ import annotations

import json

from logomesh.sandbox import Sandbox
from logomesh.tasks import load_task
from logomesh.tasks.hidden_suite import ReferenceCache, drawing_tests, drivers_seed, run_hidden

TASK = load_task("rate-limiter")

MEMORIZER = '''
import json
from solution_good import RateLimiter as _Honest

_LEARNT = json.loads({answers!r})


class RateLimiter(_Honest):
    def __init__(self, max_requests, window_seconds, clock=None):
        super().__init__(max_requests, window_seconds, *([clock] if clock is not None else []))
        self._replay = list(_LEARNT) if (max_requests, window_seconds) == (3, 1.0) and clock is not None else None

    def allow(self, key):
        honest = super().allow(key)
        return self._replay.pop(0) if self._replay else honest
'''


def _traffic_name() -> str:
    names = [n for n in _names() if n.endswith(".test_random_traffic")]
    assert len(names) == 1, names
    return names[0]


def _names() -> list[str]:
    from logomesh.sandbox.discover import discover

    return discover(TASK.hidden_tests)


def _memorizer(box: Sandbox, cache: ReferenceCache) -> str:
    """The good solution inlined, plus a replay of the reference's seed-0 answers to the traffic driver."""
    [traffic] = [t for t in cache.get(box, TASK, 0).tests if t.name == _traffic_name()]
    [seen] = [o for o in traffic.observations if o[0] == "value"]
    answers = [item[1] is True for item in seen[1][1]]
    good = TASK.labelled_submission("good").submission.source
    return MEMORIZER.format(answers=json.dumps(answers)).replace("from solution_good import RateLimiter as _Honest",
                                                               good + "\n_Honest = RateLimiter")


def test_drawn_inputs_follow_the_seed_and_nothing_else(box: Sandbox, cache: ReferenceCache) -> None:
    name = _traffic_name()
    first, second, again = (box.observe_suite(TASK.reference, TASK.hidden_tests, seed=seed, only={name})
                            for seed in (11, 12, 11))
    assert [t.name for t in first.tests] == [name]
    assert first.tests[0].observations == again.tests[0].observations
    assert first.tests[0].observations != second.tests[0].observations
    base = cache.get(box, TASK, 0)
    assert drawing_tests(base) == {name}  # the other drivers are fixed: the cache runs them once
    merged = cache.get(box, TASK, 11)
    assert [t.name for t in merged.tests] == [t.name for t in base.tests]
    assert {t.name for t in merged.tests if t.observations != next(
        b for b in base.tests if b.name == t.name).observations} == {name}


def test_answers_learnt_from_our_source_fit_no_battle(box: Sandbox, cache: ReferenceCache) -> None:
    name = _traffic_name()
    memorizer = _memorizer(box, cache)
    at_zero = box.observe_suite(memorizer, TASK.hidden_tests, seed=0, only={name})
    [reference_at_zero] = [t for t in cache.get(box, TASK, 0).tests if t.name == name]
    assert at_zero.tests[0].observations == reference_at_zero.observations  # the replay is right for seed 0
    for seed in (0, 7):
        run = run_hidden(box, TASK, memorizer, cache=cache, seed=seed).suite
        [traffic] = [o for o in run.outcomes if o.name == name]
        assert traffic.status == "failed", (seed, traffic)
    honest = run_hidden(box, TASK, TASK.labelled_submission("good").submission.source, cache=cache, seed=7).suite
    assert honest.passed == honest.total


def test_the_drivers_seed_is_the_battles_and_the_submissions() -> None:
    assert drivers_seed(0, "a") == drivers_seed(0, "a")
    assert len({drivers_seed(0, "a"), drivers_seed(1, "a"), drivers_seed(0, "b"), 0}) == 4
