"""Fixtures of the interop suite: a real hub per test module, SDK agents and
apconnect homes per test."""

from __future__ import annotations

import itertools

import pytest

from harness import Apconnect, Hub, SdkAgent


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    h = Hub(tmp_path_factory.mktemp("hub"))
    yield h
    h.stop()
    log = h.log()
    assert "panic" not in log, log


_names = itertools.count()


@pytest.fixture
def sdk(hub):
    """A factory of SDK agents on the module's hub."""

    def make(name: str | None = None) -> SdkAgent:
        return SdkAgent(hub, name or f"sdk{next(_names)}")

    return make


@pytest.fixture
def apc(hub, tmp_path):
    """A factory of apconnect identities, each in its own home."""

    def make(name: str = "default") -> Apconnect:
        return Apconnect(tmp_path / f"home-{name}-{next(_names)}", hub, name)

    return make
