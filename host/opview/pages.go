package opview

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"apconnect/host/termsafe"
	"apconnect/host/text"
)

// pageDef is one page: where it is served, its template and title, the
// topics whose changes refresh it, and what it reads.
type pageDef struct {
	name    string // template file, and the nav entry it lights
	pattern string
	title   string
	topics  []string
	load    func(ctx context.Context, src Source, r *http.Request) (any, error)
	// under is the nav entry a page of one thing lights (it has none of
	// its own); "" for a page in the nav.
	under string
}

// pageList are the pages, in nav order.
var pageList = []pageDef{
	{name: "status", pattern: "/{$}", title: "Status", topics: []string{TopicStatus, TopicRooms, TopicInbox, TopicOutbox},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Status(ctx) }},
	{name: "rooms", pattern: "/rooms", title: "Rooms", topics: []string{TopicRooms, TopicStatus},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Rooms(ctx) }},
	{name: "room", pattern: "/rooms/{key}", title: "Room", topics: []string{TopicRooms, TopicInbox, TopicStatus}, under: "rooms",
		load: func(ctx context.Context, src Source, r *http.Request) (any, error) {
			key, err := pathID(r, "key")
			if err != nil {
				return nil, err
			}
			return src.Room(ctx, key)
		}},
	{name: "inbox", pattern: "/inbox", title: "Inbox", topics: []string{TopicInbox, TopicRooms},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Inbox(ctx) }},
	{name: "outbox", pattern: "/outbox", title: "Outbox", topics: []string{TopicOutbox, TopicRooms},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Outbox(ctx) }},
	{name: "wake", pattern: "/wake", title: "Wake", topics: []string{TopicWake, TopicInbox},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Wake(ctx) }},
	{name: "mail", pattern: "/mail", title: "Mail", topics: []string{TopicMail},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Mail(ctx) }},
	{name: "letter", pattern: "/mail/letters/{id}", title: "Letter", topics: []string{TopicMail}, under: "mail",
		load: func(ctx context.Context, src Source, r *http.Request) (any, error) {
			id, err := pathID(r, "id")
			if err != nil {
				return nil, err
			}
			return src.Letter(ctx, id)
		}},
	{name: "knowledge", pattern: "/knowledge", title: "Knowledge", topics: []string{TopicKnowledge},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Knowledge(ctx) }},
	{name: "delegations", pattern: "/delegations", title: "Delegations", topics: []string{TopicDelegation},
		load: func(ctx context.Context, src Source, _ *http.Request) (any, error) { return src.Delegations(ctx) }},
}

// pathID reads a positive local id from the path (ErrNotFound otherwise).
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, ErrNotFound
	}
	return id, nil
}

// navEntry is a link of the navigation bar.
type navEntry struct {
	Name, Path, Title string
}

// pageData is what the layout renders.
type pageData struct {
	Title    string
	Nav      []navEntry
	Active   string
	Topics   string
	Identity string
	AgentID  string
	Now      int64
	Data     any
	// Error pages.
	Status int
	Lines  []string
}

func (h *Handler) nav() []navEntry {
	var out []navEntry
	for _, p := range pageList {
		if p.under != "" {
			continue
		}
		path := p.pattern
		if path == "/{$}" {
			path = "/"
		}
		out = append(out, navEntry{Name: p.name, Path: path, Title: p.title})
	}
	return out
}

// page serves one page, whole or (with ?fragment=1, for the script's live
// refresh) its main content only.
func (h *Handler) page(p pageDef) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := p.load(r.Context(), h.src, r)
		if errors.Is(err, ErrNotFound) {
			h.errorPage(w, r, http.StatusNotFound, "Local state holds no such thing.")
			return
		}
		if err != nil {
			h.o.Logger.Warn("operator view: reading state", "page", p.name, "err", err)
			h.errorPage(w, r, http.StatusInternalServerError, "Reading local state failed: "+err.Error())
			return
		}
		active := p.name
		if p.under != "" {
			active = p.under
		}
		pd := &pageData{Title: p.title, Nav: h.nav(), Active: active, Topics: strings.Join(p.topics, " "),
			Identity: h.o.Identity, AgentID: h.o.AgentID, Now: h.o.Now().UnixMilli(), Data: data}
		name := "layout"
		if r.URL.Query().Get(fragmentQuery) != "" {
			name = "content"
		}
		h.render(w, p.name, name, http.StatusOK, pd)
	}
}

