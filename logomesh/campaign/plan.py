"""A campaign's plan: which agents meet which tasks how often, with which seeds and ids.

The plan is pure data. Its canonical JSON names the campaign (the default id
is a hash of it), is saved under ``<home>/campaigns/<id>.json`` before the
first battle runs, and is what ``--resume`` reloads: the battles to run are
the plan's minus those the ledger already holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ledger.canonical import canonicalize
from logomesh.battle.request import SEED_LIMIT
from logomesh.purple import DEFAULT_PURPLE_TIMEOUT_S
from logomesh.purple.agent_url import agent_url_problem
from logomesh.scoring.config import LlmConfig

PLAN_VERSION = 1
CAMPAIGNS_DIR = "campaigns"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
_CAMPAIGN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


class PlanError(ValueError):
    """The campaign cannot be planned as asked; the message names the fix."""


@dataclass(frozen=True)
class Agent:
    """A purple agent in the campaign: an A2A URL, or a canned mock variant served in process."""

    name: str
    url: str | None = None
    mock_variant: str | None = None

    @property
    def label(self) -> str:
        return self.url or f"mock:{self.mock_variant}"


@dataclass(frozen=True)
class Settings:
    """How every battle of the campaign is run."""

    sandbox: str = "auto"
    red: bool = True
    red_budget_s: float = 10.0
    purple_timeout_s: float = DEFAULT_PURPLE_TIMEOUT_S
    protocol: str | None = None
    review_llm: LlmConfig | None = None  # the bounded LLM senior review of every battle (off: left out of the plan)

    def to_json(self) -> dict[str, Any]:
        """As saved and hashed; a campaign without the review keeps the bytes and the id it always had."""
        body = asdict(self)
        if self.review_llm is None:
            del body["review_llm"]
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Settings:
        fields = dict(body)
        review = fields.pop("review_llm", None)
        return cls(**fields, review_llm=None if review is None else LlmConfig(**review))


@dataclass(frozen=True)
class BattleJob:
    """One (agent, task, repeat) battle; ``attempt`` counts tries after a lost worker."""

    index: int
    campaign_id: str
    agent: Agent
    task_id: str
    repeat: int
    battle_id: str
    seed: int
    attempt: int = 1


@dataclass(frozen=True)
class CampaignPlan:
    campaign_id: str
    agents: tuple[Agent, ...]
    task_ids: tuple[str, ...]
    repeat: int
    seed: int
    settings: Settings = field(default_factory=Settings)
    tasks_dir: str | None = None
    """The task library the plan was made on (``$LOGOMESH_TASKS``); ``None``: the checkout's own ``tasks/``."""

    def __post_init__(self) -> None:
        check_size(len(self.agents), len(self.task_ids), self.repeat)

    def jobs(self) -> list[BattleJob]:
        """Every battle, task-major so that early results already cover every agent."""
        out: list[BattleJob] = []
        for repeat in range(1, self.repeat + 1):
            for task_id in self.task_ids:
                for agent in self.agents:
                    out.append(
                        BattleJob(
                            index=len(out),
                            campaign_id=self.campaign_id,
                            agent=agent,
                            task_id=task_id,
                            repeat=repeat,
                            battle_id=battle_id(task_id, agent.name, self.campaign_id, repeat),
                            seed=battle_seed(self.seed, task_id, repeat),
                        )
                    )
        return out

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        body["settings"] = self.settings.to_json()
        body["version"] = PLAN_VERSION
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> CampaignPlan:
        if body.get("version") != PLAN_VERSION:
            raise PlanError(f"campaign plan version {body.get('version')!r} is not {PLAN_VERSION}")
        return cls(
            campaign_id=str(body["campaign_id"]),
            agents=tuple(Agent(**a) for a in body["agents"]),
            task_ids=tuple(body["task_ids"]),
            repeat=int(body["repeat"]),
            seed=int(body["seed"]),
            settings=Settings.from_json(body["settings"]),
            tasks_dir=None if body.get("tasks_dir") is None else str(body["tasks_dir"]),
        )


def battle_id(task_id: str, agent: str, campaign_id: str, repeat: int) -> str:
    """``TASK:AGENT:CAMPAIGN:rN``: the mock purple agent serves variant AGENT of TASK for it."""
    return f"{task_id}:{agent}:{campaign_id}:r{repeat}"


