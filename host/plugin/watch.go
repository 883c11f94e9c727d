package plugin

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"

	"apconnect/host/text"
)

type watchInput struct {
	Op      string       `json:"op"`
	NowMS   int64        `json:"now_ms"`
	Room    *RoomContext `json:"room"`
	Records []Record     `json:"records"`
}

type watchOutput struct {
	Items []watchItem `json:"items"`
}

type watchItem struct {
	Kind             string   `json:"kind"`
	Seq              int64    `json:"seq"`
	Summary          string   `json:"summary"`
	Priority         string   `json:"priority"`
	RequiresResponse bool     `json:"requires_response"`
	Reason           string   `json:"reason"`
	SuggestedTools   []string `json:"suggested_tools"`
}

var toolNamePattern = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// WatchedTypes returns the event types whose records the plugin watches.
func (p *Plugin) WatchedTypes() []string { return slices.Clone(p.desc.Watches) }

// Watches reports whether the plugin watches records of type typ.
func (p *Plugin) Watches(typ string) bool { return p.watches[typ] }

// Watch shows the plugin the records of one room that it watches (others,
// and redacted records, are left out; records must be verified and in seq
// order) and returns its inbox items, completed from the records. Large
// batches are split by MaxWatchBatch and MaxInputBytes. A suggested tool
// that names one of the plugin's own tools by its short name is expanded to
// the MCP name; Registry.Watch further drops names of tools that do not
// exist. On error no items are returned; the caller skips the plugin for
// this batch and reports the error.
func (p *Plugin) Watch(ctx context.Context, records []Record, room *RoomContext) ([]InboxItem, error) {
	if len(p.watches) == 0 {
		return nil, p.err(CodeUnknown, OpWatch, "the plugin watches nothing")
	}
	if room == nil {
		return nil, p.err(CodeInvalidConfig, OpWatch, "a room context is required")
	}
	var batch []Record
	for i := range records {
		if p.watches[records[i].Type] && !records[i].Redacted {
			batch = append(batch, records[i])
		}
	}
	var items []InboxItem
	for len(batch) > 0 {
		n := min(len(batch), p.limits.MaxWatchBatch)
		got, err := p.watchChunk(ctx, batch[:n], room)
		if err != nil {
			return nil, err
		}
		items = append(items, got...)
		batch = batch[n:]
	}
	return items, nil
}

// watchChunk runs one watch call, halving the chunk while its envelope is
// larger than MaxInputBytes.
func (p *Plugin) watchChunk(ctx context.Context, chunk []Record, room *RoomContext) ([]InboxItem, error) {
	input, err := json.Marshal(watchInput{Op: "watch", NowMS: p.nowMS(), Room: room, Records: chunk})
	if err != nil {
		return nil, p.err(CodeInvalidConfig, OpWatch, "cannot encode the input envelope: %v", err)
	}
	if len(input) > p.limits.MaxInputBytes && len(chunk) > 1 {
		half := len(chunk) / 2
		a, err := p.watchChunk(ctx, chunk[:half], room)
		if err != nil {
			return nil, err
		}
		c, err := p.watchChunk(ctx, chunk[half:], room)
		return append(a, c...), err
	}
	bySeq := make(map[int64]*Record, len(chunk))
	for i := range chunk {
		bySeq[chunk[i].Seq] = &chunk[i]
	}
	var out watchOutput
	err = p.roundTripBytes(ctx, OpWatch, input, &out, func() error {
		seen := map[int64]bool{}
		for _, it := range out.Items {
			if bySeq[it.Seq] == nil {
				return p.err(CodeInvalidOutput, OpWatch, "item names seq %d, which is not in the batch", it.Seq)
			}
			if seen[it.Seq] {
				return p.err(CodeInvalidOutput, OpWatch, "two items name seq %d", it.Seq)
			}
			seen[it.Seq] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	items := make([]InboxItem, 0, len(out.Items))
	for _, it := range out.Items {
		rec := bySeq[it.Seq]
		item := InboxItem{
			Plugin:           p.desc.Name,
			Kind:             InboxItemKind,
			RoomID:           room.RoomID,
			Seq:              rec.Seq,
			EventID:          rec.EventID,
			Actor:            rec.Actor,
			Type:             rec.Type,
			AcceptedAt:       rec.AcceptedAt,
			Summary:          text.Truncate(it.Summary, MaxSummaryRunes),
			Priority:         it.Priority,
			RequiresResponse: it.RequiresResponse,
			Reason:           it.Reason,
		}
		if item.Priority == "" {
			item.Priority = "normal"
		}
		for _, t := range it.SuggestedTools {
			if _, own := p.tools[t]; own {
				t = p.desc.Name + "_" + t
			}
			if toolNamePattern.MatchString(t) && !slices.Contains(item.SuggestedTools, t) {
				item.SuggestedTools = append(item.SuggestedTools, t)
			}
		}
		items = append(items, item)
	}
	return items, nil
}
