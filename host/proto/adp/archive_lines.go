package adp

import (
	"fmt"

	"apconnect/host/identity"
	"apconnect/host/text"
)

// Archive layouts: how an archive's record log and pack documents are laid
// out. A reader names the one it read.
const (
	// ArchiveLayoutCurrent is ADP 18 as SDK 0.12.6 reads it: the manifest
	// at {room}/archive, its formats.jsonl holding one server record per
	// line and nothing else, and every external pack document at its
	// manifest.packs[].url.
	ArchiveLayoutCurrent = "current"
	// ArchiveLayoutSelfContained is the layout older apconnect hubs
	// served: one JSON Lines file with the manifest line first, then a pack
	// document line ({"type":"room.archive.pack","pack","digest","document"})
	// per external pack, then the records.
	ArchiveLayoutSelfContained = "self-contained"
	// ArchiveLayoutRecordsOnly is a JSON Lines file of records read without
	// its manifest (a current-layout formats.jsonl on its own): nothing
	// commits to the end of its chain.
	ArchiveLayoutRecordsOnly = "records-only"
)

// Line types of a JSON Lines archive: the "type" member of the
// self-contained layout's manifest line and pack document lines. A record
// line has no "type" member.
const (
	ArchiveManifestType = "room.archive"      // the manifest (also its type member)
	ArchivePackLineType = "room.archive.pack" // a pack document line
)

// ArchiveLine is one non-blank line of a JSON Lines archive, parsed: exactly
// one of Manifest, Record and Pack is set when the line is valid.
type ArchiveLine struct {
	// Type is the line's type, also of a line that is not valid:
	// ArchiveManifestType or ArchivePackLineType for the self-contained
	// layout's lines, "" for a record line (and for one that is not a JSON
	// object or of an unknown type).
	Type     string
	Manifest *ArchiveManifest // a manifest line
	Record   *Record          // a record line (shape and record hash checked)
	Pack     string           // a pack document line: the pack's import URL …
	Document []byte           // … and the document's exact bytes
	// Seq is the seq member of a record line, also of one that is not a
	// valid record (0 when it has none), so a problem can name it.
	Seq int64
}

// ParseArchiveLine parses one non-blank line of a JSON Lines archive
// (without its line terminator): strict JSON (identity.ParseStrict), an
// object, and then by its "type" member a manifest (ParseArchiveManifest's
// checks), a pack document line (non-empty "pack" and string "document"
// members) or, with no "type", a server record (RecordFromValue). Any
// other type is refused. Errors are *Error: invalid_record for a line that
// is not JSON, not an object, of an unknown type or not a valid record;
// the manifest's code (invalid_request) for a bad manifest; pack_unavailable
// for a bad pack line. It keeps no state and is safe to call concurrently;
// the order of the lines is ArchiveLines' business.
func ParseArchiveLine(line []byte) (ArchiveLine, error) {
	v, err := identity.ParseStrict(line)
	if err != nil {
		e := jsonError(err, "", CodeInvalidRecord)
		e.Message = "not strict JSON: " + err.Error() // with the byte offset
		return ArchiveLine{}, e
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return ArchiveLine{}, newError(CodeInvalidRecord, "", "not a JSON object")
	}
	typ, typed := obj["type"]
	switch {
	case typ == ArchiveManifestType:
		m, err := archiveManifestFromValue(v)
		if err != nil {
			e := *AsError(err)
			e.Message = "manifest: " + e.Message
			return ArchiveLine{Type: ArchiveManifestType}, &e
		}
		return ArchiveLine{Type: ArchiveManifestType, Manifest: m}, nil
	case typ == ArchivePackLineType:
		u, _ := obj["pack"].(string)
		doc, ok := obj["document"].(string)
		if u == "" || !ok {
			return ArchiveLine{Type: ArchivePackLineType}, newError(CodePackUnavailable, "", "a pack document line needs \"pack\" and \"document\"")
		}
		return ArchiveLine{Type: ArchivePackLineType, Pack: u, Document: []byte(doc)}, nil
	case typed:
		return ArchiveLine{}, newError(CodeInvalidRecord, "/type", "unknown line type %s", text.Truncate(fmt.Sprint(typ), 80))
	}
	seq, _ := identity.IntValue(obj["seq"])
	rec, err := RecordFromValue(obj, "")
	if err != nil {
		return ArchiveLine{Seq: max(seq, 0)}, AsError(err)
	}
	return ArchiveLine{Record: rec, Seq: rec.Seq}, nil
}

