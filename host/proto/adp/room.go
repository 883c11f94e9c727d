package adp

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// Visibility is a room's visibility (8.2).
type Visibility string

// The three visibilities.
const (
	VisibilityPublic     Visibility = "public"
	VisibilityRestricted Visibility = "restricted"
	VisibilityPrivate    Visibility = "private"
)

// Departure says how an inactive member's membership ended.
type Departure string

// Departures.
const (
	DepartureLeft    Departure = "left"
	DepartureRemoved Departure = "removed"
	DepartureBanned  Departure = "banned"
)

// Member is a room member, current or past.
type Member struct {
	AgentID     string `json:"agent_id"`              // the member's Agent ID
	Role        Role   `json:"role"`                  // current role
	Perspective string `json:"perspective,omitempty"` // declared perspective, from the join or request
	// Active is true from the joining record (room.create for the creator,
	// room.join, or an approving room.join.review) until a leave or removal.
	Active    bool  `json:"active"`
	JoinedSeq int64 `json:"joined_seq"` // seq of the latest joining record
	// LeftSeq and Departure are set while inactive.
	LeftSeq   int64     `json:"left_seq,omitempty"`
	Departure Departure `json:"departure,omitempty"` // how the membership ended
	// LastEventSeq is the seq of the member's latest non-redacted record.
	LastEventSeq int64 `json:"last_event_seq,omitempty"`
}

// PackImport remembers a pack import of the room, so a host can ship the
// external pack documents with the archive (18).
type PackImport struct {
	Seq    int64    `json:"seq"`              // the declaring record (1 for room.create)
	Use    string   `json:"use,omitempty"`    // registered pack id
	Pack   string   `json:"pack,omitempty"`   // external pack URL
	Digest string   `json:"digest,omitempty"` // external pack digest
	Types  []string `json:"types"`            // the types it materialized
}

// RecordHead is the latest record of the room: the room resource's seq,
// pre_hash, hash and accepted_at (15).
type RecordHead struct {
	Seq        int64  `json:"seq"`                // latest seq
	PreHash    string `json:"pre_hash,omitempty"` // its pre_hash ("" at seq 1)
	Hash       string `json:"hash"`               // its record hash
	AcceptedAt int64  `json:"accepted_at"`        // its accepted_at
}

// Link returns the chain position of the latest record.
func (h RecordHead) Link() Link { return Link{Seq: h.Seq, Hash: h.Hash} }

// Room is the materialized state of a room: the contract, the lifecycle, the
// members, bans, reviewed join requests, the type registry, the head and the
// latest record — everything the ADP rules need to check the next write, and
// nothing they do not. It is plain data: JSON round trips are lossless (a
// store snapshots it and reloads it), and it is changed only by Apply.
// Compiled schemas, pack resolvers and limits live in Rules, never here.
type Room struct {
	ID        string `json:"id"`         // room id
	Creator   string `json:"creator"`    // Agent ID of the room.create actor
	CreatedAt int64  `json:"created_at"` // room.create's created_at

	// The contract (8.1, 8.4). Optional text fields are "" when absent or
	// cleared; guidance is untrusted text, never instructions.
	Host       string         `json:"host"`               // host API origin named by room.create
	Topic      string         `json:"topic"`              // room topic
	Agenda     string         `json:"agenda,omitempty"`   // agenda
	Guidance   string         `json:"guidance,omitempty"` // behavioral guidance
	Visibility Visibility     `json:"visibility"`         // public, restricted or private
	StartTime  int64          `json:"start_time"`         // effective start_time, Unix ms
	EndTime    int64          `json:"end_time"`           // effective end_time, Unix ms
	Tags       []string       `json:"tags,omitempty"`     // discovery tags
	Language   string         `json:"language,omitempty"` // primary language
	Policy     Policy         `json:"policy"`             // room policy (invitations included)
	Extra      map[string]any `json:"extra,omitempty"`    // opaque application data from room.create

	// Types is the materialized type registry (12).
	Types Registry `json:"types"`
	// Imports lists the pack imports, in order.
	Imports []PackImport `json:"imports,omitempty"`

	// Closed is set by a room.close or room.cancel record.
	Closed *Closure `json:"closed,omitempty"`

	// Members by Agent ID, active or not. The creator is always present.
	Members map[string]*Member `json:"members"`
	// Bans maps banned Agent IDs to the seq of the banning record.
	Bans map[string]int64 `json:"bans,omitempty"`
	// ReviewedRequests maps join request IDs to the seq of their review;
	// a request is reviewed at most once.
	ReviewedRequests map[string]int64 `json:"reviewed_requests,omitempty"`

	// Head is the room head (5.1): the latest genesis, contract or
	// control record (messages and signals do not move it).
	Head Link `json:"head"`
	// Last is the latest record.
	Last RecordHead `json:"last"`
}

