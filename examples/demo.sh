#!/usr/bin/env bash
# make demo: apconnect on the embedded default, in a fresh development home.
#
# Today it shows what exists: a new home with an agent identity, the
# identity's Agent ID, and doctor's checks. It grows with the project (the
# local hub, then a two-agent discussion over real MCP processes).
set -euo pipefail
bin=${1:-bin/apconnect}
work=$(mktemp -d "${TMPDIR:-/tmp}/apconnect-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
home="$work/home"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "apconnect version"
"$bin" version

step "apconnect init: a fresh development home with a new agent key"
"$bin" init --home "$home" --name demo --unencrypted-key

step "apconnect id: the agent's public identity"
"$bin" id --home "$home"

step "apconnect doctor: config, key and hosts"
"$bin" doctor --home "$home"

printf '\nDemo finished; the temporary home %s is removed.\n' "$home"
