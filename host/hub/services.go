package hub

import (
	"apconnect/host/hub/internal/delegation"
	"apconnect/host/hub/internal/discourse"
	"apconnect/host/hub/internal/hubsvc"
	"apconnect/host/hub/internal/knowledge"
	mailrelay "apconnect/host/hub/internal/mail"
	"apconnect/host/hub/internal/profile"
	"apconnect/host/proto/adp"
)

// services lists the hub's services, one line each. Their migration groups
// are applied in this order, after the shared one, and their routes mounted
// in this order; a released service keeps its place and its name. See the
// package comment for how to add one.
func services(o Options) []hubsvc.Spec {
	return []hubsvc.Spec{
		profile.Spec(o.Limits.Profile),
		discourse.Spec(o.Limits.Discourse, packResolver(o)),
		delegation.Spec(o.Limits.Delegation),
		mailrelay.Spec(o.Limits.Mail),
		knowledge.Spec(o.Limits.Knowledge),
	}
}

// packResolver is how the Discourse host fetches external packs: nil (none)
// with NoExternalPacks, else PackFetcher or the default HTTPS fetcher.
func packResolver(o Options) adp.PackResolver {
	switch {
	case o.NoExternalPacks:
		return nil
	case o.PackFetcher != nil:
		return o.PackFetcher
	default:
		return &adp.HTTPSPackFetcher{}
	}
}
