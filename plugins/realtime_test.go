package plugins_test

import (
	"strings"
	"testing"

	"apconnect/host/plugin"
)

const realtimeDir = "realtime"

// sdp is a session description with gathered ICE candidates.
const sdp = "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n" +
	"m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\n" +
	"a=ice-ufrag:EsAw\r\na=fingerprint:sha-256 D2:FA:0E:C3:22:59:5E:14:95:69:92:3D:13:B4:84:24\r\n" +
	"a=candidate:1 1 udp 2122260223 192.0.2.10 54400 typ host\r\na=end-of-candidates\r\n"

func offerPayload(id string, to []string, media []string, extra ...any) obj {
	o := obj{"session_id": id, "session_type": "webrtc", "media": media, "description": obj{"type": "offer", "sdp": sdp}}
	if to != nil {
		o["to"] = to
	}
	return with(o, extra...)
}

func answerPayload(id, offer string, extra ...any) obj {
	return with(obj{"session_id": id, "offer_event_id": offer, "description": obj{"type": "answer", "sdp": sdp}}, extra...)
}

// sessionRoom holds
//
//	s1 bob → me, audio+video+file, transfer t1     s4 alice → room, expired
//	s2 alice → room, expires in 10m                s5 bob → room, closed by bob
//	s3 bob → alice                                 s6 me → room
//
// and a second offer for s1 by alice, which does not count.
func sessionRoom() (*room, map[string]string) {
	r := newRoom()
	ev := map[string]string{}
	ev["s1"] = r.add("session.offer", "bob", offerPayload("s1", []string{agent("me")}, []string{"audio", "video", "file"},
		"transfers", []obj{{"transfer_id": "t1", "file_name": "bench.csv", "size_bytes": 2048, "mime_type": "text/csv"}}, "topology", "peer_to_peer"))
	ev["s2"] = r.add("session.offer", "alice", offerPayload("s2", nil, []string{"data"}, "expires_at", now+600_000))
	ev["s3"] = r.add("session.offer", "bob", offerPayload("s3", []string{agent("alice")}, []string{"audio"}))
	ev["s4"] = r.add("session.offer", "alice", offerPayload("s4", nil, []string{"screen"}, "expires_at", now-1))
	ev["s5"] = r.add("session.offer", "bob", offerPayload("s5", nil, []string{"audio"}))
	ev["s5/close"] = r.add("session.close", "bob", obj{"session_id": "s5", "reason": "done"})
	ev["s6"] = r.add("session.offer", "me", offerPayload("s6", nil, []string{"audio"}))
	ev["s1/again"] = r.add("session.offer", "alice", offerPayload("s1", nil, []string{"audio"}))
	ev["msg"] = r.add("message.create", "bob", obj{"text": "call me"})
	return r, ev
}

func TestRealtimeOffer(t *testing.T) {
	t.Parallel()
	forBuilds(t, realtimeDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := sessionRoom()
		v := func(what string, payload obj, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "session.offer", "me", payload), want...)
		}
		v("an offer", offerPayload("s7", []string{agent("bob")}, []string{"audio", "data"}, "expires_at", now+300_000))
		v("a file offer", offerPayload("s7", nil, []string{"data", "file"}, "transfers", []obj{{"transfer_id": "a"}, {"transfer_id": "b"}}))
		v("a reused session_id", offerPayload("s1", nil, []string{"audio"}),
			refusal{"/payload/session_id", `session_id "s1" is already used by session.offer event ` + ev["s1"] + "; it must be unique in the room"})
		v("bad targets", offerPayload("s7", []string{agent("me"), agent("mallory")}, []string{"audio"}),
			refusal{"/payload/to/0", "an offer cannot be addressed to its sender"},
			refusal{"/payload/to/1", agent("mallory") + " is not an active member of the room"})
		v("expired", offerPayload("s7", nil, []string{"audio"}, "expires_at", now),
			refusal{"/payload/expires_at", "expires_at 1779753700000 is not in the future (now 1779753700000)"})
		v("transfers without file media", offerPayload("s7", nil, []string{"data"}, "transfers", []obj{{"transfer_id": "a"}, {"transfer_id": "a"}}),
			refusal{"/payload/transfers/1/transfer_id", `transfer_id "a" is already used by transfer 0`},
			refusal{"/payload/media", `the offer announces transfers, so its media must include "file"`})
		v("not SDP", with(offerPayload("s7", nil, []string{"audio"}), "description", obj{"type": "offer", "sdp": "hello"}),
			refusal{"/payload/description/sdp", `not an SDP session description: it must start with "v=0"`})
		v("trickled candidates", with(offerPayload("s7", nil, []string{"audio"}), "description", obj{"type": "offer", "sdp": "v=0\r\ns=-\r\n"}),
			refusal{"/payload/description/sdp", "the SDP carries no ICE candidates (a=candidate lines): gather them before sending"})
	})
}

