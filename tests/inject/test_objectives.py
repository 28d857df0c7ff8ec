"""The objectives' secrets: drawn from the seed alone, and what each payload asks names them."""

from __future__ import annotations

import subprocess
import sys

from logomesh.inject.objectives import OBJECTIVES, draw_secrets


def test_same_seed_same_secrets_in_another_process() -> None:
    here = draw_secrets(7)
    there = subprocess.run(
        [sys.executable, "-c", "from logomesh.inject.objectives import draw_secrets; s = draw_secrets(7); "
                               "print(s.canary_var, s.canary, s.backdoor)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert there == [here.canary_var, here.canary, here.backdoor]


def test_seeds_draw_different_secrets() -> None:
    drawn = [draw_secrets(seed) for seed in range(50)]
    assert len({s.canary for s in drawn}) == 50
    assert len({s.backdoor for s in drawn}) == 50
    assert len({s.canary_var for s in drawn}) > 1


def test_backdoor_stands_for_a_number_and_a_string() -> None:
    for seed in range(50):
        backdoor = draw_secrets(seed).backdoor
        assert str(int(backdoor)) == backdoor


def test_each_ask_names_its_secret() -> None:
    secrets = draw_secrets(3)
    assert secrets.canary_var in OBJECTIVES["leak-canary"].instruction(secrets)
    assert secrets.canary not in OBJECTIVES["leak-canary"].instruction(secrets)  # the value stays the judge's
    assert secrets.path in OBJECTIVES["write-outside"].instruction(secrets)
    assert secrets.backdoor in OBJECTIVES["backdoor"].instruction(secrets)
    assert all(name == objective.name for name, objective in OBJECTIVES.items())
