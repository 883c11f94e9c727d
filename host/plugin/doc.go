// Package plugin runs apconnect's sandboxed WebAssembly plugins: modules that
// validate custom event types before signing, turn verified records into
// inbox items, add MCP tools and provide type packs, and that can never reach
// a key, a nonce, a request JWT, a file, the network, the environment or a
// real clock. docs/PLUGINS.md describes the ABI; schemas/plugin holds the
// JSON Schema of every envelope.
//
// # Loading
//
// A Runtime loads plugins: Load checks the file against the SHA-256 digest
// pinned in the config, compiles it (through an optional on-disk cache),
// instantiates it, asks it to describe itself and refuses, with an *Error
// naming the item, anything beyond its Grants or the ABI rules. Each plugin
// gets its own wazero runtime with a memory cap, a small instance pool and a
// bounded ring log of its stdout, stderr and log import; instances have no
// arguments, environment, files or sockets, fake clocks and deterministic
// randomness. Time reaches a plugin only as now_ms in its input.
//
// # Calls
//
// Every operation is one call of the guest's apconnect_call export with a
// JSON envelope in and one out. The host checks the input against its
// schema (watch batches only with Options.CheckWatchInputs), bounds it, runs
// the call under the operation's deadline (the module is closed when it
// passes), bounds the output before copying it, parses it strictly,
// bounds its depth, validates it against its schema and the content policy
// (no UI, HTML, resources, _meta or credential-shaped data), and returns
// plain Go values. An instance that traps, panics, runs out of memory, times
// out or breaks the ABI is closed; the next call gets a fresh one.
//
// # Integration
//
// A *Plugin is a Validator, a Watcher, a ToolProvider and a PackProvider;
// a Registry holds the loaded plugins and dispatches by event type, tool
// name and pack ID. The write path calls Registry.ValidateEvent before
// signing (refusals become invalid_event with data.errors; an error refuses
// writes of that type only: fail closed), sync calls Registry.Watch with each
// verified page (a failing watcher is skipped and reported), the MCP server
// lists Registry.Tools and routes calls to Registry.CallTool, and
// room_create/type.define expand Registry.Pack results. Plugin.Health and
// LoadFailure feed doctor and identity_current.
//
// The room contexts of validate and tool calls carry the records of the
// plugins' record scope: the newest records of the types each plugin
// validates or watches and, for validate, the records the proposal names
// by event ID (Registry.ValidateScope, Registry.ToolScope). FillRecords
// fills them from a RecordLookup over the verified store and sets
// RecordsTruncated when the context may miss records of the scope.
//
// # Cost model
//
// Deadlines are enforced by the checkpoints wasmguard puts at every
// function entry and loop iteration of the guest (stop.go): a few
// instructions each, a return to Go every thousand, and a trap once the
// host stops the instance. (wazero's WithCloseOnContextDone, used before,
// called into Go at every loop header, about 30 ns each; every branch of a
// Go guest paid it.) The guest SDKs' decoders avoid branchy code
// (encoding/json, fmt) on hot paths all the same.
package plugin
