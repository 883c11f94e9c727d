package profile

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/engine"
	"apconnect/host/identity"
	"apconnect/host/store"
)

// ProfilesGetInput is the input of agent_protocols_profiles_get.
type ProfilesGetInput struct {
	ProfileService string   `json:"profile_service,omitempty"`
	IDs            []string `json:"ids,omitempty"`
}

// ProfilesGetResult is the result of agent_protocols_profiles_get: the
// verified profile documents, the Agent IDs the service has no profile for,
// and the service read.
type ProfilesGetResult struct {
	Profiles       []json.RawMessage `json:"profiles"`
	Missing        []string          `json:"missing"`
	ProfileService string            `json:"profile_service"`
}

// ProfileHistoryInput is the input of agent_protocols_profile_history.
type ProfileHistoryInput struct {
	ProfileService string `json:"profile_service,omitempty"`
	AgentID        string `json:"agent_id,omitempty"`
	Limit          int    `json:"limit,omitempty"`
	Cursor         string `json:"cursor,omitempty"`
}

// ProfileHistoryResult is the result of agent_protocols_profile_history:
// one page of verified profile.update envelopes, newest nonce first.
type ProfileHistoryResult struct {
	Envelopes      []*identity.Envelope `json:"envelopes"`
	ProfileService string               `json:"profile_service"`
	AgentID        string               `json:"agent_id"`
	NextCursor     string               `json:"next_cursor,omitempty"`
}

// defaultProfileService is the profile service a profile tool uses when the
// call names none: the identity's first, else the first configured host
// (a hub serves profiles on its own origin).
func (c *Module) defaultProfileService(svc string) (string, error) {
	if svc != "" {
		return svc, nil
	}
	if o := c.profileOrigins(); len(o) > 0 {
		return o[0], nil
	}
	return "", engine.Errorf(engine.CodeHostNotAllowed, "no profile service is configured for this identity")
}

// ProfilesGet is agent_protocols_profiles_get: the latest profiles of
// Agent IDs (default: the active one) from a profile service, each verified
// against its signed profile.update envelope. One batch read (POST
// {profile_batch}) says what the service has; a profile whose event_id is
// the one pinned locally is served from the pin, any other is verified from
// the service's latest signed update (GET {profiles}/{id}/events?limit=1)
// and pinned. Pins hold the greatest nonce seen per Agent ID, across
// services and restarts: a service answering with an older profile (smaller
// nonce, or the same nonce with another envelope) fails the call with
// stale_profile and the pin stays. Agent IDs the service does not know are
// listed in missing. Reads the host; signs nothing.
func (c *Module) ProfilesGet(ctx context.Context, sess SessionID, in ProfilesGetInput) (*ProfilesGetResult, error) {
	svc, err := c.defaultProfileService(in.ProfileService)
	if err != nil {
		return nil, err
	}
	ps, err := c.profileService(svc, capability.ProfileRead)
	if err != nil {
		return nil, err
	}
	svc = ps.Origin()
	if ctx, err = c.Need(ctx, svc, capability.ProfileRead); err != nil {
		return nil, err
	}
	ids := in.IDs
	if len(ids) == 0 {
		ids = []string{c.Self}
	}
	if len(ids) > client.MaxBatchIDs {
		return nil, engine.Invalid("at most %d ids per call", client.MaxBatchIDs)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !identity.ValidAgentID(id) {
			return nil, engine.Invalid("ids: %q is not a valid Agent ID", id)
		}
		if seen[id] {
			return nil, engine.Invalid("ids: %s is listed twice", id)
		}
		seen[id] = true
	}
	docs, err := ps.Batch(ctx, ids)
	if err != nil {
		return nil, engine.Wrap(err)
	}
	latest := map[string]string{} // Agent ID -> the event_id the service calls latest
	for _, d := range docs {
		latest[d.ID] = d.EventID
	}
	type answer struct {
		doc     json.RawMessage
		missing bool
		err     error
	}
	// Every id's answer, its error included, is kept in ids order, so the
	// error returned is the first in that order whatever the timing; no
	// fetch cancels another.
	answers := make([]answer, len(ids))
	var g errgroup.Group
	g.SetLimit(maxProfileFetches)
	for i, id := range ids {
		eventID, ok := latest[id]
		if !ok {
			answers[i].missing = true
			continue
		}
		g.Go(func() error {
			doc, missing, err := c.pinnedProfile(ctx, svc, id, eventID)
			answers[i] = answer{doc: doc, missing: missing, err: err}
			return nil
		})
	}
	_ = g.Wait() // the errors are in answers
	out := &ProfilesGetResult{Profiles: []json.RawMessage{}, Missing: []string{}, ProfileService: svc}
	for i, a := range answers {
		switch {
		case a.err != nil:
			return nil, a.err
		case a.missing:
			out.Missing = append(out.Missing, ids[i])
		default:
			out.Profiles = append(out.Profiles, a.doc)
		}
	}
	return out, nil
}

