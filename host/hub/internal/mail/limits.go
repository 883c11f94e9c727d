package mail

import (
	"time"

	rules "apconnect/host/proto/mail"
)

// Limits are the relay's per-mailbox storage quotas and its housekeeping
// pace. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	// MaxPackets is the most live packets one mailbox holds (10 000).
	MaxPackets int `json:"max_packets"`
	// MaxBytes is the most bytes of live packets (JCS) one mailbox holds
	// (64 MiB).
	MaxBytes int64 `json:"max_bytes"`
	// PruneInterval is how often expired packets, tombstones and forgotten
	// mailboxes are dropped (one minute).
	PruneInterval time.Duration `json:"-"`
}

// DefaultLimits are the SDK relay's quotas.
func DefaultLimits() Limits {
	q := rules.DefaultQuota()
	return Limits{MaxPackets: q.MaxPackets, MaxBytes: q.MaxBytes, PruneInterval: time.Minute}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxPackets <= 0 {
		l.MaxPackets = d.MaxPackets
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.PruneInterval <= 0 {
		l.PruneInterval = d.PruneInterval
	}
	return l
}

// quota is the limits as the rules take them.
func (l Limits) quota() rules.Quota {
	return rules.Quota{MaxPackets: l.MaxPackets, MaxBytes: l.MaxBytes}
}
