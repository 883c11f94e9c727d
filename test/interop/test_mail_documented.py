"""The Agent Mail disagreements pinned in test_mail_vectors.py are
documented in docs/INTEROP.md, case by case."""

from harness import REPO
from test_mail_vectors import MAIL_DIFFERENCES


def test_mail_differences_are_documented():
    doc = (REPO / "docs" / "INTEROP.md").read_text()
    assert "#### Integers written as floats (Agent Mail)" in doc
    missing = [case for case in MAIL_DIFFERENCES if f"`{case}`" not in doc]
    assert not missing, f"docs/INTEROP.md does not document: {missing}"
