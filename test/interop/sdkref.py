"""The reference SDK's verdicts, in one shape: "ok" or an error code.

Every function here calls agent-protocols 0.12.6 and only maps its answer
onto the codes a host sends on the wire (Agent Identity 8.1 plus the ADP
codes): the SDK raises a few local codes (invalid_url, invalid_jwt_claim,
missing_room_id, …) that a host reports as invalid_event or invalid_token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import jsonschema
from jsonschema.validators import Draft202012Validator
from referencing import Registry, Resource

from agent_protocols import SHARED_ERROR_CODES, AgentProtocolError
from agent_protocols.discourse import DISCOURSE_ERROR_CODES, TypeRegistry, pack_map

HERE = Path(__file__).resolve().parent
SDK_DATA = HERE / "testdata" / "sdk-0.12.6"

WIRE_CODES = frozenset(SHARED_ERROR_CODES) | frozenset(DISCOURSE_ERROR_CODES)


def verdict(fn: Callable[..., Any], *args: Any, local: str = "invalid_event", **kwargs: Any) -> str:
    """Runs an SDK check: "ok", or the wire code of its refusal. A local SDK
    code is reported as `local`, the code a host sends for it."""
    try:
        fn(*args, **kwargs)
        return "ok"
    except AgentProtocolError as err:
        return err.code if err.code in WIRE_CODES else local


def packs_document() -> dict[str, Any]:
    """The registered packs document the SDK ships."""
    return json.loads((SDK_DATA / "packs.json").read_text())


def registry(declarations: list[dict[str, Any]]) -> TypeRegistry:
    """A room registry materialized by the SDK from declarations."""
    return TypeRegistry.from_declarations(declarations, pack_map(packs_document()))


_KERNEL = json.loads((SDK_DATA / "agent-discourse-1.0.schema.json").read_text())
_PROFILE = json.loads((SDK_DATA / "agent-profile-1.0.schema.json").read_text())
_SCHEMAS = Registry().with_resources(
    [(_KERNEL["$id"], Resource.from_contents(_KERNEL)), (_PROFILE["$id"], Resource.from_contents(_PROFILE))]
)


def kernel_errors(definition: str, value: Any, schema: dict[str, Any] = _KERNEL) -> list[str]:
    """Validation errors of value against a $defs entry of the SDK's kernel
    schema (the connector validates history and responses against it)."""
    validator = Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/{definition}"}, registry=_SCHEMAS)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(value)]


def profile_errors(definition: str, value: Any) -> list[str]:
    return kernel_errors(definition, value, _PROFILE)


__all__ = ["verdict", "packs_document", "registry", "kernel_errors", "profile_errors", "WIRE_CODES", "jsonschema"]


def room_view(records: list[dict[str, Any]]) -> dict[str, Any]:
    """What the SDK's rules make of a room's records: the registry in force
    (room.create declarations, then each type.define), the head (the latest
    genesis, contract or control record: `event_advances_room_head`) and
    every record hash by seq, for anchors."""
    from agent_protocols.discourse import event_advances_room_head

    reg = TypeRegistry()
    packs = pack_map(packs_document())
    head = (0, "")
    hashes: dict[int, str] = {}
    for rec in records:
        env = rec["envelope"]
        typ = env["type"] if env.get("redacted") else env["event"]["type"]
        if not env.get("redacted"):
            payload = env["event"]["payload"]
            if typ == "room.create":
                reg = TypeRegistry.from_declarations(payload.get("types", []), packs)
            elif typ == "type.define":
                reg.apply(payload, packs)
        if event_advances_room_head(typ, reg):
            head = (rec["seq"], rec["hash"])
        hashes[rec["seq"]] = rec["hash"]
    return {"registry": reg, "head": head, "hashes": hashes, "last": (records[-1]["seq"], records[-1]["hash"])}


def base_verdict(view: dict[str, Any], typ: str, base: tuple[int, str]) -> str:
    """The SDK host-side base check (`validate_room_base`) for a write of
    typ on base in a room the view describes."""
    from agent_protocols.discourse import validate_room_base

    return verdict(validate_room_base, typ, view["registry"], base[0], base[1],
                   view["hashes"].get(base[0]), view["head"][0])
