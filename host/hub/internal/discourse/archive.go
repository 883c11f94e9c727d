package discourse

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"net/http"
	"strconv"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
	"apconnect/host/text"
)

// archive is one consistent view of a room's archive: the manifest and the
// records it commits to, read in one transaction.
type archive struct {
	manifest map[string]any
	room     *adp.Room
	tx       *sql.Tx // open read transaction; records are streamed from it
	lastSeq  int64
}

// openArchive reads a room's archive for agent, enforcing the read
// permissions of ADP 15. through, when positive, pins the archive to the
// records up to that seq (the formats URLs of a room that has not ended
// carry it, so the JSONL matches the manifest it was listed in). The caller
// closes a.tx.
func (s *Service) openArchive(ctx context.Context, roomID, agent string, through int64) (*archive, error) {
	e, unlock, err := s.readRoom(ctx, roomID)
	if err != nil {
		return nil, err
	}
	err = readEventsAllowed(e.room, agent, roomID, "reading the archive")
	room := e.room.Clone()
	unlock()
	if err != nil {
		return nil, err
	}
	if through <= 0 || through > room.Last.Seq {
		// The manifest commits to the records the room state it lists packs
		// from has applied (a record committed since is not in room).
		through = room.Last.Seq
	}
	now := s.now()
	status := room.StatusAt(now)
	final := status == adp.RoomEnded || status == adp.RoomCancelled
	var archived sql.NullInt64
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT archived_at FROM adp_rooms WHERE id = ?`, roomID).Scan(&archived); err != nil {
		return nil, err
	}
	if final && !archived.Valid {
		// The archive of an ended room is generated once (ADP 18); fix
		// its generation time if the housekeeping loop has not yet.
		if err := s.db.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE adp_rooms SET archived_at = ? WHERE id = ? AND archived_at IS NULL`, now, roomID)
			return err
		}); err != nil {
			return nil, err
		}
	}
	tx, err := s.db.Reader().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	a := &archive{room: room, tx: tx}
	if err := a.read(ctx, s, roomID, now, final, through); err != nil {
		tx.Rollback()
		return nil, err
	}
	return a, nil
}

func (a *archive) read(ctx context.Context, s *Service, roomID string, now int64, final bool, through int64) error {
	var archivedAt sql.NullInt64
	if err := a.tx.QueryRowContext(ctx, `SELECT archived_at FROM adp_rooms WHERE id = ?`, roomID).Scan(&archivedAt); err != nil {
		return err
	}
	var lastHash string
	if err := a.tx.QueryRowContext(ctx, `SELECT seq, hash FROM adp_records WHERE room_id = ? AND seq <= ? ORDER BY seq DESC LIMIT 1`,
		roomID, through).Scan(&a.lastSeq, &lastHash); err != nil {
		return err
	}
	generated := now
	if final && archivedAt.Valid {
		generated = archivedAt.Int64
	}
	url := s.RoomURL(roomID)
	pin := ""
	if !final {
		pin = "?last_seq=" + strconv.FormatInt(a.lastSeq, 10)
	}
	packs, err := packDocuments(ctx, a.tx, a.room, a.lastSeq)
	if err != nil {
		return err
	}
	a.manifest = map[string]any{
		"protocol": Protocol, "type": adp.ArchiveManifestType, "room_id": roomID, "url": url,
		"generated_at": generated, "last_seq": a.lastSeq, "last_hash": lastHash,
		"formats": map[string]any{
			"jsonl":    url + "/archive.jsonl" + pin,
			"markdown": url + "/archive.md" + pin,
		},
		"extra": map[string]any{"status": string(a.room.StatusAt(generated)), "final": final},
	}
	if len(packs) > 0 {
		listed := make([]any, len(packs))
		for i, p := range packs {
			listed[i] = map[string]any{"pack": p.URL, "digest": p.Digest, "url": packDocURL(url, p.Index)}
		}
		a.manifest["packs"] = listed
	}
	return nil
}

// packDocURL is where the archive serves the n-th external pack document a
// room imported: GET {room}/archive/packs/{n}, the document's exact bytes.
func packDocURL(roomURL string, n int) string {
	return roomURL + "/archive/packs/" + strconv.Itoa(n)
}

// records streams the archive's records in seq order.
func (a *archive) records(ctx context.Context, each func(raw []byte) error) error {
	rows, err := a.tx.QueryContext(ctx, `SELECT record FROM adp_records WHERE room_id = ? AND seq <= ? ORDER BY seq`,
		a.manifest["room_id"], a.lastSeq)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return err
		}
		if err := each(raw); err != nil {
			return err
		}
	}
	return rows.Err()
}

