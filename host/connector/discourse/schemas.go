package discourse

import (
	"context"
	"encoding/json"

	"apconnect/host/capability"
	"apconnect/host/engine"
	"apconnect/host/proto/adp"
	"apconnect/schemas"
)

// payloadDefs map the event types to their payload definitions in the
// bundled schema (the reference SDK's schema_get table).
var payloadDefs = [][2]string{
	{"room.create", "roomCreatePayload"}, {"room.update", "roomUpdatePayload"}, {"room.join", "roomJoinPayload"},
	{"room.join.request", "roomJoinRequestPayload"}, {"room.join.review", "roomJoinReviewPayload"},
	{"room.leave", "reasonPayload"}, {"room.close", "reasonPayload"}, {"room.cancel", "reasonPayload"},
	{"room.member.role.update", "roomMemberRoleUpdatePayload"}, {"room.member.remove", "roomMemberRemovePayload"},
	{"message.create", "messageCreatePayload"}, {"type.define", "typeDeclaration"},
}

// Schemas returns the payload schemas of the Discourse event types (of
// q.Type only when set), with the registered packs; with q.RoomID, also
// the custom types of that known room from its verified local state.
func (c *Module) Schemas(ctx context.Context, q engine.SchemaQuery) (*engine.Schemas, error) {
	doc, err := schemas.ProtocolSchema(Protocol)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	entries, err := engine.PayloadSchemas(doc, payloadDefs, q.Type)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	if q.RoomID != "" {
		custom, err := c.roomSchemas(ctx, q)
		if err != nil {
			return nil, err
		}
		entries = append(entries, custom...)
	}
	if q.Type != "" && len(entries) == 0 {
		return nil, &engine.Error{Code: CodeTypeNotDefined,
			Message: "event type " + q.Type + " is not a " + Protocol + " event; for a room's custom types pass room_id (and host) of a room opened locally",
			Data:    map[string]any{"type": q.Type}}
	}
	var packs struct {
		Packs []json.RawMessage `json:"packs"`
	}
	if err := json.Unmarshal(adp.RegisteredPacksJSON(), &packs); err != nil {
		return nil, engine.Wrap(err)
	}
	if packs.Packs == nil {
		packs.Packs = []json.RawMessage{}
	}
	return &engine.Schemas{Entries: entries, RegisteredPacks: packs.Packs}, nil
}

// roomSchemas returns the custom types of a room held locally.
func (c *Module) roomSchemas(ctx context.Context, q engine.SchemaQuery) ([]engine.SchemaEntry, error) {
	rr, err := c.resolve(ctx, q.Host, q.RoomID, false)
	if err != nil {
		return nil, err
	}
	if rr.row == nil || !rr.row.HasSnapshot {
		return nil, &engine.Error{Code: CodeRoomNotOpen, Message: "room " + q.RoomID + " has no verified local state; open it with agent_protocols_room_state or agent_protocols_room_open first"}
	}
	if err := c.Allow(rr.h.origin, capability.DiscourseRead); err != nil {
		return nil, err
	}
	st, err := c.loadStateRow(ctx, rr.row)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	var out []engine.SchemaEntry
	if st.Room != nil {
		for _, t := range st.Room.Types {
			if q.Type == "" || q.Type == t.Type {
				out = append(out, engine.SchemaEntry{Type: t.Type, Schema: deepCopy(t.Schema)})
			}
		}
	}
	return out, nil
}

// deepCopy deep-copies a decoded JSON object ({} for nil).
func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return map[string]any{}
	}
	return out
}
