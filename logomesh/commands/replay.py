"""``logomesh replay ID``: re-score a battle, or re-judge an injection attempt, from stored inputs."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from logomesh.commands.common import EXIT_VERIFY_FAILED, HomeOption, JsonOption, SandboxOption, TasksDirOption, fail


def replay(
    battle_id: Annotated[str, typer.Argument(help="The battle or injection attempt to replay.")],
    sandbox: SandboxOption = "auto",
    tasks_dir: TasksDirOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Re-score a battle (or re-judge an injection attempt) from its stored inputs and check H(result) against the
    signed one (exit 3 if not)."""
    from ledger import LedgerError
    from logomesh.battle.replay import ReplayError
    from logomesh.battle.request import StageFailed
    from logomesh.home import resolve_home
    from logomesh.progress import ProgressPrinter
    from logomesh.replay import replay_entry

    try:
        report = replay_entry(resolve_home(home, create=False), battle_id, sandbox, ProgressPrinter())
    except (ReplayError, LedgerError) as exc:
        fail(str(exc))
    except StageFailed as exc:
        fail(f"replay failed at {exc.stage}: {exc.reason}")
    if as_json:
        print(
            json.dumps(
                {
                    "battle_id": report.battle_id,
                    "sequence": report.sequence,
                    "matches": report.matches,
                    "signed_sha256": report.signed_sha256,
                    "replayed_sha256": report.replayed_sha256,
                    "differences": list(report.differences),
                    "scorer_config_sha256": {"signed": report.signed_scorer, "replayed": report.replayed_scorer},
                },
                indent=2,
            )
        )
    elif report.matches:
        print(f"replay of {battle_id} (entry #{report.sequence}) matches: H(result) = {report.signed_sha256}")
    else:
        print(
            f"replay of {battle_id} (entry #{report.sequence}) DIFFERS: signed {report.signed_sha256}, "
            f"replayed {report.replayed_sha256}; fields: {', '.join(report.differences) or '(formatting only)'}"
        )
        if report.scorer_changed:
            print(f"the entry was scored under scoring configuration {report.signed_scorer[:12]}…, this build "
                  f"scores under {report.replayed_scorer[:12]}…: replay it with the LogoMesh release that "
                  "recorded it to check the entry itself")
    if report.scorer_changed and not report.matches:  # this build's judge differs: nothing is shown about the entry
        fail("cannot check this entry with this build: it was scored under another scoring configuration "
             f"({report.signed_scorer[:12]}…, this build {report.replayed_scorer[:12]}…); replay it with the "
             "LogoMesh release that recorded it")
    if not report.matches:
        raise typer.Exit(EXIT_VERIFY_FAILED)