// archiveRequest reads the room and the optional last_seq pin of an archive
// request and opens the archive.
func (s *Service) archiveRequest(w http.ResponseWriter, r *http.Request, pinAllowed bool) (*archive, bool) {
	q := r.URL.Query()
	allowed := []string{}
	if pinAllowed {
		allowed = append(allowed, "last_seq")
	}
	if err := hubhttp.CheckQuery(q, allowed...); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return nil, false
	}
	var through int64
	if q.Has("last_seq") {
		n, err := strconv.ParseInt(q.Get("last_seq"), 10, 64)
		if err != nil || n < 1 || n > identity.MaxSafeInteger {
			hubhttp.WriteError(w, r, s.logger, invalidParam("last_seq", "last_seq must be a positive integer"))
			return nil, false
		}
		through = n
	}
	a, err := s.openArchive(r.Context(), r.PathValue("room_id"), hubhttp.AgentID(r.Context()), through)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return nil, false
	}
	return a, true
}

// archiveManifest serves GET /v1/rooms/{id}/archive: the recommended
// manifest of ADP 18 with its jsonl and markdown formats. An ended (or
// cancelled) room's archive is final and its generated_at fixed; a room
// still scheduled or active gets a provisional manifest of its records so
// far (extra.final false), whose format URLs pin last_seq.
func (s *Service) archiveManifest(w http.ResponseWriter, r *http.Request) {
	a, ok := s.archiveRequest(w, r, false)
	if !ok {
		return
	}
	defer a.tx.Rollback()
	hubhttp.WriteJSON(w, http.StatusOK, a.manifest)
}

// archiveJSONL serves GET /v1/rooms/{id}/archive.jsonl, the manifest's
// formats.jsonl: the server records in seq order, one per line, and nothing
// else (ADP 18 as SDK 0.12.6 reads it; older hubs put the manifest and the
// pack documents first). The pack documents are served at the manifest's
// packs[].url.
func (s *Service) archiveJSONL(w http.ResponseWriter, r *http.Request) {
	a, ok := s.archiveRequest(w, r, true)
	if !ok {
		return
	}
	defer a.tx.Rollback()
	w.Header().Set("Content-Type", "application/jsonl")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	bw := bufio.NewWriter(w)
	err := a.records(r.Context(), func(raw []byte) error {
		bw.Write(raw)
		return bw.WriteByte('\n')
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		s.logger.Warn("archive stream failed", "room", r.PathValue("room_id"), "err", err)
	}
}

// archivePack serves GET /v1/rooms/{id}/archive/packs/{n}: the exact bytes
// of the n-th external pack document the room imported (its digest covers
// them), under the read permissions of the archive (ADP 15; a request JWT
// for rooms that are not public).
func (s *Service) archivePack(w http.ResponseWriter, r *http.Request) {
	if err := hubhttp.CheckQuery(r.URL.Query()); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	roomID := r.PathValue("room_id")
	raw := r.PathValue("n")
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 || strconv.Itoa(n) != raw {
		hubhttp.WriteError(w, r, s.logger, hubhttp.Errorf(identity.CodeNotFound, "no archived pack %q", text.Truncate(raw, 20)))
		return
	}
	e, unlock, err := s.readRoom(r.Context(), roomID)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	err = readEventsAllowed(e.room, hubhttp.AgentID(r.Context()), roomID, "reading the archive")
	room := e.room.Clone()
	unlock()
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	packs, err := packDocuments(r.Context(), s.db.Reader(), room, room.Last.Seq)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	if n >= len(packs) {
		hubhttp.WriteError(w, r, s.logger, hubhttp.Errorf(identity.CodeNotFound, "room %s has no archived pack %d", roomID, n))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(packs[n].Document)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(packs[n].Document)
}

// archiveMarkdown serves GET /v1/rooms/{id}/archive.md: a human-readable
// Markdown export in which everything an agent wrote is inside a code span
// or a fenced code block, so no raw HTML, link or image from a payload is
// ever rendered (ADP 21).
func (s *Service) archiveMarkdown(w http.ResponseWriter, r *http.Request) {
	a, ok := s.archiveRequest(w, r, true)
	if !ok {
		return
	}
	defer a.tx.Rollback()
	var recs []*adp.Record
	err := a.records(r.Context(), func(raw []byte) error {
		rec, err := adp.ParseRecord(raw)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	md := renderMarkdown(a.manifest, a.room, recs)
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8; variant=CommonMark")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(md)
}
