#!/usr/bin/env bash
# Add apconnect to Claude Code (https://docs.claude.com/en/docs/claude-code/mcp).
# Replace the home with yours; --agent picks the identity (default: the
# config's default identity). --scope user makes it available in every project.
set -euo pipefail
home="$HOME/.config/apconnect"

# stdio (recommended): Claude Code starts `apconnect mcp` itself.
claude mcp add --scope user apconnect -- apconnect mcp --home "$home" --agent default

# Or, with `apconnect serve` already running, over loopback HTTP with the
# bearer token of the home's token file:
# claude mcp add --scope user --transport http apconnect http://127.0.0.1:8765/mcp \
#     --header "Authorization: Bearer $(cat "$home/http.token")"
