// Package browser drives the operator's live view (host/opview) in a real
// browser: headless Chromium (Debian's chromium and chromium-driver
// packages) through chromedriver's WebDriver protocol, plain HTTP and JSON.
// It starts a local hub, two agents and `apconnect serve`, logs in through
// the printed URL, checks each page, sees a new message appear without a
// reload and saves a screenshot of each page in docs/opview/.
//
// Its tests are behind the build tag "browser" (`make browser-test`; CI runs
// it): they need Chromium, and they fail rather than skip without it.
package browser
