package plugin

import (
	"context"
	"slices"
	"strings"
)

type packInput struct {
	Op    string `json:"op"`
	NowMS int64  `json:"now_ms"`
	Name  string `json:"name"`
}

// Packs returns the type packs the plugin described at load.
func (p *Plugin) Packs() []Pack { return slices.Clone(p.desc.Packs) }

// Pack asks the plugin for one of its packs by ID ("<name>/<version>") or
// name, and checks that the answer is the pack it described. The write path
// expands the result into inline type definitions (after applying the ADP
// type schema profile) before signing room_create or type.define.
func (p *Plugin) Pack(ctx context.Context, id string) (*Pack, error) {
	name, version, _ := strings.Cut(id, "/")
	described := p.packs[name]
	if described == nil || (version != "" && version != described.Version) {
		return nil, p.err(CodeUnknown, OpPack, "the plugin provides no pack %q", id)
	}
	var out Pack
	err := p.roundTrip(ctx, OpPack, packInput{Op: "pack", NowMS: p.nowMS(), Name: name}, &out, func() error {
		if out.Name != described.Name || out.Version != described.Version {
			return p.err(CodeInvalidOutput, OpPack, "asked for pack %s, got %s", described.ID(), out.ID())
		}
		if err := checkPack(&out); err != nil {
			return p.err(CodeInvalidOutput, OpPack, "%v", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
