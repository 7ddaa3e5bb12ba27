package view

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nexus-harness/nexus/harness/mcpserver"
)

//go:embed assets
var assets embed.FS

// The headers every answer carries: nothing from elsewhere runs, loads or
// frames the page; nothing is cached; nothing is sniffed.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page and its API behind the checks (guard).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /assets/{name}", s.asset)
	mux.HandleFunc("GET /api/summary", s.apiSummary)
	mux.HandleFunc("GET /api/plan", s.apiPlan)
	mux.HandleFunc("GET /api/history", s.apiHistory)
	mux.HandleFunc("GET /api/tasks", s.apiTasks)
	mux.HandleFunc("GET /api/graph", s.apiGraph)
	mux.HandleFunc("GET /api/agents", s.apiAgents)
	mux.HandleFunc("GET /api/decisions", s.apiDecisions)
	mux.HandleFunc("POST /api/decisions/check", s.apiCheck)
	mux.HandleFunc("GET /api/memory", s.apiMemory)
	mux.HandleFunc("GET /events", s.serveEvents)
	return s.guard(mux)
}

// cookieName carries the port: cookies are shared by every port of a
// host, and two views of two projects must not log each other out.
func (s *Server) cookieName() string { return "nexus_view_" + s.boundPort() }

func (s *Server) boundPort() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, msg+"\n")
}

// guard applies, in order: the security headers; the Host check (a
// loopback name with the bound port: a DNS-rebinding page reaches the
// server under its own name and is refused); the Origin check (present
// only on a browser's cross-origin-capable requests: it must be this very
// origin, so not even another local port's page may read or ask);
// Sec-Fetch-Site, when sent, must be same-origin or none (typed, opened by
// a program); then the token: the printed address's ?token= sets the
// cookie and redirects to a clean address, and every other request must
// carry that cookie.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		port := s.boundPort()
		if !s.hostOK(r.Host, port) {
			refuse(w, http.StatusForbidden, "forbidden Host: nexus view answers only requests addressed to this machine's loopback address and its own port")
			return
		}
		if o, ok := r.Header["Origin"]; ok && (len(o) != 1 || !originOK(o[0], port)) {
			refuse(w, http.StatusForbidden, "forbidden Origin: nexus view answers only its own page")
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			refuse(w, http.StatusForbidden, "forbidden: a request from another site (Sec-Fetch-Site: "+site+")")
			return
		}
		if tok, ok := r.URL.Query()["token"]; ok && r.Method == http.MethodGet && r.URL.Path == "/" {
			if len(tok) != 1 || !s.tokenOK(tok[0]) {
				refuse(w, http.StatusUnauthorized, "wrong token: open the address `nexus view` printed when it started")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			// The token leaves the address bar and the history.
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(s.cookieName())
		if err != nil || !s.tokenOK(c.Value) {
			refuse(w, http.StatusUnauthorized, "not signed in: open the address `nexus view` printed when it started (it carries a token for this run)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// hostOK: a loopback name (mcpserver.LoopbackHost) and the bound port.
func (s *Server) hostOK(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil || p != port {
		return false
	}
	return mcpserver.LoopbackHost(host)
}

// originOK: an http loopback origin (mcpserver.LoopbackOrigin) on the
// bound port, which only this server's own page has.
func originOK(origin, port string) bool {
	if !mcpserver.LoopbackOrigin(origin) {
		return false
	}
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == "http" && u.Port() == port
}

// index serves the page as embedded: it holds no state text at all (the
// project's name, like everything else, is filled in by the script with
// textContent).
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	b, _ := assets.ReadFile("assets/index.html")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}

var assetTypes = map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	typ, ok := assetTypes[filepath.Ext(name)]
	if !ok || strings.ContainsAny(name, "/\\") {
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Write(b)
}

// writeJSON answers v; encoding/json escapes <, > and & in strings, so no
// state text can close a tag even in a page that mishandled it.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	enc := json.NewEncoder(w)
	if err := enc.Encode(v); err != nil {
		// Headers are gone; the client sees a cut answer.
		return
	}
}

// sectionAnswer is the envelope of a section's data.
type sectionAnswer struct {
	Version uint64 `json:"version"`
	Error   string `json:"error,omitempty"`
	Data    any    `json:"data,omitempty"`
}

func intParam(r *http.Request, name string, def, lo, hi int) int {
	v, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil {
		return def
	}
	return min(max(v, lo), hi)
}
