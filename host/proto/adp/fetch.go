package adp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"apconnect/host/text"
)

// HTTPSPackFetcher resolves external packs over HTTPS (12.5): HTTPS at every
// hop, redirects only within the pack URL's origin, a bounded document size
// and fetch time, and — unless AllowPrivateAddresses — no connection to
// loopback, private, link-local or otherwise non-public addresses (checked on
// the address actually dialed, so DNS rebinding cannot slip past). The zero
// value is ready to use; it is safe for concurrent use. Digest verification
// is done by the caller of ResolvePack (Rules), never skipped.
type HTTPSPackFetcher struct {
	// Client, when set, is used for requests (for example with a test CA).
	// Its redirect policy is replaced by this fetcher's, and when private
	// addresses are refused and its Transport is an *http.Transport (or nil),
	// the transport is cloned with a guarded dialer.
	Client *http.Client
	// MaxSize bounds the document; 0 means 256 KiB.
	MaxSize int64
	// Timeout bounds one fetch including redirects; 0 means 10 seconds.
	Timeout time.Duration
	// MaxRedirects bounds redirect hops; 0 means 3.
	MaxRedirects int
	// AllowPrivateAddresses permits loopback and private addresses, for
	// tests and local development only.
	AllowPrivateAddresses bool

	once   sync.Once
	client *http.Client
}

// Defaults of HTTPSPackFetcher.
const (
	DefaultPackFetchTimeout = 10 * time.Second
	DefaultPackMaxSize      = 256 << 10
)

// ResolvePack fetches the pack document at ref.URL and returns its raw bytes.
// Every failure is pack_unavailable.
func (f *HTTPSPackFetcher) ResolvePack(ctx context.Context, ref PackRef) ([]byte, error) {
	u, err := url.Parse(ref.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return nil, newError(CodePackUnavailable, "", "pack URL %q must be an absolute https URL without user info", text.Truncate(ref.URL, 200))
	}
	client, err := f.httpClient(u)
	if err != nil {
		return nil, err
	}
	if !f.AllowPrivateAddresses {
		if err := checkPackHost(ctx, u.Hostname(), f.guardedTransport()); err != nil {
			return nil, err
		}
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultPackFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, newError(CodePackUnavailable, "", "cannot build the pack request: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, &Error{Code: CodePackUnavailable, Message: fmt.Sprintf("fetching pack %s: %v", text.Truncate(ref.URL, 200), err), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, newError(CodePackUnavailable, "", "fetching pack %s: HTTP status %d", text.Truncate(ref.URL, 200), resp.StatusCode)
	}
	max := f.MaxSize
	if max <= 0 {
		max = DefaultPackMaxSize
	}
	if resp.ContentLength > max {
		return nil, newError(CodePackUnavailable, "", "pack document is %d bytes; at most %d are allowed", resp.ContentLength, max)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, &Error{Code: CodePackUnavailable, Message: fmt.Sprintf("reading pack %s: %v", text.Truncate(ref.URL, 200), err), Err: err}
	}
	if int64(len(body)) > max {
		return nil, newError(CodePackUnavailable, "", "pack document exceeds %d bytes", max)
	}
	// The transport may deliver a response that raced the deadline (a
	// starved goroutine sees both ready); the timeout is the fetch's bound,
	// so a document that arrived past it is refused like one that did not.
	if err := ctx.Err(); err != nil {
		return nil, &Error{Code: CodePackUnavailable, Message: fmt.Sprintf("fetching pack %s: %v", text.Truncate(ref.URL, 200), err), Err: err}
	}
	return body, nil
}

// guardedTransport reports whether this fetcher's transport checks dialed
// addresses itself.
func (f *HTTPSPackFetcher) guardedTransport() bool {
	if f.AllowPrivateAddresses {
		return false
	}
	if f.Client == nil {
		return true
	}
	_, ok := f.Client.Transport.(*http.Transport)
	return ok || f.Client.Transport == nil
}

// httpClient returns the client for one fetch, with the redirect policy for
// u's origin.
func (f *HTTPSPackFetcher) httpClient(u *url.URL) (*http.Client, error) {
	f.once.Do(func() {
		base := f.Client
		if base == nil {
			base = &http.Client{}
		}
		c := *base
		if !f.AllowPrivateAddresses {
			var tr *http.Transport
			switch t := c.Transport.(type) {
			case nil:
				tr = http.DefaultTransport.(*http.Transport).Clone()
			case *http.Transport:
				tr = t.Clone()
			}
			if tr != nil {
				tr.Proxy = nil // a proxy would dial on our behalf, past the guard
				tr.DialContext = (&net.Dialer{Timeout: DefaultPackFetchTimeout, Control: guardDial}).DialContext
				c.Transport = tr
			}
		}
		f.client = &c
	})
	c := *f.client
	maxHops := f.MaxRedirects
	if maxHops <= 0 {
		maxHops = 3
	}
	origin := u.Scheme + "://" + u.Host
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxHops {
			return fmt.Errorf("more than %d redirects", maxHops)
		}
		if req.URL.Scheme != "https" {
			return errors.New("redirect to a non-https URL refused")
		}
		if req.URL.Scheme+"://"+req.URL.Host != origin {
			return fmt.Errorf("redirect to another origin (%s) refused", text.Truncate(req.URL.Host, 100))
		}
		return nil
	}
	return &c, nil
}

// checkPackHost refuses a literal non-public address, and, when the
// transport cannot guard its dials, any host name resolving to one.
func checkPackHost(ctx context.Context, host string, guarded bool) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !publicAddr(ip) {
			return newError(CodePackUnavailable, "", "pack host %s is not a public address", host)
		}
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return newError(CodePackUnavailable, "", "pack host %s is not a public address", text.Truncate(host, 100))
	}
	if guarded {
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return &Error{Code: CodePackUnavailable, Message: fmt.Sprintf("resolving pack host %s: %v", text.Truncate(host, 100), err), Err: err}
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			return newError(CodePackUnavailable, "", "pack host %s resolves to non-public address %s", text.Truncate(host, 100), a)
		}
	}
	return nil
}

// guardDial refuses connections to non-public addresses at dial time.
func guardDial(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial address %q is not an IP address", address)
	}
	if !publicAddr(ip) {
		return fmt.Errorf("connection to non-public address %s refused", ip)
	}
	return nil
}

// nonPublicPrefixes are special-purpose ranges beyond what netip's
// predicates cover.
var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// publicAddr reports whether ip is a globally routable unicast address.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || !ip.IsGlobalUnicast() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
