//go:build browser

package browser

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// chromiumFlags run Chromium headless on a CI machine: no sandbox (CI runs
// as root), no GPU, no network of its own (QUIC, background fetches,
// component updates, sync) and a fresh profile.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
	"--window-size=1400,1000"}

// driver is a chromedriver process and one WebDriver session of it.
type driver struct {
	t    *testing.T
	base string // http://127.0.0.1:PORT
	sess string
	hc   *http.Client
}

// findBinary returns the first of names on PATH or at an absolute path.
func findBinary(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatalf("none of %v is installed: install Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)", names)
	return ""
}

// startDriver starts chromedriver and a headless Chromium session with a
// fresh profile.
func startDriver(t *testing.T) *driver {
	t.Helper()
	drv := findBinary(t, "chromedriver", "/usr/lib/chromium/chromedriver")
	chrome := findBinary(t, "chromium", "chromium-browser", "/usr/lib/chromium/chromium")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(drv, "--port="+strconv.Itoa(port))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	d := &driver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), hc: &http.Client{Timeout: 60 * time.Second}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := d.hc.Get(d.base + "/status"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not start:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	profile := t.TempDir()
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+profile)
	var created struct {
		SessionID string `json:"sessionId"`
	}
	d.call("POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome", "goog:chromeOptions": map[string]any{"binary": chrome, "args": args},
	}}}, &created)
	if created.SessionID == "" {
		t.Fatal("chromedriver created no session")
	}
	d.sess = "/session/" + created.SessionID
	t.Cleanup(func() { d.call("DELETE", d.sess, nil, nil) })
	return d
}

// call sends one WebDriver command and decodes its value into out.
func (d *driver) call(method, path string, body any, out any) {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.hc.Do(req)
	if err != nil {
		d.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || resp.StatusCode != http.StatusOK {
		d.t.Fatalf("webdriver %s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(env.Value, out); err != nil {
			d.t.Fatalf("webdriver %s %s: %v: %s", method, path, err, env.Value)
		}
	}
}

// open navigates to url and waits for the page to load.
func (d *driver) open(url string) {
	d.t.Helper()
	d.call("POST", d.sess+"/url", map[string]any{"url": url}, nil)
}

// url returns the address bar's URL.
func (d *driver) url() string {
	d.t.Helper()
	var u string
	d.call("GET", d.sess+"/url", nil, &u)
	return u
}

// eval runs script (a function body) in the page and decodes its result.
func (d *driver) eval(script string, out any, args ...any) {
	d.t.Helper()
	if args == nil {
		args = []any{}
	}
	d.call("POST", d.sess+"/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// truthy evaluates an expression to a boolean.
func (d *driver) truthy(expr string) bool {
	d.t.Helper()
	var ok bool
	d.eval("return !!("+expr+");", &ok)
	return ok
}

// waitFor polls expr until it is true or within passes; it returns how long
// it took.
func (d *driver) waitFor(what, expr string, within time.Duration) time.Duration {
	d.t.Helper()
	start := time.Now()
	for !d.truthy(expr) {
		if time.Since(start) > within {
			var text string
			d.eval("return document.body ? document.body.innerText : '';", &text)
			d.t.Fatalf("%s: not within %s; the page says:\n%s", what, within, text)
		}
		time.Sleep(25 * time.Millisecond)
	}
	return time.Since(start)
}

// screenshot saves the whole page as a PNG: the window is made as tall as
// the page first.
func (d *driver) screenshot(path string) {
	d.t.Helper()
	var h int
	d.eval("return Math.ceil(document.documentElement.scrollHeight);", &h)
	d.call("POST", d.sess+"/window/rect", map[string]any{"width": 1400, "height": min(max(h+40, 600), 4000)}, nil)
	var b64 string
	d.call("GET", d.sess+"/screenshot", nil, &b64)
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(png) < 1000 || string(png[1:4]) != "PNG" {
		d.t.Fatalf("screenshot %s: %d bytes, %v", path, len(png), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		d.t.Fatal(err)
	}
	d.call("POST", d.sess+"/window/rect", map[string]any{"width": 1400, "height": 1000}, nil)
}
