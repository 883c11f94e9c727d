package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"apconnect/host/identity"
)

// get runs an authenticated-when-possible (or anonymous) GET with the read
// retry policy.
func (h *Host) get(ctx context.Context, u string, q url.Values, auth authMode, maxBytes int64) (*response, error) {
	return h.svc.do(ctx, call{method: http.MethodGet, url: u, query: q, auth: auth, signer: h.signer, maxBytes: maxBytes})
}

// postEnvelope runs a write: the envelope POSTed once, never retried.
func (s *service) postEnvelope(ctx context.Context, u string, env *identity.Envelope, maxBytes int64) (*response, error) {
	if env == nil {
		return nil, errNilEnvelope
	}
	body, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	return s.do(ctx, call{method: http.MethodPost, url: u, body: body, auth: authNone, write: true, maxBytes: maxBytes})
}

// bad wraps what is wrong with a response the service did send.
func bad(method, u string, status int, err error) *ResponseError {
	path := u
	if p, perr := url.Parse(u); perr == nil {
		path = p.Path
	}
	return &ResponseError{Method: method, Path: path, Status: status, Err: err}
}

// setInt adds a positive integer query parameter.
func setInt(q url.Values, key string, v int64) {
	if v > 0 {
		q.Set(key, itoa64(v))
	}
}

// setStr adds a non-empty query parameter.
func setStr(q url.Values, key, v string) {
	if v != "" {
		q.Set(key, v)
	}
}
