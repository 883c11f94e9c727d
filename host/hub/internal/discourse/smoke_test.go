package discourse_test

import (
	"net/http"
	"testing"

	"apconnect/host/proto/adp"
)

func TestSmoke(t *testing.T) {
	t.Parallel()
	f := newFx(t)
	as := agents(30, 3)
	id := f.create(as[0], obj{"types": arr{obj{"use": "adp:reactions/1.0"}}})
	f.join(as[1], id, adp.RoleSpeaker)
	r := f.message(as[1], id, "hello")
	wantStatus(t, r, http.StatusOK)
	wantShape(t, "serverRecord", r.Body)
	recs := f.records(id, nil)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	res, err := adp.VerifyChain(id, adp.Link{}, recs)
	if err != nil || res.Last.Seq != 3 {
		t.Fatal(res, err)
	}
	t.Logf("%s", f.h.Get(t, "/v1/rooms/"+id, nil).Body)
}
