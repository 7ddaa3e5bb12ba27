package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// EndpointPath is where the streamable HTTP transport is served.
const EndpointPath = "/mcp"

// HTTPHandler serves MCP over streamable HTTP at EndpointPath. A request
// with an Origin header that is not a loopback origin gets 403 (the MCP
// transport's defence against DNS rebinding and cross-site requests from a
// browser); every request must carry "Authorization: Bearer <token>" (the
// scheme in any case) or gets 401; a body over MaxMessageBytes gets 413.
// All three happen before the request reaches MCP. mcp-go's own guard (a
// loopback request with a foreign Host header gets 403) stays on.
func HTTPHandler(s *server.MCPServer, token string, logger *slog.Logger) (http.Handler, error) {
	if len(token) < 16 {
		return nil, errors.New("the bearer token is missing or too short (at least 16 characters)")
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, server.NewStreamableHTTPServer(s,
		server.WithEndpointPath(EndpointPath),
		server.WithStreamableHTTPLogger(logger),
	))
	return checkOrigin(requireToken(token, limitBody(mux))), nil
}

// checkOrigin refuses a request whose Origin is present and not a loopback
// origin (http or https on localhost, 127.0.0.0/8 or ::1, any port). A
// request without Origin comes from a program, not a browser page, and is
// left to the token check.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o, ok := r.Header["Origin"]; ok && (len(o) != 1 || !LoopbackOrigin(o[0])) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":"forbidden Origin: nexus serves MCP only to programs on this machine and to pages served from localhost"}`+"\n")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// LoopbackOrigin reports whether an Origin header value names a page
// served from this machine (nexus view checks the same before its own
// stricter same-port rule).
func LoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false
	}
	return LoopbackHost(u.Hostname())
}

// LoopbackHost reports whether a host name (without port) names this
// machine: localhost, or an address in 127.0.0.0/8 or ::1.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bearer returns the credentials of an "Authorization: Bearer <token>"
// header; the scheme is case-insensitive (RFC 9110 section 11.1).
func bearer(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

func requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred, ok := bearer(r.Header.Get("Authorization"))
		if !ok || subtle.ConstantTimeCompare([]byte(cred), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="nexus"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"missing or wrong bearer token: send \"Authorization: Bearer <token>\" with the token printed by `+"`nexus mcp token`"+`"}`+"\n")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ListenAddr applies nexus's binding rule: an address without a host
// ("7777", ":7777") listens on 127.0.0.1 only. Any other host is used as
// given; Exposed reports whether it reaches beyond this machine.
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("no listen address given")
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", addr, err)
	}
	// Checked here, before anything is written (the token file): net.Listen
	// would only fail later.
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (len(port) > 1 && port[0] == '0') {
		return "", fmt.Errorf("listen address %q: the port must be a number from 0 to 65535, like 127.0.0.1:7777", addr)
	} else {
		port = strconv.FormatUint(n, 10)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !validHost(host) {
		return "", fmt.Errorf("listen address %q: %q is neither an IP address nor a host name", addr, host)
	}
	return net.JoinHostPort(host, port), nil
}

// validHost accepts an IP address or a DNS host name (RFC 1123 labels).
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Exposed reports whether a listen address accepts connections from other
// machines.
func Exposed(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// ServeHTTP listens on addr and serves h until ctx ends. ready, when not
// nil, receives the address actually bound (useful with port 0).
func ServeHTTP(ctx context.Context, addr string, h http.Handler, ready func(bound string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return fmt.Errorf("shut down the HTTP server: %w", err)
		}
		return nil
	}
}
