"""Validate a practical subset of e-mail addresses in linear time.

Each part is checked by splitting on fixed separators and matching every
piece against a regular expression with no nested or adjacent overlapping
quantifiers, so there is nothing to backtrack over.
"""

from __future__ import annotations

import re

_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_TLD = re.compile(r"[A-Za-z]{2,63}")

MAX_LOCAL = 64
MAX_DOMAIN = 255


def is_valid_email(address: object) -> bool:
    if not isinstance(address, str) or address.count("@") != 1:
        return False
    local, domain = address.split("@")
    return _valid_local(local) and _valid_domain(domain)


def _valid_local(local: str) -> bool:
    if not 1 <= len(local) <= MAX_LOCAL:
        return False
    return all(_ATOM.fullmatch(atom) for atom in local.split("."))


def _valid_domain(domain: str) -> bool:
    if not 1 <= len(domain) <= MAX_DOMAIN:
        return False
    labels = domain.split(".")
    if len(labels) < 2:
        return False
    return all(_LABEL.fullmatch(label) for label in labels) and _TLD.fullmatch(labels[-1]) is not None
