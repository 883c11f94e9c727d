// Package mail is the one statement of the Agent Mail 1.0 rules
// (agent-mail/1.0) in apconnect.
package mail
