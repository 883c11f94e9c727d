package plugin

// Decoders of the input envelopes, built on decoder (scan.go). Unknown
// members are skipped, so a host may add members in a later minor revision
// of the ABI.

// Member names the decoders look for, packed for call-free comparison.
var (
	kAcceptedAt       = packKey("accepted_at")
	kActor            = packKey("actor")
	kAgentID          = packKey("agent_id")
	kArguments        = packKey("arguments")
	kContext          = packKey("context")
	kCreatedAt        = packKey("created_at")
	kCreator          = packKey("creator")
	kEventID          = packKey("event_id")
	kHash             = packKey("hash")
	kHead             = packKey("head")
	kHost             = packKey("host")
	kKind             = packKey("kind")
	kMembers          = packKey("members")
	kMentions         = packKey("mentions")
	kName             = packKey("name")
	kNowMS            = packKey("now_ms")
	kPayload          = packKey("payload")
	kPerspective      = packKey("perspective")
	kProposal         = packKey("proposal")
	kRecords          = packKey("records")
	kRecordsTruncated = packKey("records_truncated")
	kRedacted         = packKey("redacted")
	kReferences       = packKey("references")
	kRole             = packKey("role")
	kRoom             = packKey("room")
	kRoomID           = packKey("room_id")
	kSelf             = packKey("self")
	kSeq              = packKey("seq")
	kStatus           = packKey("status")
	kType             = packKey("type")
	kTypes            = packKey("types")
)

// record decodes one record into r (decoding in place avoids copying a
// large struct, which costs calls into the runtime). Names are told apart
// by length first: each comparison that fails is a jump, and jumps are what
// cost inside the sandbox.
func (d *decoder) record(r *Record) {
	if !d.open('{') {
		return
	}
	if d.fastRecord(r) {
		return
	}
	for d.more('}') {
		k := d.key()
		switch k.n {
		case 3:
			if k.a == kSeq.a {
				r.Seq = d.int()
				continue
			}
		case 4:
			if k.a == kType.a {
				r.Type = d.str()
				continue
			}
		case 5:
			if k.a == kActor.a {
				r.Actor = d.str()
				continue
			}
		case 7:
			if k.a == kPayload.a {
				r.Payload = d.raw()
				continue
			}
		case 8:
			switch k.a {
			case kEventID.a:
				r.EventID = d.str()
				continue
			case kMentions.a:
				r.Mentions = d.strs()
				continue
			case kRedacted.a:
				r.Redacted = d.bool()
				continue
			}
		case 10:
			if k.a == kCreatedAt.a && k.b == kCreatedAt.b {
				r.CreatedAt = d.int()
				continue
			}
		case 11:
			if k.a == kAcceptedAt.a && k.b == kAcceptedAt.b {
				r.AcceptedAt = d.int()
				continue
			}
		}
		d.skip()
	}
}

func (d *decoder) records() []Record {
	if !d.open('[') {
		return nil
	}
	var out []Record
	for d.more(']') {
		out = append(out, Record{})
		d.record(&out[len(out)-1])
		if d.err != nil {
			return nil
		}
	}
	return out
}

func (d *decoder) self() *Self {
	s := &Self{}
	if !d.open('{') {
		return s
	}
	for d.more('}') {
		switch k := d.key(); {
		case k.is(kAgentID):
			s.AgentID = d.str()
		case k.is(kRole):
			s.Role = d.str()
		default:
			d.skip()
		}
	}
	return s
}

func (d *decoder) members() []Member {
	if !d.open('[') {
		return nil
	}
	var out []Member
	for d.more(']') {
		var m Member
		if !d.open('{') {
			return nil
		}
		for d.more('}') {
			switch k := d.key(); {
			case k.is(kAgentID):
				m.AgentID = d.str()
			case k.is(kRole):
				m.Role = d.str()
			case k.is(kPerspective):
				m.Perspective = d.str()
			default:
				d.skip()
			}
		}
		out = append(out, m)
	}
	return out
}

