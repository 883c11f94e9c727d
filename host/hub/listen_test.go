package hub

import (
	"net"
	"testing"
)

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		listen string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:0", false, true},
		{"127.8.9.10:8443", false, true},
		{"[::1]:0", false, true},
		{"[::ffff:127.0.0.1]:0", false, true},
		{"localhost:0", false, true},
		{"LOCALHOST:0", false, true},
		{"0.0.0.0:0", false, false},
		{"[::]:0", false, false},
		{":0", false, false},
		{"10.0.0.1:0", false, false},
		{"[fe80::1]:0", false, false},
		{"localhost.example.com:0", false, false},
		{"127.0.0.1", false, false},
		{"127.0.0.1:99999", false, false},
		{"0.0.0.0:0", true, true},
		{"10.0.0.1:0", true, true},
	} {
		_, err := checkListen(c.listen, c.remote)
		if (err == nil) != c.ok {
			t.Errorf("checkListen(%q, remote=%v) = %v, want ok=%v", c.listen, c.remote, err, c.ok)
		}
	}
}

func TestDeriveOrigin(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8443}
	for host, want := range map[string]string{
		"127.0.0.1": "https://127.0.0.1:8443",
		"::1":       "https://[::1]:8443",
		"localhost": "https://localhost:8443",
		"0.0.0.0":   "https://127.0.0.1:8443",
		"":          "https://127.0.0.1:8443",
	} {
		if got := deriveOrigin(host, bound); got != want {
			t.Errorf("deriveOrigin(%q) = %s, want %s", host, got, want)
		}
	}
}

func TestLimitsCheck(t *testing.T) {
	for _, c := range []struct {
		l  Limits
		ok bool
	}{
		{Limits{}, true},
		{Limits{NonceCacheTTL: 600e9}, true},
		{Limits{NonceCacheTTL: 200e9}, false},
		{Limits{LiveWriteWindow: 60e9, NonceCacheTTL: 60e9}, true},
		{Limits{LiveWriteWindow: -1}, false},
	} {
		if err := c.l.check(); (err == nil) != c.ok {
			t.Errorf("%+v: %v, want ok=%v", c.l, err, c.ok)
		}
	}
}
