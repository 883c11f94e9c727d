package e2e

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"apconnect/host/hub/hubtest"
	"apconnect/host/hub/tlsca"
	"apconnect/host/proto/delegation"
)

// runningHub starts `apconnect hub` (the real binary) on an ephemeral port
// and returns its origin and an HTTP client trusting its CA.
func runningHub(t *testing.T, dir string) (string, *http.Client) {
	t.Helper()
	cmd := exec.Command(bin, "hub", "--listen", "127.0.0.1:0", "--data", dir, "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	origin, ok := strings.CutPrefix(strings.TrimSpace(line), "apconnect hub serving ")
	if err != nil || !ok {
		t.Fatalf("hub: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	pool, err := tlsca.LoadPool(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return origin, &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// `apconnect hub principal put|list|retire`, the real binary beside a
// running `apconnect hub`: each change is served within a second.
func TestHubPrincipalCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	origin, hc := runningHub(t, dir)
	alice, bob := hubtest.NewAgent(0x71).ID, hubtest.NewAgent(0x72).ID
	url := origin + "/principals/acme"

	served := func(want func(d *delegation.PrincipalDocument) bool) *delegation.PrincipalDocument {
		t.Helper()
		deadline := time.Now().Add(time.Second)
		for {
			resp, err := hc.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if d, err := delegation.ParsePrincipalDocument(body); err == nil && want(d) {
				if d.ID != url || d.DelegationService != origin || d.Protocol != delegation.Protocol {
					t.Fatalf("served document: %s", body)
				}
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("not served within a second: %d %s", resp.StatusCode, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	code, out, errOut := apconnect(t, "hub", "principal", "put", "--data", dir, "--name", "acme", "--controller", alice, "--controller", bob)
	if code != 0 || !strings.Contains(out, "principal acme: controllers 2, retired 0") || !strings.Contains(out, "served at "+url) {
		t.Fatalf("put: %d %s %s", code, out, errOut)
	}
	d := served(func(d *delegation.PrincipalDocument) bool { return len(d.Controllers) == 2 })
	for _, c := range d.Controllers {
		if c.Delegation == nil || !c.Delegation.Unrestricted || c.Source != "local" || c.ValidFrom > d.UpdatedAt {
			t.Errorf("controller %+v", c)
		}
	}
	if code, out, _ := apconnect(t, "hub", "principal", "list", "--data", dir); code != 0 ||
		!strings.HasPrefix(out, "acme\t"+url+"\tcontrollers=2\tretired=0\tupdated_at=") {
		t.Errorf("list: %d %q", code, out)
	}
	if code, out, errOut := apconnect(t, "hub", "principal", "retire", "--data", dir, "--name", "acme", "--controller", bob); code != 0 ||
		!strings.Contains(out, "retired controller "+bob) {
		t.Fatalf("retire: %d %s %s", code, out, errOut)
	}
	served(func(d *delegation.PrincipalDocument) bool {
		return len(d.RetiredControllers) == 1 && d.RetiredControllers[0].ID == bob
	})

	// --file takes controllers, retired controllers and aliases as written;
	// the hub's own members in it are replaced.
	doc := `{"id":"https://elsewhere.example/p","protocol":"x","name":"Acme Corp","aliases":["` + origin + `/principals/acme-corp"],
	  "controllers":[{"id":"` + alice + `","source":"local","valid_from":1,"delegation":{"scopes":["review"],"audiences":["` + origin + `"]}}],
	  "retired_controllers":[{"id":"` + bob + `","source":"local","valid_from":1,"retired_at":2,"invalid_from":2,"delegation":"*"}]}`
	file := filepath.Join(t.TempDir(), "acme.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := apconnect(t, "hub", "principal", "put", "--data", dir, "--name", "acme", "--file", file); code != 0 {
		t.Fatalf("put --file: %d %s %s", code, out, errOut)
	}
	d = served(func(d *delegation.PrincipalDocument) bool { return d.Name == "Acme Corp" })
	if len(d.Controllers) != 1 || d.Controllers[0].Delegation.Unrestricted || len(d.RetiredControllers) != 1 ||
		*d.RetiredControllers[0].InvalidFrom != 2 || !d.IsAlias(origin+"/principals/acme-corp") {
		t.Errorf("from file: %+v", d)
	}

	// Usage and refusals: exit 2 for a usage mistake, 1 for a refusal.
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"hub", "principal"}, 2, "needs a subcommand"},
		{[]string{"hub", "principal", "put", "--data", dir, "--name", "x"}, 2, "either --controller"},
		{[]string{"hub", "principal", "put", "--data", dir, "--name", "x", "--controller", alice, "--file", file}, 2, "either --controller"},
		{[]string{"hub", "principal", "put", "--data", dir, "--name", "x", "--controller", "bob"}, 2, "not a canonical Agent ID"},
		{[]string{"hub", "principal", "put", "--data", dir, "--name", "a/b", "--controller", alice}, 1, "principal name"},
		{[]string{"hub", "principal", "retire", "--data", dir, "--name", "acme", "--controller", bob}, 1, "not a current controller"},
		{[]string{"hub", "principal", "retire", "--data", dir, "--name", "nobody", "--controller", bob}, 1, "no principal"},
		{[]string{"hub", "principal", "list", "--data", t.TempDir()}, 1, "no hub database"},
		{[]string{"hub", "principal", "drop"}, 2, "unknown subcommand"},
	} {
		code, _, errOut := apconnect(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.err) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args[2:], code, errOut, c.code, c.err)
		}
	}
}
