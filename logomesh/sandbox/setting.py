"""How the code's process is started, drawn per battle so that no run looks judged (issue "No run looks judged").

Code that reads how it was started (its argv and interpreter flags, its environment, its working folder) could
behave like the reference only when it sees the judge's marks. So the judge runs the code in two settings per
battle and compares what it did:

- ``CLASSIC`` (``None`` on the wire): how every run started before settings were drawn, ``python3 -I -S -u -c
  <lines>`` in a fresh folder under ``/work`` with a fixed environment. Its marks are public, so code keyed on
  them behaves like the reference here.
- an **ordinary** setting drawn from the battle's seed and the submission (``draw_ordinary``): ``python3 app.py``
  in a project folder under ``/home`` or ``/srv``, with the environment of a user's shell, a CI runner, a
  container entrypoint, a service or a cron job. It differs from ``CLASSIC`` in every one of those marks, and
  each of its values is one an ordinary program has, so code keyed on any one mark answers here as it would
  where it is used.

The ordinary setting is where the code's answers count: the hidden suite's verdicts are its run's and every
red play starts the code there. The classic start only tells keyed code from wrong code: a hidden test that
fails in the ordinary setting and passes in the classic start, reproducibly, where the reference's answers do not
change, or a deterministic probe finding that no replay in the classic start shows, is the critical
``judged-setting`` finding (``findings.SETTING``; ``tasks/hidden_suite.py``, ``red/problem.py``). What no setting
can vary (the kernel, the limits, that the code runs in a box at all) is listed in ``docs/sandbox.md``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ROOTS = ("/home", "/srv")  # tmpfs folders every backend mounts, where an ordinary setting's folder lives
SCRIPTS = ("app.py", "main.py", "server.py", "worker.py", "run.py", "service.py", "cli.py", "serve.py")
FLAGS: tuple[tuple[str, ...], ...] = ((), ("-B",))  # none of CLASSIC's -I -S -u (nor -O: it drops asserts)
USERS = ("alice", "bob", "carol", "dev", "deploy", "app", "sam", "jordan", "ubuntu", "runner", "ci", "maria",
         "lee", "kim", "alex", "taylor")
PROJECTS = ("app", "service", "api", "backend", "worker", "project", "src", "inventory", "billing", "orders",
            "ledger-api", "catalog", "payments", "scheduler", "gateway", "core")
LANGS = ("en_US.UTF-8", "en_GB.UTF-8", "C", "de_DE.UTF-8", "POSIX")  # never CLASSIC's C.UTF-8


@dataclass(frozen=True)
class Setting:
    """How one run starts the code's process: the script it runs (its name, in the code's folder), the
    interpreter's flags, its whole environment, and the code's folder (absolute, under one of ``ROOTS``)."""

    script: str
    flags: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    folder: str
    label: str  # what the setting imitates, for findings and docs: "a user's shell", ...
    ancestor: str = ""  # the command line of the shell's parent (the harness server's, rewritten for the run)
    sibling: str = ""  # the command line of another process in view (the judge's driver's, rewritten)

    def to_json(self) -> dict[str, Any]:
        """What the harness server reads (``harness/server.py``: ``Server.code_start``)."""
        return {"script": self.script, "flags": list(self.flags), "env": dict(self.env), "folder": self.folder,
                "ancestor": self.ancestor, "sibling": self.sibling}


CLASSIC: Setting | None = None  # the harness's own start: no setting in the request


def _hex(rng: random.Random, digits: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(digits))


# What the processes around an ordinary program's are called, by the kind of machine: the parent of the shell that
# starts it (the harness server's command line reads so during the run) and one other process (the driver's).
AROUND = {
    "a user's shell": (("-bash", "bash", "zsh", "tmux: server"), ("sshd: {user}@pts/0", "tmux", "-bash", "vim")),
    "a CI runner": (("/bin/bash -e /tmp/script.sh", "Runner.Worker spawnclient 115 118", "make test"),
                    ("Runner.Listener run", "git fetch --prune", "tail -f build.log")),
    "a container entrypoint": (("/sbin/docker-init -- /entrypoint.sh", "tini -- /entrypoint.sh", "dumb-init sh"),
                               ("/entrypoint.sh", "sleep infinity", "nginx: master process nginx")),
    "a system service": (("/sbin/init", "/lib/systemd/systemd --system --deserialize 31", "supervisord"),
                         ("/lib/systemd/systemd-journald", "/usr/sbin/rsyslogd -n", "/usr/sbin/sshd -D")),
    "a cron job": (("/usr/sbin/cron -f", "CRON -f", "/usr/sbin/crond -n"),
                   ("/usr/sbin/cron -f", "/usr/sbin/atd -f", "/usr/sbin/rsyslogd -n")),
}


def _profile(rng: random.Random, user: str, home: str, folder: str) -> tuple[str, dict[str, str]]:
    """One ordinary environment, with the values it has on machines of its kind."""
    lang = rng.choice(LANGS)
    kind = rng.randrange(5)
    if kind == 0:
        return "a user's shell", {
            "PATH": f"{home}/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": home, "USER": user, "LOGNAME": user, "SHELL": "/bin/bash", "LANG": lang,
            "TERM": rng.choice(("xterm-256color", "screen-256color", "xterm")), "PWD": folder,
            "SHLVL": str(rng.randint(1, 3)), "EDITOR": rng.choice(("vim", "nano")), "_": "/usr/bin/python3"}
    if kind == 1:
        return "a CI runner", {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/snap/bin",
            "HOME": home, "USER": user, "LANG": lang, "CI": "true", "PWD": folder,
            "RUNNER_TEMP": f"/tmp/runner-{_hex(rng, 8)}", "BUILD_NUMBER": str(rng.randint(100, 99999))}
    if kind == 2:
        return "a container entrypoint", {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOSTNAME": _hex(rng, 12), "HOME": "/root" if rng.random() < 0.5 else home, "LANG": lang,
            "GPG_KEY": _hex(rng, 40).upper(), "PYTHON_VERSION": "3.13"}
    if kind == 3:
        return "a system service", {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "HOME": home, "LANG": lang,
            "USER": user, "LOGNAME": user, "INVOCATION_ID": _hex(rng, 32),
            "JOURNAL_STREAM": f"8:{rng.randint(10000, 99999)}", "SYSTEMD_EXEC_PID": str(rng.randint(300, 30000))}
    return "a cron job", {"PATH": "/usr/bin:/bin", "HOME": home, "LOGNAME": user, "SHELL": "/bin/sh",
                          "LANG": lang}


def _word(rng: random.Random) -> str:
    """A pronounceable lowercase name (``velomar``, ``tisk``): not from any list, so no list tells it apart."""
    syllables = "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(1, 3)))
    return syllables + (rng.choice("klmnrst") if rng.random() < 0.5 else "")


def _user(rng: random.Random) -> str:
    """A login name: a common one, or a drawn one, sometimes with digits (``maria``, ``tesor42``)."""
    if rng.random() < 0.5:
        return rng.choice(USERS)
    return _word(rng) + (str(rng.randint(1, 99)) if rng.random() < 0.25 else "")


def _project(rng: random.Random) -> str:
    """A project folder's name: a common one, or one or two drawn words (``billing``, ``rakon-api``)."""
    if rng.random() < 0.5:
        return rng.choice(PROJECTS)
    word = _word(rng)
    return f"{word}-{rng.choice(PROJECTS)}" if rng.random() < 0.3 else word


