package config

import (
	"fmt"
	"slices"
	"time"

	"apconnect/host/identity"
)

// Bounds and default of [mail] sync_interval.
const (
	// DefaultMailSyncInterval is how often mailboxes are synced by default.
	DefaultMailSyncInterval = time.Minute
	// MinMailSyncInterval is the shortest accepted sync_interval.
	MinMailSyncInterval = 5 * time.Second
	// MaxMailSyncInterval is the longest accepted sync_interval.
	MaxMailSyncInterval = 24 * time.Hour
)

// AgentIDPattern is the syntax of a canonical Agent ID: "did:agent:" and
// 43 base64url characters encoding 32 bytes (the last one carries no
// stray bits). identity.ValidAgentID is the check; the schema uses this
// pattern.
const AgentIDPattern = `^did:agent:[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$`

// Mail configures Agent Mail ([mail]) for every identity of the home.
// Load fills in the defaults, so the fields hold effective values.
type Mail struct {
	// BlockedSenders are the Agent IDs whose letters are dropped for every
	// identity of the home: canonical Agent IDs, each listed once. Never
	// nil after Load or Default.
	BlockedSenders []string `toml:"blocked_senders"`
	// SyncInterval is how often mailboxes are synced, from
	// MinMailSyncInterval to MaxMailSyncInterval. Default
	// DefaultMailSyncInterval.
	SyncInterval time.Duration `toml:"sync_interval"`
}

// DefaultMail returns the [mail] settings of a file without the table.
func DefaultMail() Mail {
	return Mail{BlockedSenders: []string{}, SyncInterval: DefaultMailSyncInterval}
}

// Blocked reports whether agentID is one of the blocked senders. Agent IDs
// are compared exactly, as their canonical form is unique.
func (m Mail) Blocked(agentID string) bool {
	return slices.Contains(m.BlockedSenders, agentID)
}

// fileMail is [mail] as decoded.
type fileMail struct {
	BlockedSenders []string `toml:"blocked_senders"`
	SyncInterval   *string  `toml:"sync_interval"`
}

// effective returns the effective [mail] settings of the table (nil when
// absent), with a problem for a sync_interval that is not a duration.
func (fm *fileMail) effective(ps *problems) Mail {
	m := DefaultMail()
	if fm == nil {
		return m
	}
	m.BlockedSenders = append(m.BlockedSenders, fm.BlockedSenders...)
	if fm.SyncInterval != nil {
		m.SyncInterval = parseDuration(ps, "mail.sync_interval", *fm.SyncInterval, DefaultMailSyncInterval)
	}
	return m
}

// validateMail checks [mail]: canonical, distinct Agent IDs and a sync
// interval within bounds.
func (c *Config) validateMail(ps *problems) {
	first := map[string]int{}
	for i, id := range c.Mail.BlockedSenders {
		f := fmt.Sprintf("mail.blocked_senders[%d]", i)
		if _, err := identity.ParseAgentID(id); err != nil {
			ps.add(f, "not a canonical Agent ID (did:agent: and 43 base64url characters): %v", err)
			continue
		}
		if k, dup := first[id]; dup {
			ps.add(f, "%q is already listed as blocked_senders[%d]", id, k)
			continue
		}
		first[id] = i
	}
	checkDuration(ps, "mail.sync_interval", c.Mail.SyncInterval, MinMailSyncInterval, MaxMailSyncInterval)
}

// encodedMail is [mail] as Marshal writes it: only what differs from the
// defaults, so an absent table stays absent.
type encodedMail struct {
	BlockedSenders []string `toml:"blocked_senders,omitempty"`
	SyncInterval   string   `toml:"sync_interval,omitempty"`
}

func (m Mail) encoded() *encodedMail {
	e := &encodedMail{BlockedSenders: m.BlockedSenders}
	if m.SyncInterval != DefaultMailSyncInterval {
		e.SyncInterval = formatDuration(m.SyncInterval)
	}
	if len(e.BlockedSenders) == 0 && e.SyncInterval == "" {
		return nil
	}
	return e
}
