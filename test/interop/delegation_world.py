"""What the Agent Delegation interop tests share (test_delegation_*.py and
rust/test_delegation.py): principals hosted by a real `apconnect hub`
(through the `apconnect hub principal` commands), and SDK agents that sign
grants and revocations with the reference Python SDK and submit them with
its DelegationClient. Nothing here decides a verdict."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agent_protocols import unix_ms
from agent_protocols.delegation import delegation_grant_event, delegation_revoke_event
from agent_protocols.http_client import DelegationClient, HttpResponseError

from harness import Hub, SdkAgent, apconnect_bin


def hub_principal(hub: Hub, *args: str) -> str:
    """Runs `apconnect hub principal ARGS --data DIR` (the real binary)."""
    proc = subprocess.run([str(apconnect_bin()), "hub", "principal", *args, "--data", str(hub.data)],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"apconnect hub principal {' '.join(args)}: {proc.returncode}\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def put_controllers(hub: Hub, name: str, *controllers: str) -> str:
    """Hosts principal NAME with unrestricted controllers; returns its URL."""
    args = ["put", "--name", name]
    for c in controllers:
        args += ["--controller", c]
    out = hub_principal(hub, *args)
    url = f"{hub.origin}/principals/{name}"
    assert f"served at {url}" in out, out
    return url


def put_document(hub: Hub, name: str, doc: dict[str, Any], tmp: Path) -> str:
    """Hosts principal NAME with a document as written; returns its URL."""
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(doc))
    hub_principal(hub, "put", "--name", name, "--file", str(path))
    return f"{hub.origin}/principals/{name}"


class Controller:
    """An SDK agent that signs Delegation events and submits them with the
    SDK's DelegationClient (discovered at the hub), re-signing once after a
    Max-Seen-Nonce resync as the SDK's connector does."""

    def __init__(self, agent: SdkAgent):
        self.agent = agent
        self.id = agent.id
        self.client = DelegationClient.discover(agent.hub.origin, agent.session)

    def grant_event(self, payload: dict[str, Any], created_at: int | None = None, nonce: int | None = None) -> dict[str, Any]:
        created = unix_ms() if created_at is None else created_at
        n = self.agent.nonces.next_nonce(created) if nonce is None else nonce
        return delegation_grant_event(self.id, created, n, payload)

    def revoke_event(self, payload: dict[str, Any]) -> dict[str, Any]:
        created = unix_ms()
        return delegation_revoke_event(self.id, created, self.agent.nonces.next_nonce(created), payload)

    def submit(self, build) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.agent._submit(self.client.submit_delegation_event, build)

    def grant(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.submit(lambda: self.grant_event(payload))

    def revoke(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.submit(lambda: self.revoke_event(payload))


def previous(client: DelegationClient, delegation_id: str) -> dict[str, Any] | None:
    """The credential a service holds under an id, None for 404."""
    try:
        return client.delegation(delegation_id)
    except HttpResponseError as err:
        if err.status == 404:
            return None
        raise


def without_checked_at(credential: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in credential.items() if k != "checked_at"}
