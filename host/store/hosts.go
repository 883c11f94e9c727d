package store

import "context"

// HostInfo is the cached discovery of a configured host.
type HostInfo struct {
	Host      string
	Discovery []byte // the discovery document JSON
	CheckedAt int64
}

// PutHost caches a host's discovery document read at checkedAt.
func (t *Tx) PutHost(ctx context.Context, h HostInfo) error {
	_, err := t.exec(ctx, `INSERT INTO hosts (host, discovery, checked_at) VALUES (?, ?, ?)
		ON CONFLICT (host) DO UPDATE SET discovery = excluded.discovery, checked_at = excluded.checked_at`, h.Host, h.Discovery, h.CheckedAt)
	return err
}

// Host returns the cached discovery of a host, or ErrNotFound.
func (q Q) Host(ctx context.Context, host string) (*HostInfo, error) {
	h := HostInfo{Host: host}
	if err := q.queryRow(ctx, `SELECT discovery, checked_at FROM hosts WHERE host = ?`, host).Scan(&h.Discovery, &h.CheckedAt); err != nil {
		return nil, notFound(err)
	}
	return &h, nil
}