// pinnedProfile returns the verified document of agentID's latest profile
// on svc, which the service's batch read says has event_id eventID.
func (c *Module) pinnedProfile(ctx context.Context, svc, agentID, eventID string) (json.RawMessage, bool, error) {
	pinned, err := c.Store.Read().Profile(ctx, agentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, false, engine.Wrap(err)
	}
	if pinned != nil && pinned.EventID == eventID {
		return json.RawMessage(pinned.Document), false, nil
	}
	p, err := c.fetchProfile(ctx, svc, agentID)
	if err != nil {
		if ce := engine.AsError(err); ce.Code == engine.CodeNotFound {
			return nil, true, nil
		}
		return nil, false, engine.Wrap(err)
	}
	err = c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutProfile(ctx, p) })
	if errors.Is(err, store.ErrRollback) {
		data := map[string]any{"agent_id": agentID, "profile_service": svc, "served_nonce": p.Nonce, "served_event_id": p.EventID}
		if cur, err := c.Store.Read().Profile(ctx, agentID); err == nil {
			data["pinned_nonce"], data["pinned_event_id"] = cur.Nonce, cur.EventID
		}
		return nil, false, &engine.Error{Code: CodeStaleProfile, Message: svc + " served an older profile of " + agentID + " than the one already verified (rollback refused; the newer profile stays pinned)", Data: data}
	}
	if err != nil {
		return nil, false, engine.Wrap(err)
	}
	return json.RawMessage(p.Document), false, nil
}

// ProfileHistory is agent_protocols_profile_history: one page of an Agent
// ID's (default: the active one's) accepted profile.update envelopes from a
// profile service, newest nonce first. Every envelope must verify (hash and
// signature), be a profile.update signed by that Agent ID naming it as
// payload.id, and the nonces must strictly decrease; otherwise the call
// fails. An Agent ID without a profile has an empty history. An explicit history read never changes the pinned profile. Reads
// the host; signs nothing.
func (c *Module) ProfileHistory(ctx context.Context, sess SessionID, in ProfileHistoryInput) (*ProfileHistoryResult, error) {
	svc, err := c.defaultProfileService(in.ProfileService)
	if err != nil {
		return nil, err
	}
	ps, err := c.profileService(svc, capability.ProfileRead)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.Need(ctx, ps.Origin(), capability.ProfileRead); err != nil {
		return nil, err
	}
	agentID := in.AgentID
	if agentID == "" {
		agentID = c.Self
	}
	if !identity.ValidAgentID(agentID) {
		return nil, engine.Invalid("agent_id %q is not a valid Agent ID", agentID)
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 100)
	page, err := ps.History(ctx, agentID, limit, in.Cursor)
	if err != nil {
		if engine.AsError(err).Code == engine.CodeNotFound && in.Cursor == "" {
			// No profile: the history is empty.
			return &ProfileHistoryResult{Envelopes: []*identity.Envelope{}, ProfileService: ps.Origin(), AgentID: agentID}, nil
		}
		return nil, engine.Wrap(err)
	}
	out := &ProfileHistoryResult{Envelopes: []*identity.Envelope{}, ProfileService: ps.Origin(), AgentID: agentID, NextCursor: page.NextCursor}
	now := c.NowMS()
	var prev int64
	for i, env := range page.Items {
		if _, err := profileFromEnvelope(ps.Origin(), agentID, env, now); err != nil {
			e := engine.AsError(err)
			e.Data = engine.WithData(e.Data, "index", i)
			return nil, e
		}
		if i > 0 && env.Event.Nonce >= prev {
			return nil, &engine.Error{Code: identity.CodeInvalidEvent, Message: "profile history is not in strictly decreasing nonce order", Data: map[string]any{"index": i}}
		}
		prev = env.Event.Nonce
		out.Envelopes = append(out.Envelopes, env)
	}
	return out, nil
}

// PinnedProfile is the profile pinned locally for an Agent ID: the
// materialized document of the latest profile.update the connector
// verified, the signed envelope, its nonce and where it came from.
type PinnedProfile struct {
	AgentID        string          `json:"agent_id"`
	Profile        json.RawMessage `json:"profile"`
	Envelope       json.RawMessage `json:"envelope"`
	Nonce          int64           `json:"nonce"`
	EventID        string          `json:"event_id"`
	ProfileService string          `json:"profile_service"`
	VerifiedAt     int64           `json:"verified_at"`
}

