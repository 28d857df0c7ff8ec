"""Sandboxes whose owner was SIGKILLed are swept; those of a live owner are left alone."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from logomesh.sandbox.docker import OWNER_LABEL, docker_client, remove_orphans
from logomesh.sandbox.image import image_tag

pytestmark = pytest.mark.docker


def test_created_containers_of_dead_owners_are_removed_and_live_ones_kept() -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    client = docker_client()
    host = socket.gethostname()
    try:
        orphan = client.containers.create(image_tag(), command=["true"], network_mode="none",
                                          labels={"logomesh.sandbox": "1", OWNER_LABEL: f"{host}:{dead_pid}"})
        kept = client.containers.create(image_tag(), command=["true"], network_mode="none",
                                        labels={"logomesh.sandbox": "1", OWNER_LABEL: f"{host}:{1}"})
        try:
            assert remove_orphans() >= 1
            ids = {c.id for c in client.containers.list(all=True, filters={"label": "logomesh.sandbox=1"})}
            assert orphan.id not in ids and kept.id in ids
        finally:
            kept.remove(force=True)
    finally:
        client.close()
