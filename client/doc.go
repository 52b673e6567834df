// Package client talks to sharqctld over its Unix socket: one connection per
// request, one JSON line each way (api.Encode, api.Decoder). The controller
// learns who is calling from the socket itself (SO_PEERCRED), so a request
// carries no identity.
package client
