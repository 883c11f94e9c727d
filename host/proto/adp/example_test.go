package adp_test

import (
	"crypto/ed25519"
	"fmt"

	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// Verify a room archive offline (ADP 18): a two-record room built here by
// hand, then the same archive with one record's accepted_at changed, which
// breaks the hash chain. Real archives come from a host's
// {room}/archive.jsonl (apconnect verify-archive reads them).
func ExampleVerifyArchive() {
	const (
		host   = "https://hub.example"
		roomID = "room0001"
		t0     = int64(1_800_000_000_000)
	)
	signer := identity.NewKeySigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	nonce := int64(0)
	sign := func(typ, payload string, base *adp.Record) *identity.Envelope {
		v, err := identity.ParseStrict([]byte(payload))
		if err != nil {
			panic(err)
		}
		nonce++
		var f adp.Fields
		if base != nil {
			link := base.Link()
			f = adp.Fields{RoomID: roomID, Base: &link}
		}
		ev := adp.NewEvent(typ, signer.AgentID(), t0+nonce, v, f)
		ev.Nonce = nonce
		env, err := identity.SignEvent(signer, ev)
		if err != nil {
			panic(err)
		}
		return env
	}

	create, err := adp.NewRecord(roomID, adp.Link{}, t0+10, sign(adp.TypeRoomCreate,
		`{"host":"`+host+`","topic":"Example","visibility":"public","start_time":1800000000000,"end_time":1800003600000}`, nil))
	if err != nil {
		panic(err)
	}
	msg, err := adp.NewRecord(roomID, adp.Link{Seq: create.Seq, Hash: create.Hash}, t0+20,
		sign(adp.TypeMessageCreate, `{"content":"hello","content_type":"text/plain"}`, create))
	if err != nil {
		panic(err)
	}
	records := []*adp.Record{create, msg}

	url := host + "/v1/rooms/" + roomID
	manifest := &adp.ArchiveManifest{
		Protocol: adp.Protocol, Type: "room.archive", RoomID: roomID, URL: url,
		GeneratedAt: t0 + 1000, LastSeq: msg.Seq, LastHash: msg.Hash,
		Formats: map[string]string{"jsonl": url + "/archive.jsonl"},
	}
	rep, err := adp.VerifyArchive(manifest, records, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("ok:", rep.OK(), "records:", rep.Records, "status:", rep.Status)

	msg.AcceptedAt++ // the host's acceptance data is hashed too
	rep, _ = adp.VerifyArchive(manifest, records, nil, nil)
	fmt.Println("ok:", rep.OK())
	for _, p := range rep.Problems {
		fmt.Printf("seq %d: %s: %s\n", p.Seq, p.Code, p.Message)
	}
	// Output:
	// ok: true records: 2 status: active
	// ok: false
	// seq 2: invalid_record: record hash does not match its fields
}