def battle_seed(campaign_seed: int, task_id: str, repeat: int) -> int:
    """Every agent meets the same seed on the same task and repeat, so they face the same red search."""
    digest = hashlib.sha256(f"{campaign_seed}\x00{task_id}\x00{repeat}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % SEED_LIMIT


def parse_agents(purple: Sequence[str], mock: Sequence[str]) -> tuple[Agent, ...]:
    """``--purple NAME=URL`` and ``--mock VARIANT`` options as agents with unique names."""
    agents: list[Agent] = []
    for spec in purple:
        name, sep, url = spec.partition("=")
        if not sep or not url.strip():
            raise PlanError(f"--purple {spec!r}: write NAME=URL, e.g. --purple alice=http://127.0.0.1:9009")
        problem = agent_url_problem(url.strip())
        if problem is not None:
            raise PlanError(f"--purple {spec!r}: {problem}")
        agents.append(Agent(name=name.strip(), url=url.strip()))
    agents.extend(Agent(name=variant, mock_variant=variant) for variant in mock)
    if not agents:
        raise PlanError("name at least one agent: --purple NAME=URL or --mock VARIANT")
    check_agent_names([agent.name for agent in agents])
    return tuple(agents)


def check_agent_names(names: Sequence[str]) -> None:
    """``PlanError`` for the first name that is not 1-32 letters, digits, '.', '_' or '-', or is given twice."""
    seen: set[str] = set()
    for name in names:
        if not _NAME.match(name):
            raise PlanError(f"agent name {name!r}: use 1-32 letters, digits, '.', '_' or '-'")
        if name in seen:
            raise PlanError(f"agent name {name!r} is given twice: every agent needs its own name")
        seen.add(name)


def check_campaign_id(campaign_id: str) -> str:
    if not _CAMPAIGN_ID.match(campaign_id):
        raise PlanError(f"campaign id {campaign_id!r}: use 1-40 letters, digits, '.', '_' or '-'")
    return campaign_id


def default_campaign_id(agents: Sequence[Agent], task_ids: Sequence[str], repeat: int, seed: int,
                        settings: Settings, tasks_dir: str | None = None) -> str:
    """A hash of everything the plan holds: the same campaign asked twice gets the same id.

    A plan on the checkout's own library leaves ``tasks_dir`` out, so its id is the one it always had.
    """
    body: dict[str, Any] = {"agents": [asdict(a) for a in agents], "task_ids": list(task_ids), "repeat": repeat,
                            "seed": seed, "settings": settings.to_json()}
    if tasks_dir is not None:
        body["tasks_dir"] = tasks_dir
    return "c-" + hashlib.sha256(canonicalize(body)).hexdigest()[:12]


def plan_path(home: Path, campaign_id: str) -> Path:
    return home / CAMPAIGNS_DIR / f"{check_campaign_id(campaign_id)}.json"


RUNS_DIR = "runs"  # under campaigns/: how a campaign was run (workers), outside its immutable plan


def save_workers(home: Path, campaign_id: str, workers: int) -> None:
    """Remember the number of workers a campaign started with, for ``--resume`` (best effort)."""
    path = home / CAMPAIGNS_DIR / RUNS_DIR / f"{check_campaign_id(campaign_id)}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"workers": workers}) + "\n", encoding="utf-8")
    except OSError:
        return


def saved_workers(home: Path, campaign_id: str) -> int | None:
    """The workers a campaign started with, if it was started by a release that remembers them."""
    path = home / CAMPAIGNS_DIR / RUNS_DIR / f"{check_campaign_id(campaign_id)}.json"
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("workers")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def save_plan(home: Path, plan: CampaignPlan) -> Path:
    """Write the plan atomically (temporary file, fsync, rename); a plan once saved is never changed."""
    path = plan_path(home, plan.campaign_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as fh:
        fh.write(canonicalize(plan.to_json()))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def load_plan(home: Path, campaign_id: str) -> CampaignPlan:
    path = plan_path(home, campaign_id)
    try:
        body = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise PlanError(f"no campaign {campaign_id!r} under {home}: see 'logomesh campaign list'") from None
    except (OSError, ValueError) as exc:
        raise PlanError(f"campaign plan {path} is unreadable: {exc}") from None
    try:
        return CampaignPlan.from_json(body)
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError(f"campaign plan {path} is malformed: {exc}") from None


def list_plans(home: Path) -> list[CampaignPlan]:
    folder = home / CAMPAIGNS_DIR
    if not folder.is_dir():
        return []
    return [load_plan(home, p.stem) for p in sorted(folder.glob("*.json"))]


def resolve_tasks(spec: str) -> tuple[str, ...]:
    """``all`` or a comma list of task ids, each checked against the task library."""
    from logomesh.tasks import TaskError, all_tasks, load_task

    try:
        if spec.strip() == "all":
            return tuple(t.id for t in all_tasks())
        ids = tuple(dict.fromkeys(part.strip() for part in spec.split(",") if part.strip()))
        if not ids:
            raise PlanError("--tasks is empty: give 'all' or task ids separated by commas")
        for task_id in ids:
            load_task(task_id)
    except TaskError as exc:
        raise PlanError(str(exc)) from None
    return ids


MAX_REPEAT = 1000
MAX_BATTLES = 100_000
"""A campaign's size limits: a plan is enumerated whole (``jobs``) and kept in memory, so a typo such as a
URL pasted into the repeat field must be refused at once, not spend minutes building millions of battles."""


def check_size(agents: int, tasks: int, repeat: int) -> None:
    """``PlanError`` naming the limit when ``repeat`` or the number of battles is out of range."""
    if not 1 <= repeat <= MAX_REPEAT:
        raise PlanError(f"--repeat must be from 1 to {MAX_REPEAT}, not {repeat}")
    battles = agents * tasks * repeat
    if battles > MAX_BATTLES:
        raise PlanError(f"the campaign would run {battles:,} battles ({agents} agents x {tasks} tasks x {repeat} "
                        f"repeats), more than {MAX_BATTLES:,}: lower --repeat or choose fewer tasks or agents")


def new_plan(agents: Sequence[Agent], task_ids: Sequence[str], repeat: int, seed: int, settings: Settings,
             campaign_id: str | None = None) -> CampaignPlan:
    """A checked plan: every mock variant exists for every task, and the numbers make sense."""
    from logomesh.tasks import load_task

    check_size(len(agents), len(task_ids), repeat)
    if not 0 <= seed < SEED_LIMIT:
        raise PlanError("--seed must be an integer from 0 to 2**53 - 1 (exact in JSON)")
    for task_id in task_ids:
        names = load_task(task_id).submission_names()
        for agent in agents:
            if agent.mock_variant is not None and agent.mock_variant not in names:
                raise PlanError(f"task {task_id!r} has no mock variant {agent.mock_variant!r} "
                                f"(it has: {', '.join(names)}); choose --tasks that all have it")
    env = os.environ.get("LOGOMESH_TASKS")
    library = str(Path(env).expanduser().resolve()) if env else None
    chosen = campaign_id or default_campaign_id(agents, task_ids, repeat, seed, settings, library)
    return CampaignPlan(check_campaign_id(chosen), tuple(agents), tuple(task_ids), repeat, seed, settings, library)


def resume_library(plan: CampaignPlan, chosen: str | None) -> str | None:
    """The library to resume ``plan`` on, given the one this process was pointed at (``None``: the built-in).

    A resume runs on the plan's own library; naming another one is an error, never a silent switch.
    """
    if chosen is not None and plan.tasks_dir is None:
        raise PlanError(f"campaign {plan.campaign_id} was planned on the built-in task library: "
                        "resume it without --tasks-dir or $LOGOMESH_TASKS")
    if chosen is not None and plan.tasks_dir is not None and Path(chosen).resolve() != Path(plan.tasks_dir):
        raise PlanError(f"campaign {plan.campaign_id} was planned on the task library {plan.tasks_dir}, not "
                        f"{chosen}: resume it without --tasks-dir")
    if plan.tasks_dir is not None and not Path(plan.tasks_dir).is_dir():
        raise PlanError(f"campaign {plan.campaign_id} was planned on the task library {plan.tasks_dir}, "
                        "which is gone: restore that folder to resume it")
    return plan.tasks_dir
