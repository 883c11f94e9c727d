package knowledge

import (
	"context"
	"database/sql"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/identity"
)

// Seed stores envelopes, accepted at acceptedAt in order, in dir/hub.db
// (created with the knowledge group only, the others are added when a hub
// opens it) without any check: a benchmark's bulk load of events it
// signed itself.
func Seed(ctx context.Context, dir string, envs []*identity.Envelope, acceptedAt int64) error {
	db, err := hubdb.Open(ctx, dir, Spec(Limits{}).Group())
	if err != nil {
		return err
	}
	defer db.Close()
	const batch = 2000
	for i := 0; i < len(envs); i += batch {
		err := db.Write(ctx, func(tx *sql.Tx) error {
			for _, env := range envs[i:min(i+batch, len(envs))] {
				if _, _, err := insertEvent(ctx, tx, env, acceptedAt); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
