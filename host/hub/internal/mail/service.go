package mail

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"apconnect/host/hub/internal/hubdb"
	"apconnect/host/hub/internal/hubhttp"
	"apconnect/host/hub/internal/hubsvc"
	"apconnect/host/identity"
	rules "apconnect/host/proto/mail"
)

// The relay's fixed paths (the SDK's MailClient builds them from the card
// route; discovery never supplies them).
const (
	PathDiscovery   = rules.DiscoveryPath
	PathMailboxes   = "/v1/mailboxes"
	PathMyMailboxes = "/v1/me/mailboxes"
)

// Service is the Agent Mail relay.
type Service struct {
	origin   string
	db       *hubdb.DB
	pipeline *hubhttp.Pipeline
	skew     time.Duration
	clock    func() time.Time
	limits   Limits
	logger   *slog.Logger

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// New builds the relay on the hub's plumbing and starts its pruning.
func New(env hubsvc.Env, limits Limits) (*Service, error) {
	if env.DB == nil || env.Pipeline == nil || env.Auth == nil {
		return nil, errors.New("mail: DB, Pipeline and Auth are required")
	}
	origin, err := identity.NormalizeOrigin(env.Origin)
	if err != nil {
		return nil, fmt.Errorf("mail: %w", err)
	}
	env = env.WithDefaults()
	clock, logger := env.Clock, env.Logger
	skew := env.Auth.Skew
	if skew == 0 {
		skew = identity.DefaultClockSkew
	}
	s := &Service{origin: origin, db: env.DB, pipeline: env.Pipeline, skew: skew, clock: clock,
		limits: limits.withDefaults(), logger: logger}
	parent := env.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	s.stop = cancel
	s.wg.Go(func() { s.pruneLoop(ctx) })
	return s, nil
}

// Close stops the pruning and waits for it.
func (s *Service) Close() error {
	s.stop()
	s.wg.Wait()
	return nil
}

// Limits returns the quotas in force (defaults filled in).
func (s *Service) Limits() Limits { return s.limits }

// Register mounts the relay's endpoints on mux.
func (s *Service) Register(mux *http.ServeMux) {
	m := func(h map[string]http.Handler) http.Handler { return hubhttp.Methods(s.logger, h) }
	f := func(h http.HandlerFunc) http.Handler { return h }
	mux.Handle(PathDiscovery, m(map[string]http.Handler{http.MethodGet: f(s.discovery)}))
	mux.Handle(PathMailboxes, m(map[string]http.Handler{http.MethodPost: f(s.publish)}))
	mux.Handle(PathMailboxes+"/{mailbox_id}/card", m(map[string]http.Handler{http.MethodGet: f(s.card)}))
	mux.Handle(PathMailboxes+"/{mailbox_id}/packets", m(map[string]http.Handler{
		http.MethodPost: f(s.deliver), http.MethodGet: f(s.list)}))
	mux.Handle(PathMailboxes+"/{mailbox_id}/packets/{packet_id}", m(map[string]http.Handler{http.MethodDelete: f(s.delete)}))
	mux.Handle(PathMyMailboxes, m(map[string]http.Handler{http.MethodGet: f(s.mailboxes)}))
}

// nowMS is the hub clock in Unix ms.
func (s *Service) nowMS() int64 { return s.clock().UnixMilli() }

func (s *Service) fail(w http.ResponseWriter, r *http.Request, err error) {
	hubhttp.WriteError(w, r, s.logger, err)
}

// discovery serves the informational {protocol, service} document.
func (s *Service) discovery(w http.ResponseWriter, r *http.Request) {
	hubhttp.WriteJSON(w, http.StatusOK, rules.Discovery(s.origin))
}

// publish serves POST /v1/mailboxes: the card's own checks (ParseCard),
// then, in one transaction, CheckPublish against the current card and the
// shared live nonce last.
func (s *Service) publish(w http.ResponseWriter, r *http.Request) {
	body, err := hubhttp.ReadBody(w, r, rules.MaxPacketBodyBytes)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	card, err := rules.ParseCard(body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var rec rules.CardRecord
	err = s.db.Write(r.Context(), func(tx *sql.Tx) error {
		now := s.clock()
		box, err := loadMailbox(r.Context(), tx, card.MailboxID())
		if err != nil {
			return err
		}
		action, err := rules.CheckPublish(card, box.current(), s.origin, now.UnixMilli())
		if err != nil {
			return publishError(err)
		}
		if action == rules.CardResubmit {
			rec = box.record()
			return nil
		}
		if err := s.pipeline.LiveNonce(r.Context(), tx, card.Owner(), card.Nonce(), now); err != nil {
			return err
		}
		rec = rules.CardRecord{Card: card, AcceptedAt: now.UnixMilli()}
		return putCard(r.Context(), tx, card, rec.AcceptedAt)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, rec.Value())
}

// publishError gives CheckPublish's nonce_not_greater (a card not newer
// than the current one) the Max-Seen-Nonce header every nonce refusal
// carries, keeping the SDK's data.max_nonce.
func publishError(err error) error {
	var ie *identity.Error
	if !errors.As(err, &ie) || ie.Code != identity.CodeNonceNotGreater {
		return err
	}
	maxNonce, _ := ie.Data["max_nonce"].(int64)
	e := hubhttp.AsError(err)
	return e.WithHeader(hubhttp.HeaderMaxSeenNonce, strconv.FormatInt(maxNonce, 10))
}

// card serves GET /v1/mailboxes/{id}/card: the current card record.
func (s *Service) card(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("mailbox_id")
	if err := rules.CheckPathID(id, rules.IDBytes); err != nil {
		s.fail(w, r, err)
		return
	}
	box, err := loadMailbox(r.Context(), s.db.Reader(), id)
	if err == nil && box == nil {
		err = identity.NewError(rules.CodeMailboxUnavailable, "", "unknown mailbox")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusOK, box.record().Value())
}

// deliver serves POST /v1/mailboxes/{id}/packets: the path's ID before the
// body (as the SDK), the packet's own checks (ParsePacket), then, in one
// transaction, CheckDelivery with the mailbox's current card, the packet's
// tombstone and its live usage; a fresh packet is stored with the next seq
// and a tombstone.
func (s *Service) deliver(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("mailbox_id")
	if err := rules.CheckPathID(id, rules.IDBytes); err != nil {
		s.fail(w, r, err)
		return
	}
	body, err := hubhttp.ReadBody(w, r, rules.MaxPacketBodyBytes)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := rules.ParsePacket(body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var res rules.DeliveryResult
	err = s.db.Write(r.Context(), func(tx *sql.Tx) error {
		now := s.nowMS()
		d := rules.Delivery{Origin: s.origin, MailboxID: id, Packet: p, Quota: s.limits.quota(), Now: now}
		box, err := loadMailbox(r.Context(), tx, id)
		if err != nil {
			return err
		}
		if box != nil {
			d.Current = box.card
			if d.Tombstone, err = tombstone(r.Context(), tx, id, p.ID(), now); err != nil {
				return err
			}
			if d.Usage, err = liveUsage(r.Context(), tx, id, box.lastSeq, now); err != nil {
				return err
			}
		}
		var fresh bool
		if res, fresh, err = rules.CheckDelivery(d); err != nil || !fresh {
			return err
		}
		return storePacket(r.Context(), tx, id, p, d.Usage.LastSeq+1, now)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteJSON(w, http.StatusAccepted, res.Value())
}

// bearer returns the request's bearer token ("" when there is none or the
// header is not one Bearer token: the rules then answer invalid_token).
func bearer(r *http.Request) string {
	values := r.Header.Values("Authorization")
	if len(values) != 1 {
		return ""
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.ContainsAny(token, " \t") {
		return ""
	}
	return token
}

// ownerBox checks an owner call on the path's mailbox as the SDK's relay
// does (CheckOwnerCall: path ID, token, mailbox known, token's issuer its
// owner) and returns the mailbox.
func (s *Service) ownerBox(r *http.Request) (*mailbox, string, error) {
	id := r.PathValue("mailbox_id")
	var box *mailbox
	if rules.ValidID(id, rules.IDBytes) {
		var err error
		if box, err = loadMailbox(r.Context(), s.db.Reader(), id); err != nil {
			return nil, "", err
		}
	}
	if _, err := rules.CheckOwnerCall(id, bearer(r), s.origin, box.current(), s.nowMS(), s.skew); err != nil {
		return nil, "", err
	}
	return box, id, nil
}

// list serves GET /v1/mailboxes/{id}/packets: the owner's live packets in
// seq order after the cursor (the previous page's last seq).
func (s *Service) list(w http.ResponseWriter, r *http.Request) {
	_, id, err := s.ownerBox(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, after, err := pageParams(r.URL.Query(), func(c string) (int64, error) { return rules.ParsePacketCursor(c) })
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, next, err := packetPage(r.Context(), s.db.Reader(), id, after, limit, s.nowMS())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteList(w, page, next)
}

// delete serves DELETE /v1/mailboxes/{id}/packets/{packet_id}: idempotent,
// 204 with no body whether or not the packet was there; its tombstone stays.
func (s *Service) delete(w http.ResponseWriter, r *http.Request) {
	_, id, err := s.ownerBox(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pid := r.PathValue("packet_id")
	if err := rules.CheckPathID(pid, 32); err != nil {
		s.fail(w, r, err)
		return
	}
	err = s.db.Write(r.Context(), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(r.Context(), `DELETE FROM mail_packets WHERE mailbox_id = ? AND packet_id = ?`, id, pid)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// mailboxes serves GET /v1/me/mailboxes: the caller's mailboxes here (their
// current cards, closed and expired ones included), by mailbox ID.
func (s *Service) mailboxes(w http.ResponseWriter, r *http.Request) {
	claims, err := rules.VerifyOwnerToken(bearer(r), s.origin, "", s.nowMS(), s.skew)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var after string
	limit, _, err := pageParams(r.URL.Query(), func(c string) (int64, error) {
		after = c
		return 0, rules.CheckMailboxCursor(c)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, next, err := mailboxPage(r.Context(), s.db.Reader(), claims.AgentID, after, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hubhttp.WriteList(w, page, next)
}

// pageParams reads limit (1..1000, default 100) and cursor (checked by
// cursor when present) from a list's query; anything else, a repeated
// parameter or a bad value is invalid_request.
func pageParams(q url.Values, cursor func(string) (int64, error)) (int, int64, error) {
	for k, vs := range q {
		if (k != "limit" && k != "cursor") || len(vs) != 1 {
			return 0, 0, identity.NewError(identity.CodeInvalidRequest, "", "unexpected or repeated query parameter %q", k)
		}
	}
	limit := rules.DefaultListLimit
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || strconv.Itoa(n) != q.Get("limit") {
			return 0, 0, identity.NewError(identity.CodeInvalidRequest, "", "limit must be a decimal integer")
		}
		limit = n
	}
	if err := rules.CheckListLimit(limit); err != nil {
		return 0, 0, err
	}
	var after int64
	if q.Has("cursor") {
		var err error
		if after, err = cursor(q.Get("cursor")); err != nil {
			return 0, 0, err
		}
	}
	return limit, after, nil
}

// pruneLoop prunes at the limits' pace until ctx ends.
func (s *Service) pruneLoop(ctx context.Context) {
	t := time.NewTicker(s.limits.PruneInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.Prune(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("pruning the mail relay", "err", err)
		}
	}
}

// Prune drops expired packets and tombstones and the mailboxes the relay no
// longer retains, now; it returns how many rows it removed.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = prune(ctx, tx, s.nowMS())
		return err
	})
	return n, err
}
