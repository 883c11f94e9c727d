package adp

import (
	"context"
	"crypto/sha256"
	"crypto/sha3"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"apconnect/host/identity"
)

// triageURL is where the triage pack is published: an external pack's id is
// its import URL.
const triageURL = "https://packs.example/triage-1.0.json"

// triagePack is an external pack document with one pack of two types.
func triagePack(t testing.TB) []byte {
	t.Helper()
	doc := obj{
		"protocol": "agent-discourse/1.0",
		"packs": arr{obj{
			"id": triageURL, "title": "Triage",
			"types": arr{
				obj{"type": "triage.label", "kind": "signal", "title": "Label", "schema": obj{
					"type": "object", "required": arr{"label"},
					"properties":           obj{"label": obj{"type": "string", "pattern": "^[a-z-]{1,32}$"}},
					"additionalProperties": false,
				}},
				obj{"type": "triage.assign", "kind": "control", "title": "Assign", "schema": obj{"type": "object"}},
			},
		}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// legacyDigest is a pack digest in the 0f87fee form "<alg>:<base64url>".
func legacyDigest(alg string, data []byte) string {
	var sum [32]byte
	if alg == "sha256" {
		sum = sha256.Sum256(data)
	} else {
		sum = sha3.Sum256(data)
	}
	return alg + ":" + identity.EncodeBase64URL(sum[:])
}

func TestExternalPackImport(t *testing.T) {
	const url = triageURL
	doc := triagePack(t)
	for _, tc := range []struct{ name, digest string }{{"sha3-256", PackDigest(doc)}} {
		t.Run(tc.name, func(t *testing.T) {
			f := activeRoom(t, nil)
			f.rules.Packs = StaticPacks{url: doc}
			f.must("creator", TypeTypeDefine, obj{"pack": url, "digest": tc.digest,
				"types": arr{"triage.label"}, "overrides": obj{"triage.label": obj{"roles": arr{"speaker"}, "rate_hint": 5}}})
			def, ok := f.room.Types.Lookup("triage.label")
			if !ok || def.RateHint != 5 || len(def.Roles) != 1 {
				t.Fatalf("materialized %+v", def)
			}
			if _, ok := f.room.Types.Lookup("triage.assign"); ok {
				t.Fatal("subset ignored")
			}
			imp := f.room.Imports[len(f.room.Imports)-1]
			if imp.Pack != url || imp.Seq != f.room.Last.Seq || len(imp.Types) != 1 {
				t.Fatalf("import %+v", imp)
			}
			wantCode(t, f.submit(f.event("alice", "triage.label", obj{"label": "bug"})), "")
			wantCode(t, f.submit(f.event("olga", "triage.label", obj{"label": "bug"})), CodePermissionDenied)
			wantCode(t, f.submit(f.event("alice", "triage.label", obj{"label": "Bug!"})), CodePayloadSchemaViolation)
		})
	}

	bad := func(mutate func(f *fixture) obj) func(f *fixture) error {
		return func(f *fixture) error { return f.submit(f.event("creator", TypeTypeDefine, mutate(f))) }
	}
	runRuleCases(t, []ruleCase{
		{"digest mismatch", nil, bad(func(f *fixture) obj {
			f.rules.Packs = StaticPacks{url: doc}
			return obj{"pack": url, "digest": PackDigest(append([]byte(" "), doc...))}
		}), CodePackUnavailable},
		{"unavailable document", nil, bad(func(f *fixture) obj {
			f.rules.Packs = StaticPacks{}
			return obj{"pack": url, "digest": PackDigest(doc)}
		}), CodePackUnavailable},
		{"document too large", nil, bad(func(f *fixture) obj {
			f.rules.Packs = StaticPacks{url: doc}
			f.rules.Limits.MaxPackSize = 100
			return obj{"pack": url, "digest": PackDigest(doc)}
		}), CodePackUnavailable},
		{"malformed document", nil, bad(func(f *fixture) obj {
			junk := []byte(`{"protocol":"agent-discourse/1.0","packs":[]}`)
			f.rules.Packs = StaticPacks{url: junk}
			return obj{"pack": url, "digest": PackDigest(junk)}
		}), CodePackUnavailable},
		{"document schema outside the profile", nil, bad(func(f *fixture) obj {
			evil := []byte(strings.Replace(string(doc), `"type":"object"}`, `"$ref":"https://evil.example/s.json"}`, 1))
			f.rules.Packs = StaticPacks{url: evil}
			return obj{"pack": url, "digest": PackDigest(evil)}
		}), CodeInvalidTypeSchema},
		{"document defining a type twice", nil, bad(func(f *fixture) obj {
			dup := []byte(strings.Replace(string(doc), `"triage.assign"`, `"triage.label"`, 1))
			f.rules.Packs = StaticPacks{url: dup}
			return obj{"pack": url, "digest": PackDigest(dup)}
		}), CodeTypeConflict},
		{"unknown digest algorithm", nil, bad(func(f *fixture) obj {
			f.rules.Packs = StaticPacks{url: doc}
			return obj{"pack": url, "digest": "md5:" + strings.Repeat("A", 43)}
		}), CodeInvalidEvent},
		{"a 0f87fee digest form", nil, bad(func(f *fixture) obj {
			f.rules.Packs = StaticPacks{url: doc}
			return obj{"pack": url, "digest": legacyDigest("sha256", doc)}
		}), CodeInvalidEvent},
		{"not https", nil, bad(func(f *fixture) obj {
			f.rules.Packs = StaticPacks{"http://packs.example/triage-1.0.json": doc}
			return obj{"pack": "http://packs.example/triage-1.0.json", "digest": PackDigest(doc)}
		}), CodeInvalidEvent},
		{"no pack with the import URL as its id", nil, bad(func(f *fixture) obj {
			other := "https://packs.example/other.json"
			f.rules.Packs = StaticPacks{other: doc}
			return obj{"pack": other, "digest": PackDigest(doc)}
		}), CodePackUnavailable},
		{"a duplicate in the subset", nil, bad(func(f *fixture) obj {
			f.rules.Packs = StaticPacks{url: doc}
			return obj{"pack": url, "digest": PackDigest(doc), "types": arr{"triage.label", "triage.label"}}
		}), CodeTypeConflict},
	})

	t.Run("prefetch then check without I/O", func(t *testing.T) {
		f := activeRoom(t, nil)
		calls := 0
		f.rules.Packs = resolverFunc(func(ctx context.Context, ref PackRef) ([]byte, error) {
			calls++
			return doc, nil
		})
		env := f.event("creator", TypeTypeDefine, obj{"pack": url, "digest": PackDigest(doc)})
		if err := f.rules.PrefetchPacks(t.Context(), env); err != nil {
			t.Fatal(err)
		}
		if err := f.submit(env); err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Fatalf("%d fetches", calls)
		}
	})
}

type resolverFunc func(ctx context.Context, ref PackRef) ([]byte, error)

func (f resolverFunc) ResolvePack(ctx context.Context, ref PackRef) ([]byte, error) {
	return f(ctx, ref)
}

func TestHTTPSPackFetcher(t *testing.T) {
	doc := triagePack(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/pack.json", func(w http.ResponseWriter, r *http.Request) { w.Write(doc) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/pack.json", http.StatusFound) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 300<<10)) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	other := httptest.NewTLSServer(mux)
	defer other.Close()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/pack.json", http.StatusFound)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/pack.json", http.StatusFound)
	})

	open := &HTTPSPackFetcher{Client: srv.Client(), AllowPrivateAddresses: true, Timeout: 300 * time.Millisecond}
	guarded := &HTTPSPackFetcher{Client: srv.Client()}
	cases := []struct {
		name    string
		fetcher *HTTPSPackFetcher
		url     string
		want    string
	}{
		{"fetch", open, srv.URL + "/pack.json", ""},
		{"same-origin redirect", open, srv.URL + "/moved", ""},
		{"redirect to another origin", open, srv.URL + "/away", CodePackUnavailable},
		{"redirect to http", open, srv.URL + "/plain", CodePackUnavailable},
		{"not https", open, strings.Replace(srv.URL, "https://", "http://", 1) + "/pack.json", CodePackUnavailable},
		{"not found", open, srv.URL + "/missing", CodePackUnavailable},
		{"too large", open, srv.URL + "/big", CodePackUnavailable},
		{"too slow", open, srv.URL + "/slow", CodePackUnavailable},
		{"loopback refused by default", guarded, srv.URL + "/pack.json", CodePackUnavailable},
		{"loopback name refused", guarded, "https://localhost/pack.json", CodePackUnavailable},
		{"private literal refused", &HTTPSPackFetcher{}, "https://10.1.2.3/pack.json", CodePackUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.fetcher.ResolvePack(t.Context(), PackRef{URL: tc.url})
			wantCode(t, err, tc.want)
			if tc.want == "" && string(b) != string(doc) {
				t.Fatal("wrong body")
			}
		})
	}

	t.Run("through rules with digest check", func(t *testing.T) {
		rules := &Rules{Limits: DefaultLimits(), Packs: open}
		raw, pd, err := rules.ResolveExternalPack(t.Context(), PackRef{URL: srv.URL + "/pack.json", Digest: PackDigest(doc)})
		if err != nil || string(raw) != string(doc) || len(pd.Packs[0].Types) != 2 {
			t.Fatalf("%v", err)
		}
		_, _, err = rules.ResolveExternalPack(t.Context(), PackRef{URL: srv.URL + "/pack.json", Digest: PackDigest([]byte("x"))})
		wantCode(t, err, CodePackUnavailable)
	})
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "::1": false,
		"::ffff:127.0.0.1": false, "fe80::1": false, "fc00::1": false, "224.0.0.1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %v", addr, got)
		}
	}
}

