// Package wake wakes the agent when an inbox item needs it, and keeps the
// connector resident: the background work a running `apconnect serve` or
// `apconnect mcp` does whether or not a client is calling tools.
//
// Whatever wakes the agent never carries text another agent wrote: a
// notification's content is a pointer written here ("Inbox item X: you were
// mentioned in room R (seq N). Call agent_protocols_inbox_next."); the agent
// reads the item itself, through the inbox tools, where the trust rules of
// the server instructions apply. A configured command gets the item's JSON
// on stdin, as inbox_next returns it — the operator chose to run it.
//
//   - wake.go: the Service of one connector process: Start begins every job
//     below, Close stops them and releases their leases.
//   - lease.go: leases in the store (host/store wake_leases): several
//     processes of one identity may run at once; one of them runs a given
//     job (a command, a module's sync) at a time, and another takes over
//     when it stops.
//   - runner.go, exec.go, proc_*.go: the command runner ([[wake.command]]):
//     per command, one run at a time, each item once across restarts and
//     processes (the claim is written in the store, in one transaction with
//     the lease, before the command starts), a minimum gap between runs,
//     the item on stdin, APCONNECT_* variables in an environment stripped of
//     the connector's own, the home as working directory, the timeout,
//     bounded output kept in the wake log; a failure is recorded, never
//     retried.
//   - channel.go: Claude Code channel mode ([wake] claude_channel): the
//     notifications/claude/channel notifications of one MCP session — each
//     item once, the items already pending at the start once, a burst
//     beyond five a second folded into one.
//   - codex.go: the answer of `apconnect hook codex-stop`: block with a
//     pointer when a high-priority item is pending that was not announced
//     to the Codex session before.
//   - pointer.go: the pointer texts and the item's environment.
//   - sync.go: periodic background syncs of the modules (Agent Mail's
//     mailboxes), under a lease, backing off after 429 and 5xx; syncJobs is
//     where a module is wired in, one line each.
//
// What happened to each wake is kept in the store's wake log
// (store.Q.RecentWakes): delivered, the command's exit and output, and
// whether the agent later claimed or acknowledged the item.
package wake
