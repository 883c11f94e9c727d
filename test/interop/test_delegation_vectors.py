"""Agent Delegation, part 1: the ported vector file
(host/proto/delegation/testdata/1.0.vectors.json, see SOURCE.md there).
Each case must give the outcome the file states under the reference SDK,
which is what makes it a faithful port, and the same verdict through
host/proto/delegation."""

from __future__ import annotations

import pytest

import delegation_cases as dc

CASES = dc.vector_cases()


@pytest.fixture(scope="module")
def go():
    return dc.go_verdicts(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_vector(case, go):
    # The file's own outcome under the SDK.
    if case.note in ("valid", "invalid"):
        assert (case.sdk == "ok") == (case.note == "valid"), f"the SDK says {case.sdk}"
    else:
        assert case.sdk == case.note, f"the file expects {case.note}, the SDK says {case.sdk}"
    dc.check(case, go[case.id])


def test_port_dropped_lineage():
    """The port carries none of the drafts' lineage members."""
    text = (dc.REPO / "host/proto/delegation/testdata/1.0.vectors.json").read_text()
    for member in ("supersedes", "owner_controller", "not_owner_controller", "delegation_query_url"):
        assert member not in text, member
