package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"
)

// DefaultTimeout bounds every request that has no deadline of its own.
const DefaultTimeout = 15 * time.Second

// ErrRedirect is returned when a service answers with a redirect: a
// connector never follows one, because the next origin was not configured.
var ErrRedirect = errors.New("service answered with a redirect; apconnect follows none (configure the final https origin instead)")

// NewHTTPClient returns an HTTPS-only client for one configured origin. roots
// replaces the system trust roots when non-nil (a host's ca_file).
func NewHTTPClient(roots *x509.CertPool, timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   16,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: httpsOnly{tr},
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return ErrRedirect
		},
	}
}

// httpsOnly refuses to send anything over plain HTTP.
type httpsOnly struct{ next http.RoundTripper }

// RoundTrip sends r when its scheme is https and refuses it otherwise.
func (h httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		return nil, errors.New("refusing a non-https request to " + r.URL.Redacted())
	}
	return h.next.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the wrapped
// transport; without it http.Client.CloseIdleConnections would not reach
// them.
func (h httpsOnly) CloseIdleConnections() {
	if c, ok := h.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
