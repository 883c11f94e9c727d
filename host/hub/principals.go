package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"apconnect/host/hub/internal/delegation"
	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubsvc"
)

// Principal is a principal the hub hosts at {origin}/principals/{name}
// (Agent Delegation principal hosting): its name, the URL it is served at
// ("" until a hub has started on the data directory and recorded its
// origin) and its document as served.
type Principal = delegation.Principal

// PutPrincipal stores principal name's document as written (a JSON object:
// controllers, retired controllers, aliases, descriptive members) in the
// hub's data directory dataDir; the hub sets id, protocol,
// delegation_service and updated_at. It works on a stopped hub's directory
// or beside a running hub, which serves the new document at once; a
// missing directory is created.
func PutPrincipal(ctx context.Context, dataDir, name string, written map[string]any) (*Principal, error) {
	return withDB(ctx, dataDir, true, func(db *hubdb.DB) (*Principal, error) {
		return delegation.PutDocument(ctx, db, name, written, time.Now().UnixMilli())
	})
}

// AddPrincipalControllers adds unrestricted delegating controllers, valid
// from now, to principal name (created when it does not exist), and returns
// the principal and the keys it added (one that is a current controller
// already is left as it is).
func AddPrincipalControllers(ctx context.Context, dataDir, name string, ids []string) (*Principal, []string, error) {
	var added []string
	p, err := withDB(ctx, dataDir, true, func(db *hubdb.DB) (*Principal, error) {
		p, a, err := delegation.AddControllers(ctx, db, name, ids, time.Now().UnixMilli())
		added = a
		return p, err
	})
	return p, added, err
}

// RetirePrincipalController moves a current controller of principal name
// to its retired controllers, retired now.
func RetirePrincipalController(ctx context.Context, dataDir, name, id string) (*Principal, error) {
	return withDB(ctx, dataDir, false, func(db *hubdb.DB) (*Principal, error) {
		return delegation.RetireController(ctx, db, name, id, time.Now().UnixMilli())
	})
}

// ListPrincipals lists the principals hosted in dataDir, by name.
func ListPrincipals(ctx context.Context, dataDir string) ([]*Principal, error) {
	var out []*Principal
	_, err := withDB(ctx, dataDir, false, func(db *hubdb.DB) (*Principal, error) {
		var err error
		out, err = delegation.ListPrincipals(ctx, db.Reader())
		return nil, err
	})
	return out, err
}

// withDB opens the hub database of dataDir for fn, as Redact does. With
// create, a missing data directory and database are created (a hub started
// on the directory later serves what was put); otherwise they must exist.
func withDB(ctx context.Context, dataDir string, create bool, fn func(db *hubdb.DB) (*Principal, error)) (*Principal, error) {
	if create {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("hub data directory: %w", err)
		}
	} else if _, err := os.Stat(filepath.Join(dataDir, hubdb.FileName)); err != nil {
		return nil, fmt.Errorf("no hub database in %s: %w", dataDir, err)
	}
	db, err := hubdb.Open(ctx, dataDir, hubsvc.Groups(services(Options{NoExternalPacks: true}))...)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return fn(db)
}
