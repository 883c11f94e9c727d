package wake

import (
	"context"
	"net/http"
	"testing"
	"time"

	"apconnect/host/capability"
	"apconnect/host/client"
	"apconnect/host/config"
)

const origin = "https://127.0.0.1:9"

// A background sync runs every interval in one process of the identity,
// only while the operator grants it; it backs off after 429 and 5xx (at least
// the Retry-After), not after other errors; it never runs without the
// grant or without an origin.
func TestSyncJobs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		grants  []string
		need    capability.Capability
		origins []string
		errs    []error // what successive rounds return
		rounds  int     // the rounds to wait for (0: wait 400 ms)
		check   func(t *testing.T, at []time.Time)
	}{
		{name: "every interval", grants: []string{"discourse.read"}, need: capability.DiscourseRead, origins: []string{origin}, rounds: 5, check: func(t *testing.T, at []time.Time) {
			if d := at[4].Sub(at[0]); d < 200*time.Millisecond {
				t.Errorf("5 rounds in %s every 50 ms", d)
			}
		}},
		{name: "not granted", grants: []string{"discourse.read"}, need: capability.MailRead, origins: []string{origin}, check: func(t *testing.T, at []time.Time) {
			if len(at) != 0 {
				t.Errorf("%d rounds without the grant", len(at))
			}
		}},
		{name: "one origin of two granted", need: capability.MailRead, origins: []string{"https://other.example", origin}, rounds: 2, check: func(t *testing.T, at []time.Time) {}},
		{name: "no origin", need: capability.MailRead, origins: nil, check: func(t *testing.T, at []time.Time) {
			if len(at) != 0 {
				t.Errorf("%d rounds without an origin", len(at))
			}
		}},
		{name: "429 retry-after", need: capability.MailRead, origins: []string{origin},
			errs: []error{&client.Error{Status: http.StatusTooManyRequests, RetryAfter: 400 * time.Millisecond}}, rounds: 2, check: func(t *testing.T, at []time.Time) {
				if at[1].Sub(at[0]) < 400*time.Millisecond {
					t.Errorf("rounds at %v: no backoff of 400 ms after a 429", at)
				}
			}},
		{name: "5xx doubles", need: capability.MailRead, origins: []string{origin},
			errs: []error{&client.Error{Status: 503}, &client.Error{Status: 502}, &client.Error{Status: 500}}, rounds: 4, check: func(t *testing.T, at []time.Time) {
				if at[1].Sub(at[0]) < 100*time.Millisecond || at[2].Sub(at[1]) < 200*time.Millisecond || at[3].Sub(at[2]) < 400*time.Millisecond {
					t.Errorf("rounds at %v: no doubling backoff after 5xx", at)
				}
			}},
		{name: "other errors", need: capability.MailRead, origins: []string{origin},
			errs: []error{&client.Error{Status: 400}, context.DeadlineExceeded, &client.Error{Status: 404}}, rounds: 4, check: func(t *testing.T, at []time.Time) {
				if d := at[3].Sub(at[0]); d >= 700*time.Millisecond { // backing off would take 100+200+400 ms
					t.Errorf("4 rounds in %s: backed off after errors that are not 429 or 5xx", d)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t, tc.grants, nil)
			var calls counter
			job := SyncJob{Name: "mail", Every: 50 * time.Millisecond, Need: tc.need, Origins: func() []string { return tc.origins },
				Run: func(context.Context) error {
					n := len(calls.times())
					calls.hit()
					if n < len(tc.errs) {
						return tc.errs[n]
					}
					return nil
				}}
			// Two processes: one runs the job.
			a, b := h.open(), h.open()
			service(t, a, Options{Syncs: []SyncJob{job}})
			service(t, b, Options{Syncs: []SyncJob{job}})
			if tc.rounds == 0 {
				time.Sleep(400 * time.Millisecond)
			} else {
				eventually(t, 15*time.Second, "the rounds", func() bool { return len(calls.times()) >= tc.rounds })
			}
			at := calls.times()
			for i := 1; i < len(at); i++ {
				if at[i].Sub(at[i-1]) < 40*time.Millisecond {
					t.Errorf("rounds %d and %d %s apart: two processes ran the job", i-1, i, at[i].Sub(at[i-1]))
				}
			}
			tc.check(t, at)
		})
	}
}

// The connector's own sync jobs are well formed.
func TestSyncJobsOfTheConnector(t *testing.T) {
	t.Parallel()
	c := newHome(t, nil, func(w *config.Wake) {}).open()
	for _, j := range syncJobs(c) {
		if j.Name == "" || j.Every < config.MinMailSyncInterval || j.Run == nil || j.Origins == nil || !j.Need.Valid() {
			t.Errorf("job %+v", j)
		}
	}
}
