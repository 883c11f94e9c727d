package discourse_test

import (
	"crypto/sha3"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"apconnect/host/adp"
	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
)

// TestExternalPacks: type.define imports an external pack fetched over
// HTTPS with a sha3-256 digest; a digest mismatch or an unreachable pack is
// pack_unavailable; imported documents are stored, so after a restart the
// room still accepts the pack's types without fetching, and its archive
// ships the document.
func TestExternalPacks(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/triage.json":
			w.Write([]byte(triagePack))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	sum := sha3.Sum256([]byte(triagePack))
	digest := "sha3-256:" + identity.EncodeBase64URL(sum[:])
	port := freePort(t)
	clock := hubtest.NewClock(t0)
	h := hubtest.Start(t, hubtest.WithClock(clock), hubtest.WithOptions(func(o *hub.Options) {
		o.Listen = "127.0.0.1:" + strconv.Itoa(port)
		o.PackFetcher = &adp.HTTPSPackFetcher{Client: srv.Client(), AllowPrivateAddresses: true}
	}))
	f := &fx{t: t, h: h, clock: clock, creators: map[string]*hubtest.Agent{}}
	as := agents(230, 2)
	creator, sp := as[0], as[1]
	id := f.create(creator, nil)
	f.join(sp, id, adp.RoleSpeaker)

	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/triage.json", "digest": "sha256:" + strings.Repeat("A", 43)}),
		502, adp.CodePackUnavailable)
	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/missing.json", "digest": digest}), 502, adp.CodePackUnavailable)
	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": "http://127.0.0.1/triage.json", "digest": digest}), 400, identity.CodeInvalidEvent)
	f.must(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/triage.json", "digest": digest})
	wantStatus(t, f.send(sp, id, "triage.label", obj{"label": "bug"}), 200)
	wantError(t, f.send(sp, id, "triage.label", obj{"nolabel": true}), 400, adp.CodePayloadSchemaViolation)

	h = h.Restart()
	f.h = h
	srv.Close() // the pack is no longer reachable; the hub has it
	wantStatus(t, f.send(sp, id, "triage.label", obj{"label": "after restart"}), 200)
	man, packs, recs := readArchiveJSONL(t, f.h.Get(t, "/v1/rooms/"+id+"/archive.jsonl", nil).Body)
	if string(packs[srv.URL+"/triage.json"]) != triagePack {
		t.Fatalf("archive packs %v", packs)
	}
	if rep, err := adp.VerifyArchive(man, recs, packs, nil); err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep.Problems)
	}
	// A second room importing the same pack resolves it from the store.
	other := f.create(creator, obj{"types": arr{obj{"pack": srv.URL + "/triage.json", "digest": digest}}})
	res := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+other, nil).Body)
	if types := res["types"].([]any); len(types) != 1 {
		t.Fatalf("types %v", types)
	}
}
