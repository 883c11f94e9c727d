package connector

import (
	"context"
	"encoding/json"

	"apconnect/host/connector/mail"
	"apconnect/host/connector/profile"
	"apconnect/host/engine"
)

// profileLookup gives the Mail module the Profile module's verified profile
// reads (mail_resolve with profile_service): the modules never import each
// other.
func profileLookup(p *profile.Module) mail.ProfileLookup {
	return func(ctx context.Context, service, agentID string) (map[string]any, error) {
		res, err := p.ProfilesGet(ctx, "", profile.ProfilesGetInput{ProfileService: service, IDs: []string{agentID}})
		if err != nil {
			return nil, err
		}
		if len(res.Profiles) == 0 {
			return map[string]any{}, nil
		}
		var doc map[string]any
		if err := json.Unmarshal(res.Profiles[0], &doc); err != nil {
			return nil, engine.Wrap(err)
		}
		return doc, nil
	}
}
