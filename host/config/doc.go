// Package config reads, checks and writes the operator configuration of
// apconnect: the file config.toml in the apconnect home, which names the
// agent identities and their key files, the allowlist of origins (ADP
// hosts and the other protocols' services) with their optional CA files and
// the capabilities granted on each, the local state settings, the loopback
// HTTP listener, the local write budgets ([limits]), the Agent Mail
// settings ([mail]), how the agent is woken ([wake]) and the WebAssembly
// plugins with their grants.
//
// The file is decoded strictly: an unknown key, a value of the wrong type
// and a syntax error are all reported with their line. Every value is then
// checked, and each problem is reported with the path of the offending entry
// (for example "hosts[1].url"; an unknown or repeated capability in a
// host's grants, and every problem in [limits], [mail] and [wake], also
// with its line). All problems are reported at once, as an *Error.
//
// Optional settings whose default is not the zero value are decoded through
// pointers, so a value written explicitly (even 0) is validated rather than
// replaced by the default. Config holds effective values, except Host.Grants
// and Limits, which hold what is written: Limits keeps each budget as a
// pointer (nil: the key is absent, the default applies) and answers the
// effective budgets through its methods (Config.Limits.MailSends()).
// Marshal writes the budgets that are set and, of [mail] and [wake], only
// what differs from the defaults, so a table the file left out stays out.
//
// A [[hosts]] entry's grants say what the agent may do on that origin and
// on no other (see package capability); Config.Grants answers the effective
// grants of any origin for an identity, and is what the connector enforces.
//
// Files: config.go (Config and its sections), load.go (strict decoding,
// defaults), validate.go (Validate, section by section), grants.go (hosts'
// grants), limits.go ([limits]), mail.go ([mail]), wake.go ([wake]),
// duration.go (duration settings), locate.go (lines of validation
// problems), errors.go (Error, Problem), save.go (Default, Marshal, Save)
// and home.go (where the home is).
//
// schemas/config.schema.json (JSON Schema draft 2020-12) describes the same
// structure for editors and other tools; a test keeps it and this package in
// agreement.
//
// Only this file says which hosts apconnect talks to, what the agent may do
// on each (Config.Grants) and which CA files it trusts for them; no tool can
// change any of it.
package config
