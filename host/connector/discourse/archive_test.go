package discourse_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"apconnect/host/connector/discourse"
	"apconnect/host/connector/internal/connectortest"
	"apconnect/host/engine"
)

// room_archive downloads and verifies the room's archive (the 0.12.6
// layout: a records-only JSON Lines log), keeps it in the state directory
// and reports it; a tampered archive fails verification and the kept one
// stays as it was.
func TestRoomArchiveVerifiesAndKeeps(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	alice := newAgent(t, h, 0xA1, "")
	roomID, _ := pollRoom(t, alice, h)
	for i := 0; i < 3; i++ {
		must[*discourse.WriteResult](t, "agent_protocols_room_send_message")(alice.RoomSendMessage(ctx, alice.sess, discourse.RoomSendMessageInput{RoomID: roomID, Content: "m"}))
	}
	must[*discourse.WriteResult](t, "agent_protocols_room_submit_event")(alice.RoomSubmitEvent(ctx, alice.sess, discourse.RoomSubmitEventInput{
		RoomID: roomID, Type: "room.close", Payload: map[string]any{"reason": "done"}}))

	p := connectortest.NewProxy(t, h)
	bob := newAgent(t, h, 0xB2, "", withHTTP(p.Client))
	res := must[*discourse.RoomArchiveResult](t, "agent_protocols_room_archive")(bob.RoomArchive(ctx, bob.sess, discourse.RoomArchiveInput{RoomID: roomID}))
	if !res.Verified || !res.StateVerified || len(res.Records) != 6 || len(res.Redacted) != 0 || res.Archive.RecordsCount != 6 ||
		res.Archive.URI != discourse.ArchiveURI(roomID) || res.Archive.Bytes == 0 {
		t.Fatalf("archive: %+v", res.Archive)
	}
	sum, jsonl, err := bob.KeptArchive("", roomID, true)
	if err != nil || sum.RecordsCount != 6 || int64(len(jsonl)) != sum.Bytes || bytes.Count(jsonl, []byte("\n")) != 6 {
		t.Fatalf("kept: %+v, %d bytes, %v", sum, len(jsonl), err)
	}
	// The kept log is the records, one per line, as the result gave them.
	for i, line := range bytes.Split(bytes.TrimSuffix(jsonl, []byte("\n")), []byte("\n")) {
		if !bytes.Equal(line, res.Records[i]) {
			t.Fatalf("kept line %d differs from the result's record", i+1)
		}
	}
	files, _ := filepath.Glob(filepath.Join(bob.cfg.StateDir(), "archives", "*", "*", roomID+".*"))
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, st.Mode(), err)
		}
	}
	if len(files) != 2 {
		t.Fatalf("kept files %v", files)
	}
	if _, _, err := bob.KeptArchive("", "nosuchroom", false); err == nil {
		t.Fatal("an archive never kept was found")
	}

	// A flipped signature byte in the record log.
	p.Lock()
	p.Rewrite = func(path string, body []byte) []byte {
		if !strings.Contains(path, "/archive") || bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"protocol"`)) {
			return body
		}
		i := bytes.Index(body, []byte(`"signature":"`))
		if i < 0 {
			return body
		}
		out := bytes.Clone(body)
		j := i + len(`"signature":"`) + 4
		if out[j] == 'A' {
			out[j] = 'B'
		} else {
			out[j] = 'A'
		}
		return out
	}
	p.Unlock()
	_, err = bob.RoomArchive(ctx, bob.sess, discourse.RoomArchiveInput{RoomID: roomID})
	var ce *engine.Error
	if !asErr(err, &ce) || ce.Code != discourse.CodeVerificationFailed || ce.Data["problems"] == nil {
		t.Fatalf("a tampered archive: %v", err)
	}
	if _, again, err := bob.KeptArchive("", roomID, true); err != nil || !bytes.Equal(again, jsonl) {
		t.Fatal("a failed download replaced the kept archive")
	}
}
