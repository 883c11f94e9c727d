package plugin

import (
	"context"
	"slices"
)

type validateInput struct {
	Op       string       `json:"op"`
	NowMS    int64        `json:"now_ms"`
	Proposal Proposal     `json:"proposal"`
	Room     *RoomContext `json:"room"`
}

type validateOutput struct {
	OK     bool         `json:"ok"`
	Errors []FieldError `json:"errors"`
}

// ValidatedTypes returns the custom event types the plugin validates.
func (p *Plugin) ValidatedTypes() []string { return slices.Clone(p.desc.Validates) }

// ValidateEvent asks the plugin whether a proposed event of one of its
// validated types may be signed. It returns the plugin's refusals (empty
// when the event is fine), each with Plugin set. An error means the plugin
// could not give a verdict; the caller must fail closed and refuse writes
// of proposal.Type (and only of that type), naming the plugin.
func (p *Plugin) ValidateEvent(ctx context.Context, proposal Proposal, room *RoomContext) ([]FieldError, error) {
	if !p.validates[proposal.Type] {
		return nil, p.err(CodeUnknown, OpValidate, "the plugin does not validate %q", proposal.Type)
	}
	if room == nil {
		return nil, p.err(CodeInvalidConfig, OpValidate, "a room context is required")
	}
	if proposal.Payload == nil {
		proposal.Payload = map[string]any{}
	}
	var out validateOutput
	err := p.roundTrip(ctx, OpValidate, validateInput{Op: "validate", NowMS: p.nowMS(), Proposal: proposal, Room: room}, &out, func() error {
		if out.OK != (len(out.Errors) == 0) {
			return p.err(CodeInvalidOutput, OpValidate, "ok is %v but %d errors are listed", out.OK, len(out.Errors))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out.Errors {
		out.Errors[i].Plugin = p.desc.Name
	}
	return out.Errors, nil
}
