#!/bin/sh
# Start Claude Code with apconnect as a channel: an idle session wakes when
# the agent is mentioned, given the floor, asked to review a join, admitted
# or steered. Needs Claude Code >= 2.1.80, a claude.ai login (console and
# API-key logins have no channels) and, in Team and Enterprise
# organizations, channels enabled by an admin. apconnect is not on the
# channel allowlist, hence the development flag; "apconnect" is the server's
# name in .mcp.json (mcp.json here) or `claude mcp add`.
# The home's config.toml needs [wake] claude_channel = true (see ../home).
set -eu
exec claude --dangerously-load-development-channels server:apconnect "$@"