func TestPackDigest(t *testing.T) {
	// The 4.11 cases of design/PROTOCOL-0.12.md.
	data := []byte("pack document bytes")
	d := PackDigest(data)
	if len(d) != 43 {
		t.Fatalf("digest %q", d)
	}
	wantCode(t, VerifyPackDigest(data, d), "")
	wantCode(t, VerifyPackDigest([]byte("other"), d), CodePackUnavailable)
	wantCode(t, VerifyPackDigest(data, "sha3-256:"+d), CodePackUnavailable)
	wantCode(t, VerifyPackDigest(data, legacyDigest("sha256", data)), CodePackUnavailable)
	wantCode(t, VerifyPackDigest(data, "sha256"), CodePackUnavailable)
	wantCode(t, VerifyPackDigest(data, d+"A"), CodePackUnavailable)

	// A reader still reads the 0f87fee forms.
	for _, alg := range []string{"sha256", "sha3-256"} {
		wantCode(t, verifyPackDigestAs(historical, data, legacyDigest(alg, data)), "")
		wantCode(t, verifyPackDigestAs(historical, []byte("other"), legacyDigest(alg, data)), CodePackUnavailable)
	}
	wantCode(t, verifyPackDigestAs(historical, data, "md5:"+strings.Repeat("A", 43)), CodePackUnavailable)
}

func TestGuardDial(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:443": false, "[::1]:443": false, "10.0.0.8:8443": false, "93.184.215.14:443": true,
	} {
		if err := guardDial("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
}