// ParseArchiveLines is ParseArchiveLine on every line, on every core: the
// i-th result and error are those of lines[i].
func ParseArchiveLines(lines [][]byte) ([]ArchiveLine, []error) {
	out, errs := make([]ArchiveLine, len(lines)), make([]error, len(lines))
	parallel(len(lines), func(i int) { out[i], errs[i] = ParseArchiveLine(lines[i]) })
	return out, errs
}

// ArchiveLines holds the ordering rules of a JSON Lines archive, fed its
// non-blank lines in order, parsed: a manifest line only as the first line
// (the file is then in the self-contained layout, otherwise records-only);
// pack document lines only in the self-contained layout and before the
// first record; and a pack listed twice only with the same document (an
// identical line again is redundant and kept once; a different document
// for the same pack is refused, as VerifyArchive treats a pack that
// manifest.packs lists twice). Records are handed on as they come; their
// room and seq order are the reader's checks. The zero value is ready.
type ArchiveLines struct {
	lines    int // lines taken, valid or not
	manifest *ArchiveManifest
	packs    map[string][]byte
	records  bool // a record was taken
}

// Take takes the next line, as ParseArchiveLine returned it (err is its
// error: the line still counts). It returns the record of a record line to
// hand on, nil for a manifest or pack line, or an *Error: for a manifest or
// pack line out of place (whether valid or not), else err. A record line
// parsed without error is always handed on.
func (s *ArchiveLines) Take(line ArchiveLine, err error) (*Record, error) {
	s.lines++
	switch line.Type {
	case ArchiveManifestType:
		if s.lines != 1 {
			return nil, newError(CodeInvalidRequest, "", "a manifest line is only allowed first, in the self-contained layout")
		}
		if err != nil {
			return nil, err
		}
		s.manifest = line.Manifest
	case ArchivePackLineType:
		if s.manifest == nil {
			return nil, newError(CodePackUnavailable, "", "a pack document line belongs to the self-contained layout, after its manifest line")
		}
		if s.records {
			return nil, newError(CodePackUnavailable, "", "a pack document line after the records")
		}
		if err != nil {
			return nil, err
		}
		if prev, dup := s.packs[line.Pack]; dup {
			if string(prev) != string(line.Document) {
				return nil, newError(CodePackUnavailable, "", "two different documents for pack %s", text.Truncate(line.Pack, 200))
			}
			return nil, nil
		}
		if s.packs == nil {
			s.packs = map[string][]byte{}
		}
		s.packs[line.Pack] = line.Document
	default:
		if err != nil {
			return nil, err
		}
		s.records = true
		return line.Record, nil
	}
	return nil, nil
}

// Layout is ArchiveLayoutSelfContained once a manifest line was taken, and
// ArchiveLayoutRecordsOnly otherwise.
func (s *ArchiveLines) Layout() string {
	if s.manifest != nil {
		return ArchiveLayoutSelfContained
	}
	return ArchiveLayoutRecordsOnly
}

// Manifest is the manifest line's manifest; nil without one.
func (s *ArchiveLines) Manifest() *ArchiveManifest { return s.manifest }

// Packs are the pack document lines' documents by pack URL (nil without
// any): VerifyArchive's packDocs of a self-contained archive.
func (s *ArchiveLines) Packs() map[string][]byte { return s.packs }