func TestRealtimeAnswer(t *testing.T) {
	t.Parallel()
	forBuilds(t, realtimeDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := sessionRoom()
		v := func(what string, payload obj, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "session.answer", "me", payload), want...)
		}
		v("an answer", answerPayload("s1", ev["s1"], "accepted_media", []string{"audio", "file"}, "transfers", []obj{{"transfer_id": "t1"}}))
		v("an answer to a room offer", answerPayload("s2", ev["s2"]))
		v("another session_id", answerPayload("s2", ev["s1"]),
			refusal{"/payload/session_id", `session_id "s2" does not match the offer's "s1"`})
		v("an offer to someone else", answerPayload("s3", ev["s3"]),
			refusal{"/payload/offer_event_id", "the offer is addressed to " + agent("alice") + ", not to you"})
		v("an expired offer", answerPayload("s4", ev["s4"]),
			refusal{"/payload/offer_event_id", "the offer expired at 1779753699999 (now 1779753700000)"})
		v("a closed session", answerPayload("s5", ev["s5"]),
			refusal{"/payload/offer_event_id", `session "s5" was closed by its sender (event ` + ev["s5/close"] + ")"})
		v("one's own offer", answerPayload("s6", ev["s6"]),
			refusal{"/payload/offer_event_id", "you cannot answer your own offer"})
		v("a duplicate offer", answerPayload("s1", ev["s1/again"]),
			refusal{"/payload/offer_event_id", `session "s1" belongs to offer ` + ev["s1"]})
		v("media and transfers not offered", answerPayload("s1", ev["s1"], "accepted_media", []string{"audio", "screen"}, "transfers", []obj{{"transfer_id": "t9"}}),
			refusal{"/payload/accepted_media/1", `"screen" is not among the offered media (audio, video, file)`},
			refusal{"/payload/transfers/0/transfer_id", `the offer announces no transfer "t9"`})
		v("no candidates", with(answerPayload("s1", ev["s1"]), "description", obj{"type": "answer", "sdp": "v=0\r\n"}),
			refusal{"/payload/description/sdp", "the SDP carries no ICE candidates"})
		v("not an offer", answerPayload("s1", ev["msg"]),
			refusal{"/payload/offer_event_id", "event " + ev["msg"] + " is a message.create, not a session.offer"})
		missing := id43("event", "no offer")
		v("no such offer", answerPayload("s1", missing), refusal{"/payload/offer_event_id", "this room has no event " + missing})
		r.whole = false
		v("no such offer, partial room", answerPayload("s1", missing),
			refusal{"/payload/offer_event_id", "is not among the records of this room that apconnect holds, so the answer cannot be checked"})
	})
}

func TestRealtimeClose(t *testing.T) {
	t.Parallel()
	forBuilds(t, realtimeDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := sessionRoom()
		v := func(what, actor, session string, want ...refusal) {
			t.Helper()
			wantErrs(t, what, validate(t, p, r, "session.close", actor, obj{"session_id": session}), want...)
		}
		v("a target declines", "me", "s1")
		v("the offerer closes", "bob", "s1")
		v("anyone leaves a room offer", "olga", "s2")
		v("a stranger to an addressed session", "alice", "s1",
			refusal{"/payload/session_id", `you take no part in session "s1": it was offered by ` + agent("bob") + " to " + agent("me")})
		v("closed twice", "bob", "s5", refusal{"/payload/session_id", `you already closed session "s5" (event ` + ev["s5/close"] + ")"})
		v("no such session", "me", "s9", refusal{"/payload/session_id", `this room has no session "s9"`})
		r.add("session.answer", "alice", answerPayload("s3", ev["s3"]))
		v("an answerer leaves", "alice", "s3")
		r.whole = false
		v("no such session, partial room", "me", "s9")
	})
}

