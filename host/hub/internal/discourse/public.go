package discourse

import (
	"database/sql"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/identity"
	"apconnect/host/proto/adp"
)

// statusSQL derives a room's state from the hub clock (ADP 7) in SQL, as
// adp.Room.StatusAt does: a close or cancel record wins, then end_time,
// then start_time.
const statusSQL = `CASE WHEN closed IS NOT NULL THEN closed WHEN end_time <= :now THEN 'ended'
	WHEN start_time <= :now THEN 'active' ELSE 'scheduled' END`

// publicPosition is a position in the public room order.
type publicPosition struct {
	Rank int64  `json:"r"`
	Key  int64  `json:"k"`
	ID   string `json:"i"`
}

// publicRooms serves GET /v1/rooms (and its alias GET /v1/rooms/public),
// the public room list of ADP 17: public and restricted
// rooms (never private ones) as room resources, filtered by status, tag,
// keyword, creator, starts_after, ends_before and language. Without a
// status filter it lists active and scheduled rooms. Order: active rooms
// first, most recent activity first; then scheduled rooms, soonest start
// first; then ended and cancelled rooms, most recently ended first.
func (s *Service) publicRooms(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := hubhttp.CheckQuery(q, "status", "tag", "keyword", "creator", "starts_after", "ends_before", "language", "limit", "cursor"); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	limit, err := hubhttp.ParseLimit(q, s.limits.ListPageDefault, s.limits.ListPageMax)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	where, args, err := publicFilters(q)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	scope := "public|" + filterScope(q)
	var after publicPosition
	after.Rank = -1
	if q.Has("cursor") {
		if err := hubhttp.DecodeCursor(q.Get("cursor"), scope, &after); err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
	}
	now := s.now()
	query := `SELECT id, rank, key FROM (
		SELECT id, CASE status WHEN 'active' THEN 0 WHEN 'scheduled' THEN 1 WHEN 'ended' THEN 2 ELSE 3 END AS rank,
			CASE status WHEN 'active' THEN -last_accepted_at WHEN 'scheduled' THEN start_time ELSE -end_time END AS key
		FROM (SELECT *, ` + statusSQL + ` AS status FROM adp_rooms WHERE visibility IN ('public', 'restricted')) WHERE ` + where + `)
		WHERE (rank, key, id) > (:arank, :akey, :aid) ORDER BY rank, key, id LIMIT :limit`
	named := []any{
		sql.Named("now", now), sql.Named("arank", after.Rank), sql.Named("akey", after.Key),
		sql.Named("aid", after.ID), sql.Named("limit", limit+1),
	}
	rows, err := s.db.Reader().QueryContext(r.Context(), query, append(named, args...)...)
	if err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	var page []publicPosition
	for rows.Next() {
		var p publicPosition
		if err := rows.Scan(&p.ID, &p.Rank, &p.Key); err != nil {
			rows.Close()
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
		page = append(page, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		hubhttp.WriteError(w, r, s.logger, err)
		return
	}
	next := ""
	if len(page) > limit {
		page = page[:limit]
		next = hubhttp.EncodeCursor(scope, page[limit-1])
	}
	out := make([]map[string]any, 0, len(page))
	for _, p := range page {
		e, unlock, err := s.readRoom(r.Context(), p.ID)
		if err != nil {
			hubhttp.WriteError(w, r, s.logger, err)
			return
		}
		out = append(out, s.roomResource(e.room, now))
		unlock()
	}
	hubhttp.WriteList(w, out, next)
}

// publicFilters turns the ADP 17 filters into a WHERE clause over the
// inner query (which has a status column) and its named arguments.
func publicFilters(q url.Values) (string, []any, error) {
	conds := []string{}
	var args []any
	switch st := q.Get("status"); {
	case !q.Has("status"):
		conds = append(conds, `status IN ('active', 'scheduled')`)
	case st == string(adp.RoomScheduled) || st == string(adp.RoomActive) || st == string(adp.RoomEnded) || st == string(adp.RoomCancelled):
		conds = append(conds, `status = :status`)
		args = append(args, sql.Named("status", st))
	default:
		return "", nil, invalidParam("status", "status must be scheduled, active, ended or cancelled")
	}
	if q.Has("tag") {
		conds = append(conds, `EXISTS (SELECT 1 FROM json_each(tags) WHERE value = :tag)`)
		args = append(args, sql.Named("tag", q.Get("tag")))
	}
	if q.Has("keyword") {
		k := strings.TrimSpace(q.Get("keyword"))
		if k == "" {
			return "", nil, invalidParam("keyword", "keyword must not be blank")
		}
		conds = append(conds, `(topic LIKE :kw ESCAPE '\' OR agenda LIKE :kw ESCAPE '\'
			OR EXISTS (SELECT 1 FROM json_each(tags) WHERE value LIKE :kw ESCAPE '\'))`)
		args = append(args, sql.Named("kw", "%"+likeEscape(k)+"%"))
	}
	if q.Has("creator") {
		if !identity.ValidAgentID(q.Get("creator")) {
			return "", nil, invalidParam("creator", "creator must be a canonical Agent ID")
		}
		conds = append(conds, `creator = :creator`)
		args = append(args, sql.Named("creator", q.Get("creator")))
	}
	for _, p := range []struct{ name, cond string }{
		{"starts_after", `start_time > :starts_after`},
		{"ends_before", `end_time < :ends_before`},
	} {
		if !q.Has(p.name) {
			continue
		}
		v := q.Get(p.name)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > identity.MaxSafeInteger || v[0] == '+' {
			return "", nil, invalidParam(p.name, "%s must be a Unix millisecond timestamp", p.name)
		}
		conds = append(conds, p.cond)
		args = append(args, sql.Named(p.name, n))
	}
	if q.Has("language") {
		if q.Get("language") == "" {
			return "", nil, invalidParam("language", "language must not be empty")
		}
		conds = append(conds, `lower(language) = lower(:language)`)
		args = append(args, sql.Named("language", q.Get("language")))
	}
	return strings.Join(conds, " AND "), args, nil
}

// filterScope is the canonical form of a query's filters: a cursor is
// valid only with the filters it was made for.
func filterScope(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		if k != "cursor" && k != "limit" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(q.Get(k)) + "&")
	}
	return b.String()
}

// likeEscape escapes LIKE's wildcards with a backslash.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