# Modules a drawn word can spell (``_word``; CPython 3.11 to 3.13's stdlib_module_names): the script's folder is
# first on sys.path, so a script of that name would be imported in the module's place, by the code or the wire.
SHADOWING = frozenset({"code", "decimal", "dis", "locale", "nis", "pipes", "re", "site", "time", "token", "solution"})


def _script(rng: random.Random, project: str) -> str:
    """The script's name: a common one, or one named for the project or a drawn word (``rakon.py``)."""
    if rng.random() < 0.5:
        return rng.choice(SCRIPTS)
    stem = project if rng.random() < 0.3 else _word(rng)
    while stem in SHADOWING:
        stem = _word(rng)
    return f"{stem}.py"


def _own_variables(rng: random.Random, project: str) -> dict[str, str]:
    """The variables a program's own deployment sets (``RAKON_URL``, ``BILLING_LEVEL``), none to three of them:
    no two machines' environments have the same names, so no list of a kind's names tells a drawn one apart."""
    prefix = (project if rng.random() < 0.5 else _word(rng)).upper().replace("-", "_")
    values: dict[str, Callable[[], str]] = {
        "URL": lambda: f"http://{_word(rng)}:{rng.randint(1024, 9999)}", "HOST": lambda: _word(rng),
        "PORT": lambda: str(rng.randint(1024, 65535)), "ENV": lambda: rng.choice(("prod", "staging", "dev")),
        "LEVEL": lambda: rng.choice(("info", "debug", "warning")), "DIR": lambda: f"/var/lib/{_word(rng)}",
        "WORKERS": lambda: str(rng.randint(1, 16)), "TOKEN": lambda: _hex(rng, 24)}
    names = rng.sample(sorted(values), rng.randint(0, 3))
    return {f"{prefix}_{name}": values[name]() for name in names}


def _around(rng: random.Random, listed: tuple[str, ...], user: str, project: str) -> str:
    """The command line of a process around the code's: one of its kind of machine's, or a drawn program's."""
    if rng.random() < 0.5:
        return rng.choice(listed).format(user=user)
    word = _word(rng)
    return rng.choice((f"{word}d", f"/usr/local/bin/{word}", f"python3 {word}.py", f"/opt/{project}/bin/{word}",
                       f"{word}: worker process", f"/usr/bin/{word} --config /etc/{word}.conf"))


def draw_ordinary(seed: int) -> Setting:
    """An ordinary setting drawn from ``seed`` (the drivers' seed: the battle's and the submission's). Half of the
    names (the user, the project, the script, the processes around the code) come from no list (``_word``), and
    each environment holds variables of the program's own with drawn names: code that behaves only where it sees
    a value from the lists below would be wrong on about half the draws, and so where it is used."""
    rng = random.Random(f"setting\0{seed}")
    user = _user(rng)
    project = _project(rng)
    root = rng.choice(ROOTS)
    home = f"/home/{user}"
    folder = f"{home}/{project}" if root == "/home" else f"/srv/{project}"
    label, env = _profile(rng, user, home, folder)
    env.update(_own_variables(rng, project))
    ancestors, siblings = AROUND[label]
    return Setting(script=_script(rng, project), flags=rng.choice(FLAGS), env=tuple(sorted(env.items())),
                   folder=folder, label=label, ancestor=_around(rng, ancestors, user, project),
                   sibling=_around(rng, siblings, user, project))


def settings_of(seed: int) -> tuple[Setting | None, Setting]:
    """The two settings a battle's runs use: ``CLASSIC`` and one ordinary one."""
    return CLASSIC, draw_ordinary(seed)


def describe(setting: Setting | None) -> str:
    """One phrase naming ``setting``, for a finding's reproducer."""
    if setting is None:
        return "the harness's own start (python3 -I -S -u -c, /work)"
    flags = " ".join(setting.flags)
    return f"{setting.label}: python3 {flags + ' ' if flags else ''}{setting.script} in {setting.folder}"