func (d *decoder) types() []TypeInfo {
	if !d.open('[') {
		return nil
	}
	var out []TypeInfo
	for d.more(']') {
		var t TypeInfo
		if !d.open('{') {
			return nil
		}
		for d.more('}') {
			switch k := d.key(); {
			case k.is(kType):
				t.Type = d.str()
			case k.is(kKind):
				t.Kind = d.str()
			case k.is(kStatus):
				t.Status = d.str()
			default:
				d.skip()
			}
		}
		out = append(out, t)
	}
	return out
}

func (d *decoder) head() *Head {
	h := &Head{}
	if !d.open('{') {
		return h
	}
	for d.more('}') {
		switch k := d.key(); {
		case k.is(kSeq):
			h.Seq = d.int()
		case k.is(kHash):
			h.Hash = d.str()
		default:
			d.skip()
		}
	}
	return h
}

func (d *decoder) room() *Room {
	r := &Room{}
	if !d.open('{') {
		return r
	}
	for d.more('}') {
		switch k := d.key(); {
		case k.is(kRoomID):
			r.RoomID = d.str()
		case k.is(kHost):
			r.Host = d.str()
		case k.is(kStatus):
			r.Status = d.str()
		case k.is(kCreator):
			r.Creator = d.str()
		case k.is(kHead):
			r.Head = d.head()
		case k.is(kSelf):
			r.Self = d.self()
		case k.is(kMembers):
			r.Members = d.members()
		case k.is(kTypes):
			r.Types = d.types()
		case k.is(kRecords):
			r.Records = d.records()
		case k.is(kRecordsTruncated):
			r.RecordsTruncated = d.bool()
		default:
			d.skip()
		}
	}
	return r
}

func decodeWatch(b []byte) (*WatchRequest, error) {
	d := &decoder{b: b}
	req := &WatchRequest{}
	if d.open('{') {
		for d.more('}') {
			switch k := d.key(); {
			case k.is(kNowMS):
				req.NowMS = d.int()
			case k.is(kRoom):
				req.Room = d.room()
			case k.is(kRecords):
				req.Records = d.records()
			default:
				d.skip()
			}
		}
	}
	if req.Room == nil {
		req.Room = &Room{}
	}
	return req, d.err
}

func decodeValidate(b []byte) (*ValidateRequest, error) {
	d := &decoder{b: b}
	req := &ValidateRequest{}
	if d.open('{') {
		for d.more('}') {
			switch k := d.key(); {
			case k.is(kNowMS):
				req.NowMS = d.int()
			case k.is(kRoom):
				req.Room = d.room()
			case k.is(kProposal):
				if !d.open('{') {
					break
				}
				for d.more('}') {
					switch k := d.key(); {
					case k.is(kType):
						req.Type = d.str()
					case k.is(kActor):
						req.Actor = d.str()
					case k.is(kPayload):
						req.Payload = d.raw()
					case k.is(kMentions):
						req.Mentions = d.strs()
					case k.is(kReferences):
						req.References = d.strs()
					default:
						d.skip()
					}
				}
			default:
				d.skip()
			}
		}
	}
	if req.Room == nil {
		req.Room = &Room{}
	}
	return req, d.err
}

func decodeTool(b []byte) (*ToolRequest, error) {
	d := &decoder{b: b}
	req := &ToolRequest{}
	if d.open('{') {
		for d.more('}') {
			switch k := d.key(); {
			case k.is(kNowMS):
				req.NowMS = d.int()
			case k.is(kName):
				req.Name = d.str()
			case k.is(kArguments):
				req.Arguments = d.raw()
			case k.is(kContext):
				if !d.open('{') {
					break
				}
				for d.more('}') {
					switch k := d.key(); {
					case k.is(kSelf):
						req.Self = d.self()
					case k.is(kRoom):
						req.Room = d.room()
					default:
						d.skip()
					}
				}
			default:
				d.skip()
			}
		}
	}
	return req, d.err
}

// decodeName returns the "name" member of an envelope (pack op).
func decodeName(b []byte) (string, error) {
	d := &decoder{b: b}
	name := ""
	if d.open('{') {
		for d.more('}') {
			if d.key().is(kName) {
				name = d.str()
			} else {
				d.skip()
			}
		}
	}
	return name, d.err
}
