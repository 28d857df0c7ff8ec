"""Send an injected task to a purple agent over A2A: the attempt's messages, in order, in one context."""

from __future__ import annotations

from logomesh.cancel import CancelToken
from logomesh.inject.grammar import Injected
from logomesh.purple.a2a_request import DEADLINE_KEY, Protocol, RpcCall, parts_call
from logomesh.purple.client import ExchangeSettings, request_with_calls
from logomesh.purple.exchange import PurpleExchange
from logomesh.tasks import TaskSpec

DEFAULT_SETTINGS = ExchangeSettings()


def injected_calls(injected: Injected, task: TaskSpec, battle_id: str, settings: ExchangeSettings,
                   protocol: Protocol) -> list[RpcCall]:
    """The JSON-RPC calls of ``injected`` for ``protocol``: one per message, each with the task's metadata."""
    metadata = {"battle_id": battle_id, "task_id": task.id, DEADLINE_KEY: f"{settings.total_timeout_s:g}"}
    return [parts_call(protocol, message.parts, battle_id, metadata, stream=settings.stream, number=number)
            for number, message in enumerate(injected.messages)]


def ask_purple(url: str, task: TaskSpec, injected: Injected, battle_id: str,
               settings: ExchangeSettings = DEFAULT_SETTINGS,
               cancel: CancelToken = CancelToken.never()) -> PurpleExchange:
    """The purple agent's answer to ``injected`` (the last message's); raises ``PurpleError`` as the client does."""
    return request_with_calls(url, lambda protocol: injected_calls(injected, task, battle_id, settings, protocol),
                              battle_id, settings, cancel)
