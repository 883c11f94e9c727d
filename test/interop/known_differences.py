"""Disagreements with the reference SDK that the project keeps on purpose.

Each entry names a differential case (test_vectors.py) or a hub behaviour
(test_hub_*.py), the verdict apconnect gives instead of the SDK's, and the
anchor text of its section in docs/INTEROP.md, where the reason is written
for readers. An entry is a decision, not a way to silence a failure: the
test still fails when apconnect's verdict changes, and when the document
loses the section.
"""

# case id -> {"go": apconnect's verdict, "doc": anchor text in docs/INTEROP.md}
VECTOR_DIFFERENCES: dict[str, dict] = {}