// errorPage answers status with a page saying why.
func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, lines ...string) {
	pd := &pageData{Title: http.StatusText(status), Nav: h.nav(), Identity: h.o.Identity, AgentID: h.o.AgentID,
		Now: h.o.Now().UnixMilli(), Status: status, Lines: lines}
	name := "layout"
	if r.URL.Query().Get(fragmentQuery) != "" {
		name = "content"
	}
	h.render(w, "error", name, status, pd)
}

// render executes a page's template into a buffer first, so a failure
// mid-way sends a 500 rather than half a page.
func (h *Handler) render(w http.ResponseWriter, page, name string, status int, pd *pageData) {
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, name, pd); err != nil {
		h.o.Logger.Error("operator view: rendering", "page", page, "err", err)
		http.Error(w, "Internal Server Error: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// parsePages parses the layout with each page's template.
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	names := []string{"error"}
	for _, p := range pageList {
		names = append(names, p.name)
	}
	for _, n := range names {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFiles, "templates/"+n+".html"); err != nil {
			return nil, err
		}
		out[n] = t
	}
	return out, nil
}

// The template functions. Every untrusted string goes through html/template's
// contextual escaping; inert also makes the characters that could hide or
// reorder text (controls, bidirectional overrides, zero-width characters)
// visible escapes.
var funcs = template.FuncMap{
	"inert":     inert,
	"short":     short,
	"when":      when,
	"ago":       ago,
	"until":     until,
	"join":      func(s []string) string { return strings.Join(s, ", ") },
	"lower":     strings.ToLower,
	"hasPrefix": strings.HasPrefix,
	"contains":  strings.Contains,
	"roomURL":   func(key int64) string { return "/rooms/" + strconv.FormatInt(key, 10) },
	"letterURL": func(id int64) string { return "/mail/letters/" + strconv.FormatInt(id, 10) },
	"bytes":     byteSize,
	"int64":     func(n int) int64 { return int64(n) },
	"maxLetter": func() int { return MaxLetterRunes },
	"plural":    text.Plural,
}

// inert escapes, line by line, every character termsafe escapes for a
// terminal (keeping the line breaks, which the page shows as such).
func inert(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = termsafe.Escape(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// short shortens a long identifier (an Agent ID) for a table cell; the
// page shows the whole value in the cell's title.
func short(s string) string {
	s = inert(s)
	if r := []rune(s); len(r) > 28 {
		return string(r[:18]) + "…" + string(r[len(r)-6:])
	}
	return s
}

// when formats a Unix ms time in local time ("" for 0).
func when(ms int64) string {
	if ms <= 0 {
		return "never"
	}
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05")
}

// ago says how long before now a Unix ms time was.
func ago(now, ms int64) string {
	if ms <= 0 {
		return "never"
	}
	d := time.Duration(now-ms) * time.Millisecond
	if d < 0 {
		return "just now"
	}
	return span(d) + " ago"
}

// until says how long after now a Unix ms time is.
func until(now, ms int64) string {
	if ms <= 0 {
		return "—"
	}
	d := time.Duration(ms-now) * time.Millisecond
	if d <= 0 {
		return "expired " + span(-d) + " ago"
	}
	return "in " + span(d)
}

func span(d time.Duration) string {
	switch {
	case d < 2*time.Second:
		return "1 s"
	case d < 2*time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < 2*time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " days"
}

// byteSize says how many bytes n is, in B, KiB or MiB.
func byteSize(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1024*1024:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MiB"
}