// UnmarshalJSON reads a snapshot: strict I-JSON, numbers kept exact
// (json.Number inside opaque values), and a sanity check of the result.
func (r *Room) UnmarshalJSON(data []byte) error {
	if _, err := identity.ParseStrict(data); err != nil {
		return jsonError(err, "", CodeInvalidRequest)
	}
	type plain Room
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return &Error{Code: CodeInvalidRequest, Message: "room snapshot: " + err.Error(), Err: err}
	}
	room := Room(p)
	if err := room.validateSnapshot(); err != nil {
		return err
	}
	room.normalize()
	*r = room
	return nil
}

// validateSnapshot rejects snapshots no Apply sequence could produce in
// their basic invariants.
func (r *Room) validateSnapshot() error {
	switch {
	case !ValidRoomID(r.ID):
		return newError(CodeInvalidRequest, "/id", "room snapshot has an invalid id")
	case !identity.ValidAgentID(r.Creator):
		return newError(CodeInvalidRequest, "/creator", "room snapshot has an invalid creator")
	case r.Members[r.Creator] == nil:
		return newError(CodeInvalidRequest, "/members", "room snapshot lacks its creator")
	case r.Last.Seq < 1 || r.Head.Seq < 1 || r.Head.Seq > r.Last.Seq:
		return newError(CodeInvalidRequest, "/last", "room snapshot has an inconsistent head or last record")
	}
	for id, m := range r.Members {
		if m == nil || m.AgentID != id || !m.Role.Valid() {
			return newError(CodeInvalidRequest, "/members/"+text.EscapePointer(id), "room snapshot has an invalid member")
		}
	}
	return nil
}

// normalize gives empty collections one representation, so equal states
// marshal to equal bytes.
func (r *Room) normalize() {
	if len(r.Bans) == 0 {
		r.Bans = nil
	}
	if len(r.ReviewedRequests) == 0 {
		r.ReviewedRequests = nil
	}
	if len(r.Tags) == 0 {
		r.Tags = nil
	}
	if len(r.Imports) == 0 {
		r.Imports = nil
	}
	if r.Types == nil {
		r.Types = Registry{}
	}
}

// Clone returns a deep copy of the room.
func (r *Room) Clone() *Room {
	c := *r
	c.Tags = slices.Clone(r.Tags)
	c.Policy = r.Policy.clone()
	c.Extra = cloneObject(r.Extra)
	c.Types = r.Types.clone()
	c.Imports = make([]PackImport, len(r.Imports))
	for i, imp := range r.Imports {
		imp.Types = slices.Clone(imp.Types)
		c.Imports[i] = imp
	}
	if r.Closed != nil {
		cl := *r.Closed
		c.Closed = &cl
	}
	c.Members = make(map[string]*Member, len(r.Members))
	for k, m := range r.Members {
		mc := *m
		c.Members[k] = &mc
	}
	c.Bans = maps.Clone(r.Bans)
	c.ReviewedRequests = maps.Clone(r.ReviewedRequests)
	c.normalize()
	return &c
}

// Member returns a copy of a member's entry, active or not.
func (r *Room) Member(agentID string) (Member, bool) {
	m, ok := r.Members[agentID]
	if !ok {
		return Member{}, false
	}
	return *m, true
}

// ActiveMembers returns copies of the active members, sorted by Agent ID.
func (r *Room) ActiveMembers() []Member {
	var out []Member
	for _, id := range sortedKeys(r.Members) {
		if m := r.Members[id]; m.Active {
			out = append(out, *m)
		}
	}
	return out
}

// IsBanned reports whether an agent is banned from the room.
func (r *Room) IsBanned(agentID string) bool {
	_, ok := r.Bans[agentID]
	return ok
}

// Resource returns the room resource of section 15 (GET /v1/rooms/{id}) as
// a JSON object value: the contract, status at now, the materialized type
// registry, the latest record's fields and the head. url is the canonical
// room URL; it is omitted when "".
func (r *Room) Resource(now int64, url string) map[string]any {
	m := map[string]any{
		"id":          r.ID,
		"status":      string(r.StatusAt(now)),
		"creator":     r.Creator,
		"created_at":  r.CreatedAt,
		"host":        r.Host,
		"topic":       r.Topic,
		"visibility":  string(r.Visibility),
		"start_time":  r.StartTime,
		"end_time":    r.EndTime,
		"policy":      r.Policy.Value(),
		"types":       r.Types.Value(),
		"seq":         r.Last.Seq,
		"hash":        r.Last.Hash,
		"accepted_at": r.Last.AcceptedAt,
		"head":        map[string]any{"seq": r.Head.Seq, "hash": r.Head.Hash},
	}
	if url != "" {
		m["url"] = url
	}
	if r.Last.PreHash != "" {
		m["pre_hash"] = r.Last.PreHash
	} else {
		m["pre_hash"] = nil
	}
	if r.Agenda != "" {
		m["agenda"] = r.Agenda
	}
	if r.Guidance != "" {
		m["guidance"] = r.Guidance
	}
	if r.Tags != nil {
		tags := make([]any, len(r.Tags))
		for i, t := range r.Tags {
			tags[i] = t
		}
		m["tags"] = tags
	}
	if r.Language != "" {
		m["language"] = r.Language
	}
	if r.Extra != nil {
		m["extra"] = cloneJSON(r.Extra)
	}
	return m
}
