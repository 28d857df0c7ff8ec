"""``logomesh tasks list``."""

from __future__ import annotations

import json

import typer

from logomesh.commands.common import JsonOption, fail

app = typer.Typer(help="The task library.", no_args_is_help=True)


@app.command("list")
def list_tasks(as_json: JsonOption = False) -> None:
    """List the tasks in the library."""
    from logomesh.tasks import TaskError, all_tasks

    try:
        tasks = all_tasks()
    except TaskError as exc:
        fail(str(exc))
    if as_json:
        rows = [
            {
                "id": t.id,
                "title": t.title,
                "entry_point": t.entry_point,
                "hidden_tests": len(t.hidden_tests),
                "submissions": t.submission_names(),
                "spec_sha256": t.spec_sha256,
                "hidden_sha256": t.hidden_sha256,
            }
            for t in tasks
        ]
        print(json.dumps(rows, indent=2))
        return
    width = max((len(t.id) for t in tasks), default=2)
    for t in tasks:
        print(f"{t.id:<{width}}  {t.title}  [mocks: {', '.join(t.submission_names())}]")
