"""Disagreements with the reference SDK that the project keeps on purpose.

Each entry names a differential case (test_vectors.py) or a hub behaviour
(test_hub_*.py), the verdict apconnect gives instead of the SDK's, and the
anchor text of its section in docs/INTEROP.md, where the reason is written
for readers. An entry is a decision, not a way to silence a failure: the
test still fails when apconnect's verdict changes, and when the document
loses the section.
"""

# case id -> {"go": apconnect's verdict, "doc": anchor text in docs/INTEROP.md}
VECTOR_DIFFERENCES: dict[str, dict] = {
    # The two SDKs disagree: Python's validate_profile_payload answers
    # invalid_actor for a payload without id, Rust's typed payload does not
    # decode (a host answers invalid_event). apconnect follows Rust, the
    # reference for wire shapes (PROTOCOL-0.12.md, "How to read this").
    "profile_payload: missing id": {"go": "invalid_event", "doc": "Profile payload without id"},
    # The two SDKs disagree: Python's urlparse finds no host in https:///x,
    # Rust's WHATWG parser reads it as https://x/. apconnect parses URLs the
    # WHATWG way too, like the Rust crate.
    "profile_payload: endpoint url https:///x [D-25]": {"go": "ok", "doc": "URLs with an empty authority"},
}

# hub case id -> {"hub": the hub's answer, "doc": anchor text in docs/INTEROP.md}
HUB_DIFFERENCES: dict[str, dict] = {
    # Host policy (PROTOCOL-0.12.md §2.7 and DECISIONS): the hub tolerates 60 s
    # of clock skew on request JWTs, the SDK's verifier none. A 0.12.6 client
    # always sends iat = now, so the leniency never refuses one.
    "jwt: iat one second ahead (D-18)": {"hub": "ok", "doc": "Request JWT clock skew"},
    "jwt: iat 30 seconds ahead (D-18)": {"hub": "ok", "doc": "Request JWT clock skew"},
    "jwt: exp one second ago (D-18)": {"hub": "ok", "doc": "Request JWT clock skew"},
}

# Cases where the Rust and Python SDKs disagree with each other: case id ->
# {"rust": the Rust verdict, "doc": anchor in docs/INTEROP.md}. The Python
# verdict stays in vectors.py; VECTOR_DIFFERENCES says when apconnect
# follows Rust instead.
SDK_DIFFERENCES: dict[str, dict] = {
    "profile_payload: missing id": {"rust": "invalid_event", "doc": "Profile payload without id"},
    "profile_payload: endpoint url https:///x [D-25]": {"rust": "ok", "doc": "URLs with an empty authority"},
}
