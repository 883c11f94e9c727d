"""Agent Delegation, part 2: generated differential cases (delegation_cases.py)
through the reference SDK and through host/proto/delegation."""

from __future__ import annotations

import pytest

import delegation_cases as dc

CASES = dc.all_cases()


@pytest.fixture(scope="module")
def go():
    return dc.go_verdicts(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case, go):
    dc.check(case, go[case.id])


def test_known_differences_are_cases():
    ids = {c.id for c in CASES}
    stale = [k for k in dc.KNOWN if k not in ids]
    assert not stale, f"KNOWN names cases that no longer exist: {stale}"


def test_generated_cases_refuse_and_accept():
    """The generator is not lopsided: every kind has accepted and refused cases."""
    kinds: dict[str, set[bool]] = {}
    for c in CASES:
        kinds.setdefault(c.kind, set()).add(c.sdk_accepts())
    lopsided = [k for k, v in kinds.items() if v != {True, False}]
    assert not lopsided, f"kinds with only accepted or only refused cases: {lopsided}"