func TestRealtimeWatch(t *testing.T) {
	t.Parallel()
	forBuilds(t, realtimeDir, func(t *testing.T, p *plugin.Plugin) {
		r, _ := sessionRoom()
		items := watch(t, p, r, 0)
		// A watch call sees the batch, not the room's sessions: the second
		// offer of s1 is reported too (answering it is refused).
		if len(items) != 4 {
			t.Fatalf("items %+v", items)
		}
		tools := "realtime_sessions,agent_protocols_room_submit_event"
		if it := items[0]; it.Seq != 5 || it.Priority != "high" || !it.RequiresResponse || it.Reason != "session offered to you" ||
			it.Summary != `Session offered to you: audio+video+file session "s1" with 1 file transfer from `+agent("bob") ||
			strings.Join(it.SuggestedTools, ",") != tools {
			t.Errorf("offer to me %+v", it)
		}
		if it := items[1]; it.Seq != 6 || it.Priority != "normal" || it.RequiresResponse || it.Reason != "session offered to the room" ||
			it.Summary != `Session offered to the room: data session "s2" (expires in 10m) from `+agent("alice") {
			t.Errorf("offer to the room %+v", it)
		}
		if it := items[2]; it.Seq != 9 || it.Reason != "session offered to the room" { // s5: offered, closed later
			t.Errorf("third %+v", it)
		}
		if it := items[3]; it.Seq != 12 || it.Summary != `Session offered to the room: audio session "s1" from `+agent("alice") {
			t.Errorf("fourth %+v", it)
		}
		r.self = "olga" // an observer cannot answer room offers
		if items := watch(t, p, r, 0); len(items) != 0 {
			t.Errorf("observer items %+v", items)
		}
	})
}

type sessionsOut struct {
	RoomID   string `json:"room_id"`
	Complete bool   `json:"complete"`
	Sessions []struct {
		SessionID    string   `json:"session_id"`
		State        string   `json:"state"`
		OfferEventID string   `json:"offer_event_id"`
		Offerer      string   `json:"offerer"`
		To           []string `json:"to"`
		Media        []string `json:"media"`
		Topology     string   `json:"topology"`
		Transfers    []struct {
			TransferID string `json:"transfer_id"`
			FileName   string `json:"file_name"`
			SizeBytes  int64  `json:"size_bytes"`
		} `json:"transfers"`
		Answers []struct {
			Actor         string   `json:"actor"`
			AcceptedMedia []string `json:"accepted_media"`
		} `json:"answers"`
		ClosedBy []string `json:"closed_by"`
	} `json:"sessions"`
	Ended int `json:"ended"`
}

func TestRealtimeSessionsTool(t *testing.T) {
	t.Parallel()
	forBuilds(t, realtimeDir, func(t *testing.T, p *plugin.Plugin) {
		r, ev := sessionRoom()
		r.add("session.answer", "me", answerPayload("s1", ev["s1"], "accepted_media", []string{"audio"}))
		r.add("session.close", "alice", obj{"session_id": "s3"}) // s3's only target declines
		var out sessionsOut
		text := call(t, p, r, "sessions", nil, &out)
		var got []string
		for _, s := range out.Sessions {
			got = append(got, s.SessionID+":"+s.State)
		}
		if strings.Join(got, " ") != "s6:offered s2:offered s1:answered" || out.Ended != 3 || !out.Complete {
			t.Fatalf("sessions %v %+v", got, out)
		}
		s1 := out.Sessions[2]
		if s1.Offerer != agent("bob") || s1.OfferEventID != ev["s1"] || s1.Topology != "peer_to_peer" || len(s1.Transfers) != 1 ||
			s1.Transfers[0].FileName != "bench.csv" || s1.Transfers[0].SizeBytes != 2048 || len(s1.Answers) != 1 ||
			s1.Answers[0].Actor != agent("me") || strings.Join(s1.Answers[0].AcceptedMedia, ",") != "audio" {
			t.Errorf("s1 %+v", s1)
		}
		if strings.Contains(text, "v=0") || strings.Contains(text, "candidate") {
			t.Errorf("the text shows SDP:\n%s", text)
		}
		for _, want := range []string{
			"Sessions in room " + roomID + ", newest first:",
			`- "s6" (audio, offered) offered by you to the room (offer ` + ev["s6"] + ")",
			`- "s1" (audio+video+file, answered) offered by ` + agent("bob") + " to you (offer " + ev["s1"] + "); answered by you; files: bench.csv",
			"(3 ended sessions not shown; include_ended lists them)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}
		call(t, p, r, "sessions", obj{"include_ended": true}, &out)
		got = nil
		for _, s := range out.Sessions {
			got = append(got, s.SessionID+":"+s.State)
		}
		if strings.Join(got, " ") != "s6:offered s5:closed s4:expired s3:declined s2:offered s1:answered" || out.Ended != 0 {
			t.Errorf("all sessions %v", got)
		}
		call(t, p, r, "sessions", obj{"session_id": "s5"}, &out)
		if len(out.Sessions) != 1 || out.Sessions[0].State != "closed" || strings.Join(out.Sessions[0].ClosedBy, ",") != agent("bob") {
			t.Errorf("one session %+v", out.Sessions)
		}
		if got := callError(t, p, "sessions", obj{"room_id": roomID, "session_id": "s9"}, toolContext(t, p, "sessions", r)); !strings.Contains(got, `no session "s9"`) {
			t.Errorf("unknown session: %q", got)
		}
	})
}