// Pinned returns the profile pinned for an Agent ID, or store.ErrNotFound.
// Local state only.
func (c *Module) Pinned(ctx context.Context, agentID string) (*PinnedProfile, error) {
	p, err := c.Store.Read().Profile(ctx, agentID)
	if err != nil {
		return nil, err
	}
	return &PinnedProfile{AgentID: p.AgentID, Profile: json.RawMessage(p.Document), Envelope: json.RawMessage(p.Envelope), Nonce: p.Nonce,
		EventID: p.EventID, ProfileService: p.Service, VerifiedAt: p.FetchedAt}, nil
}

// ProfileUpdateInput is the input of agent_protocols_profile_update.
type ProfileUpdateInput struct {
	ProfileService string         `json:"profile_service"`
	Profile        map[string]any `json:"profile"`
}

// ProfileUpdateResult is the result of agent_protocols_profile_update.
type ProfileUpdateResult struct {
	Profile  map[string]any `json:"profile"`
	Envelope map[string]any `json:"envelope"`
}

// OutboxProfileUpdate is the outbox kind of profile updates.
const OutboxProfileUpdate = "profile_update"

// ProfileUpdate is agent_protocols_profile_update: sign a profile.update
// whose payload is the given profile with id set to the active Agent ID (a
// different id is refused) and submit it to a configured profile service.
// The accepted profile is pinned locally at its nonce.
func (c *Module) ProfileUpdate(ctx context.Context, sess engine.SessionID, in ProfileUpdateInput) (*ProfileUpdateResult, error) {
	if in.Profile == nil {
		return nil, engine.Invalid("profile must be an object")
	}
	ps, err := c.profileService(in.ProfileService, capability.ProfileWrite)
	if err != nil {
		return nil, err
	}
	origin := ps.Origin()
	p := engine.CloneMap(in.Profile)
	if id, ok := p["id"]; ok && id != c.Self {
		return nil, engine.Invalid("profile.id must be the active Agent ID %s", c.Self)
	}
	p["id"] = c.Self
	pv, err := engine.ObjectValue(p)
	if err != nil {
		return nil, engine.Invalid("profile: %v", err)
	}
	if _, err := c.Take("profile:update:"+origin, c.Config.Limits.ProfileUpdates(), time.Minute); err != nil {
		return nil, err
	}
	ev := identity.Event{Protocol: Protocol, Type: TypeProfileUpdate, Actor: c.Self, CreatedAt: c.NowMS(), Payload: pv}
	sent, err := engine.Submit(c.Engine, ctx, engine.Write{Kind: OutboxProfileUpdate, Origin: origin, Capability: capability.ProfileWrite, Event: ev},
		func(ctx context.Context, env *identity.Envelope) (*client.ProfileUpdateResult, error) {
			return ps.UpdateProfile(ctx, env)
		})
	if err != nil {
		return nil, err
	}
	res, env := sent.Result, sent.Envelope
	raw, _ := json.Marshal(res.Profile.Raw)
	c.Done(ctx, sent.Outbox, raw)
	c.pinOwn(ctx, origin, env)
	doc := res.Profile.Raw
	if doc == nil {
		doc = map[string]any{}
	}
	return &ProfileUpdateResult{Profile: doc, Envelope: envelopeValue(env)}, nil
}

// pinOwn pins the agent's own accepted profile.
func (c *Module) pinOwn(ctx context.Context, origin string, env *identity.Envelope) {
	sp, err := profileFromEnvelope(origin, c.Self, env, c.NowMS())
	if err != nil {
		return
	}
	if err := c.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutProfile(ctx, sp) }); err != nil && !errors.Is(err, store.ErrRollback) {
		c.Log.Warn("pinning own profile", "err", err)
	}
}

// resubmitter resubmits profile updates whose outcome stayed unknown
// (engine.Submitter).
type resubmitter struct{ c *Module }

func (r resubmitter) Resubmit(ctx context.Context, e *store.OutboxEntry, env *identity.Envelope) (engine.Outcome, []byte, error) {
	ps, err := r.c.profileService(e.Service, capability.ProfileWrite)
	if err != nil {
		return engine.Refused, nil, err
	}
	res, err := ps.UpdateProfile(ctx, env)
	if err != nil {
		if engine.UnknownOutcome(err) {
			return engine.Unknown, nil, err
		}
		return engine.Refused, nil, err
	}
	r.c.pinOwn(ctx, ps.Origin(), env)
	raw, _ := json.Marshal(res.Profile.Raw)
	return engine.Accepted, raw, nil
}

// envelopeValue is a signed envelope as a JSON object.
func envelopeValue(env *identity.Envelope) map[string]any {
	raw, err := json.Marshal(env)
	if err != nil {
		return map[string]any{}
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return map[string]any{}
	}
	return m
}
