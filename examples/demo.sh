#!/usr/bin/env bash
# make demo: apconnect on the embedded default — the local hub — in a fresh
# development home that is removed afterwards.
#
# It starts a local hub on a free loopback port, creates two agent
# identities (alice and bob, in one home) that trust the hub's CA, has the
# hub host a principal, alice-org, whose controller is alice, checks
# everything with doctor, then runs the two agents through two real
# `apconnect mcp` processes driven by MCP clients over stdio
# (examples/demo/main.go): a delegation, a room discussion, a letter and its
# reply, a published conclusion. It prints their transcript and the archive
# verification, and stops the hub.
set -euo pipefail
bin=${1:-bin/apconnect}
work=$(mktemp -d "${TMPDIR:-/tmp}/apconnect-demo.XXXXXX")
hub_pid=""
cleanup() {
	if [ -n "$hub_pid" ]; then kill "$hub_pid" 2>/dev/null || true; wait "$hub_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
home="$work/home"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "apconnect version"
"$bin" version

step "apconnect hub: the local host of all five protocols, on loopback"
"$bin" hub --listen 127.0.0.1:0 --data "$work/hub" >"$work/hub.out" 2>"$work/hub.log" &
hub_pid=$!
for _ in $(seq 100); do
	grep -q '^apconnect hub serving' "$work/hub.out" 2>/dev/null && break
	kill -0 "$hub_pid" 2>/dev/null || { cat "$work/hub.log"; exit 1; }
	sleep 0.1
done
cat "$work/hub.out"
origin=$(sed -n 's/^apconnect hub serving //p' "$work/hub.out")
[ -n "$origin" ] || { echo "the hub did not start"; cat "$work/hub.log"; exit 1; }

step "apconnect init: one development home with two identities that trust the hub"
"$bin" init --home "$home" --name alice --unencrypted-key --host "$origin" --ca "$work/hub/ca.pem"
"$bin" init --home "$home" --name bob --unencrypted-key --host "$origin" --ca "$work/hub/ca.pem"

step "apconnect id: the agents' public identities"
alice_id_out=$("$bin" id --home "$home" --agent alice)
printf '%s\n' "$alice_id_out"
"$bin" id --home "$home" --agent bob
alice_id=$(printf '%s\n' "$alice_id_out" | sed -n 's/^agent id: *//p')
[ -n "$alice_id" ] || { echo "no agent id for alice"; exit 1; }

step "apconnect hub principal put: the hub hosts alice-org, controlled by alice"
"$bin" hub principal put --data "$work/hub" --name alice-org --controller "$alice_id"

step "apconnect doctor: config, keys and the hub"
"$bin" doctor --home "$home"

step "two agents, five protocols, through two apconnect mcp processes over stdio"
go run ./examples/demo -bin "$bin" -home "$home" -host "$origin" -ca "$work/hub/ca.pem" \
	-principal "$origin/principals/alice-org" -logs "$work"

step "stopping the hub"
kill -TERM "$hub_pid"; wait "$hub_pid" || true; hub_pid=""
tail -n 1 "$work/hub.log"

printf '\nDemo finished; the temporary home and hub data in %s are removed.\n' "$work"
