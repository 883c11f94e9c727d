package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"apconnect/host/hub/internal/discourse"
	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubsvc"
)

// Redaction reports what Redact did.
type Redaction = discourse.Redaction

// Redact replaces the stored envelope of one record of a room with its
// redacted envelope (ADP 14.1) in the hub's data directory dataDir, which
// must hold a hub database; see discourse.Redact for what changes and what
// stays valid. It works on a stopped hub's directory or beside a running
// hub.
func Redact(ctx context.Context, dataDir, roomID string, seq int64) (*Redaction, error) {
	if _, err := os.Stat(filepath.Join(dataDir, hubdb.FileName)); err != nil {
		return nil, fmt.Errorf("no hub database in %s: %w", dataDir, err)
	}
	db, err := hubdb.Open(ctx, dataDir, hubsvc.Groups(services(Options{NoExternalPacks: true}))...)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return discourse.Redact(ctx, db, roomID, seq)
}
