// Package client talks to Agent Protocols services — ADP hosts and Agent
// Profile services — over HTTPS: only configured origins, only https, the
// host's own CA file when one is configured, no redirects, a timeout on every
// request and bounded response sizes.
package client
