package profile

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"apconnect/host/engine"
	proto "apconnect/host/proto/profile"
	"apconnect/host/room"
	"apconnect/host/text"
	"apconnect/schemas"
)

// Protocol is the protocol this module speaks, and TypeProfileUpdate its
// one event type.
const (
	Protocol          = proto.Protocol
	TypeProfileUpdate = proto.TypeUpdate
)

// DefaultProfileTTL is how long a verified profile serves member views
// before it is read again.
const DefaultProfileTTL = 10 * time.Minute

// CodeStaleProfile: a profile service served an older profile than the one
// pinned for that Agent ID (a smaller nonce, or the same nonce with another
// envelope): a rollback, refused (0.12.6 stale_profile).
const CodeStaleProfile = proto.CodeStaleProfile

// maxProfileFetches bounds the profile fetches in flight for one call.
const maxProfileFetches = 8

// SessionID identifies the MCP session a call comes from.
type SessionID = engine.SessionID

// MemberProfile is the descriptive metadata of a verified profile.
type MemberProfile = room.MemberProfile

// Tools are the Profile tools.
func (c *Module) Tools() []engine.Tool {
	return []engine.Tool{
		engine.ToolSpec[ProfilesGetInput, *ProfilesGetResult]{Name: "agent_protocols_profiles_get",
			Call: func(ctx context.Context, sess SessionID, in *ProfilesGetInput) (*ProfilesGetResult, error) {
				return c.ProfilesGet(ctx, sess, *in)
			},
			Summary: func(_ *ProfilesGetInput, r *ProfilesGetResult) string {
				s := fmt.Sprintf("%s from %s, each verified against its signed update", text.Plural(int64(len(r.Profiles)), "profile", "profiles"), r.ProfileService)
				if len(r.Missing) > 0 {
					s += "; " + text.Plural(int64(len(r.Missing)), "Agent ID has", "Agent IDs have") + " no profile there"
				}
				return s + "."
			}}.Tool(),
		engine.ToolSpec[ProfileHistoryInput, *ProfileHistoryResult]{Name: "agent_protocols_profile_history",
			Call: func(ctx context.Context, sess SessionID, in *ProfileHistoryInput) (*ProfileHistoryResult, error) {
				return c.ProfileHistory(ctx, sess, *in)
			},
			Summary: func(_ *ProfileHistoryInput, r *ProfileHistoryResult) string {
				s := fmt.Sprintf("%s of %s from %s, verified, newest first", text.Plural(int64(len(r.Envelopes)), "profile update", "profile updates"),
					r.AgentID, r.ProfileService)
				if r.NextCursor != "" {
					s += "; more with cursor " + r.NextCursor
				}
				return s + "."
			}}.Tool(),
		engine.ToolSpec[ProfileUpdateInput, *ProfileUpdateResult]{Name: "agent_protocols_profile_update",
			Call: func(ctx context.Context, sess SessionID, in *ProfileUpdateInput) (*ProfileUpdateResult, error) {
				return c.ProfileUpdate(ctx, sess, *in)
			},
			Summary: func(in *ProfileUpdateInput, _ *ProfileUpdateResult) string {
				return "Your profile is published to " + in.ProfileService + "."
			}}.Tool(),
	}
}

// Discover reads the Agent Profile discovery document of a configured
// origin (nil when it has none).
func (c *Module) Discover(ctx context.Context, origin string) (map[string]any, error) {
	ps, err := c.serviceClient(origin)
	if err != nil {
		return nil, err
	}
	d, err := ps.Discovery(ctx)
	if err != nil || d == nil {
		return nil, err
	}
	return d.Raw, nil
}

// payloadDefs maps the event type to its payload definition in the bundled
// schema (the reference SDK's schema_get table).
var payloadDefs = [][2]string{{TypeProfileUpdate, "profileUpdatePayload"}}

// Schemas returns the payload schema of profile.update.
func (c *Module) Schemas(ctx context.Context, q engine.SchemaQuery) (*engine.Schemas, error) {
	doc, err := schemas.ProtocolSchema(Protocol)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	return engine.ProtocolSchemas(Protocol, doc, payloadDefs, q.Type)
}

//go:embed instructions.md
var instructions string

// Instructions is the module's part of the server instructions.
func (c *Module) Instructions() string { return strings.TrimSpace(instructions) }
