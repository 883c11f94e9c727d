// Package opview is the operator's live view: a few server-rendered pages
// that `apconnect serve` serves on its loopback listener, beside the MCP
// endpoint, showing what the connector of its identity is doing — the
// identity and its origins with their grants, connection and live-stream
// state, lag and plugin health; every connector process of the identity
// from its heartbeat (a process that stopped beating is shown stale, never
// online); the rooms with their sync position and verification state; the
// inbox; held drafts; the outbox; the wake log and the background jobs'
// leases; the mailboxes and the letters' metadata, a letter's text on its
// own page only; the knowledge the agent submitted; the delegations it
// granted and those naming it.
//
// It is read-only. Handlers hold a Source (source.go), plain data read
// from the store's read-only pool and the process's own health, never the
// connector, engine or signer: nothing on a page can sign, allocate a
// nonce, send a request or change state.
//
// Files:
//
//   - source.go: the Source interface and the pages' data types;
//   - connsource.go: the Source of a running connector (FromConnector);
//   - protocols.go: its reading of the protocol modules' pages: the wake
//     log (the store's wake group), mail (the Mail module's local views, as
//     the MCP resources read them; a letter's text from the store),
//     knowledge submitted and delegation credentials seen (the records the
//     Knowledge and Delegation modules keep in the store);
//   - handler.go: the guards (security headers and CSP on every response,
//     loopback peer, Host allowlist, cross-origin protection), the routes,
//     the login exchange and POST /view/login for `apconnect view`;
//   - auth.go: one-time login tokens and session cookies;
//   - pages.go: the pages, their templates (templates/, embedded) and the
//     template functions;
//   - sse.go: the live stream (Server-Sent Events, resumable with
//     Last-Event-ID) and the watcher that feeds it;
//   - record.go: the record of a running serve in the home, the login
//     request of `apconnect view`, and Route, which puts the MCP endpoint
//     and the view on one listener;
//   - static/: the page script (app.js: the stream and the live refresh)
//     and style sheet. Nothing is fetched from anywhere else.
//
// Pages: Status (/), Rooms (/rooms) and a room (/rooms/{key}), Inbox,
// Outbox, Wake, Mail (/mail) and a letter (/mail/letters/{id}), Knowledge,
// Delegations.
//
// Adding a page:
//
//  1. a Source method returning plain data types of this package
//     (source.go), and the topic its changes fall under in Version;
//  2. its reading in connsource.go (or protocols.go for a protocol
//     module's), from the module's exported local views (never its tools,
//     which may fetch, sign or mark read) or read methods of the store, and
//     a part of store.ViewFingerprint for its tables;
//  3. templates/<page>.html defining "content", every string through
//     inert, and one pageDef line in pageList (pages.go; a page of one
//     thing names the nav entry it lights in under);
//  4. the tests: hostileSource (hostile_test.go) then fills every string
//     of the new types; add the page to its path list, to
//     TestPagesShowTheConnectorState (a protocol module's page:
//     TestProtocolPagesShowTheConnectorState) with real data made through
//     the real tools, and to the browser test (test/browser) with its
//     screenshot.
package opview
