package mcpserver

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The connection cap closes unauthenticated connections first, then idle
// authenticated ones, never one serving the token holder, and refuses a
// connection when every one is.
func TestConnCap(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var entered sync.WaitGroup
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "ok" {
			w.Header().Set("Connection", "close")
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		markAuthenticated(r.Context())
		if r.URL.Path == "/block" {
			entered.Done()
			<-release
		}
		io.WriteString(w, "served")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs, capped := NewHTTPServer(ln, h, ServeLimits{MaxConns: 4, ReadHeaderTimeout: 30 * time.Second})
	go hs.Serve(capped)
	defer hs.Close()
	url := "http://" + ln.Addr().String()

	get := func(client *http.Client, path string) (string, error) {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		req.Header.Set("Authorization", "ok")
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	// Two calls of the token holder in flight.
	blocked := make(chan error, 4)
	client := &http.Client{Timeout: 20 * time.Second}
	block := func() {
		entered.Add(1)
		go func() {
			body, err := get(client, "/block")
			if err == nil && body != "served" {
				err = fmt.Errorf("body %q", body)
			}
			blocked <- err
		}()
	}
	block()
	block()
	entered.Wait()

	// Idle and half-open unauthenticated connections: more than the cap.
	var idle []net.Conn
	for i := 0; i < 10; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		}
		idle = append(idle, c)
	}
	// The token holder still gets in, on a fresh connection.
	fresh := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if body, err := get(fresh, "/"); err != nil || body != "served" {
		t.Fatalf("the token holder was locked out: %q %v", body, err)
	}
	// Most idle connections were closed to make room (the last ones may
	// still be open).
	closed := 0
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			closed++
		}
		c.Close()
	}
	if closed < 7 {
		t.Errorf("only %d of 10 unauthenticated connections were closed", closed)
	}

	// Fill the cap with calls in flight: a new connection is refused.
	block()
	block()
	entered.Wait()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: ok\r\n\r\n")
	if b, err := io.ReadAll(c); err == nil && strings.Contains(string(b), "served") {
		t.Errorf("a fifth connection was served while four calls were in flight: %q", b)
	}
	c.Close()

	// None of the calls in flight was cut.
	close(release)
	for i := 0; i < 4; i++ {
		if err := <-blocked; err != nil {
			t.Errorf("a call in flight was cut: %v", err)
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
