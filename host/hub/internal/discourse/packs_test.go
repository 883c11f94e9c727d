package discourse_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"apconnect/host/hub"
	"apconnect/host/hub/hubtest"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// TestExternalPacks: type.define imports an external pack fetched over
// HTTPS with a sha3-256 digest; a digest mismatch or an unreachable pack is
// pack_unavailable; imported documents are stored, so after a restart the
// room still accepts the pack's types without fetching, and its archive
// ships the document.
// Serial: the hub restarts on the port freePort picked, which a parallel
// test could take while it is free.
func TestExternalPacks(t *testing.T) {
	var doc string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/triage.json":
			w.Write([]byte(doc))
		case "/misnamed.json": // the triage pack, whose id is another URL
			w.Write([]byte(doc))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	doc = triageDoc(srv.URL + "/triage.json")
	digest := packDigest(t, doc)
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

	// D-13: a prefixed digest is malformed; a bare one that does not match
	// the bytes is pack_unavailable.
	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/triage.json", "digest": "sha3-256:" + digest}),
		400, identity.CodeInvalidEvent)
	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/triage.json", "digest": strings.Repeat("A", 43)}),
		502, adp.CodePackUnavailable)
	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/missing.json", "digest": digest}), 502, adp.CodePackUnavailable)
	// The pack taken from a document is the one whose id is the import URL.
	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/misnamed.json", "digest": digest}), 502, adp.CodePackUnavailable)
	wantError(t, f.send(creator, id, adp.TypeTypeDefine, obj{"pack": "http://127.0.0.1/triage.json", "digest": digest}), 400, identity.CodeInvalidEvent)
	f.must(creator, id, adp.TypeTypeDefine, obj{"pack": srv.URL + "/triage.json", "digest": digest})
	wantStatus(t, f.send(sp, id, "triage.label", obj{"label": "bug"}), 200)
	wantError(t, f.send(sp, id, "triage.label", obj{"nolabel": true}), 400, adp.CodePayloadSchemaViolation)

	h = h.Restart()
	f.h = h
	srv.Close() // the pack is no longer reachable; the hub has it
	wantStatus(t, f.send(sp, id, "triage.label", obj{"label": "after restart"}), 200)
	a := f.fetchArchive(t, id, nil)
	if string(a.packs[srv.URL+"/triage.json"]) != doc {
		t.Fatalf("archive packs %v", a.packs)
	}
	if rep, err := adp.VerifyArchive(a.manifest, a.records, a.packs, nil); err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep.Problems)
	}
	// A second room importing the same pack resolves it from the store.
	other := f.create(creator, obj{"types": arr{obj{"pack": srv.URL + "/triage.json", "digest": digest}}})
	res := decodeJSON(t, f.h.Get(t, "/v1/rooms/"+other, nil).Body)
	if types := res["types"].([]any); len(types) != 1 {
		t.Fatalf("types %v", types)
	}
	// A restricted room's archive, packs included, is read with a JWT.
	restricted := f.create(creator, obj{"visibility": "restricted", "types": arr{obj{"pack": srv.URL + "/triage.json", "digest": digest}}})
	wantError(t, f.h.Get(t, "/v1/rooms/"+restricted+"/archive/packs/0", nil), 401, identity.CodeInvalidToken)
	wantError(t, f.h.Get(t, "/v1/rooms/"+restricted+"/archive/packs/0", sp), 403, adp.CodeMembershipRequired)
	a = f.fetchArchive(t, restricted, creator)
	if rep, err := adp.VerifyArchive(a.manifest, a.records, a.packs, nil); err != nil || !rep.OK() || len(a.manifest.Packs) != 1 {
		t.Fatalf("%v %+v", err, rep.Problems)
	}
}
