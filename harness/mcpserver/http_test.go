package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const testToken = "0123456789abcdef0123456789abcdef"

func post(t *testing.T, url, auth, body string) (*http.Response, string) {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestHTTPRequiresToken(t *testing.T) {
	e, _ := newEngine(t)
	h, err := HTTPHandler(newServer(t, e, "nx_"), testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	url := ts.URL + EndpointPath
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + testToken + "x", "Basic " + testToken, testToken} {
		resp, body := post(t, url, auth, init)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || !strings.Contains(body, "nexus mcp token") {
			t.Errorf("auth %q: status %d, body %s; want 401 with a hint", auth, resp.StatusCode, body)
		}
	}
	resp, body := post(t, url, "Bearer "+testToken, init)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nx_plan_status","arguments":{}}}`
	r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(call))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+testToken)
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	cr, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(cr.Body)
	cr.Body.Close()
	if cr.StatusCode != http.StatusOK || !strings.Contains(string(b), `{\"active\":false}`) {
		t.Fatalf("tools/call: %d %s", cr.StatusCode, b)
	}
	if _, err := HTTPHandler(newServer(t, e, "nx_"), "short", nil); err == nil {
		t.Fatal("a short token was accepted")
	}
}

func TestServeHTTPStopsOnCancel(t *testing.T) {
	e, _ := newEngine(t)
	h, _ := HTTPHandler(newServer(t, e, "nx_"), testToken, nil)
	ctx, cancel := context.WithCancel(context.Background())
	bound := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, "127.0.0.1:0", h, func(a string) { bound <- a }) }()
	addr := <-bound
	resp, _ := post(t, "http://"+addr+EndpointPath, "", "{}")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"7777": "127.0.0.1:7777", ":7777": "127.0.0.1:7777", "127.0.0.1:0": "127.0.0.1:0",
		"0.0.0.0:80": "0.0.0.0:80", "localhost:9": "localhost:9", "[::1]:5": "[::1]:5",
		"127.0.0.1:65535": "127.0.0.1:65535", "host-1.example:1": "host-1.example:1",
	} {
		got, err := ListenAddr(in)
		if err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a:b:c", "notanaddr", ":http", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:07", "bad host:1", "x_y:1", "-a:1"} {
		if _, err := ListenAddr(bad); err == nil {
			t.Errorf("ListenAddr(%q) accepted", bad)
		}
	}
	for addr, exposed := range map[string]bool{"127.0.0.1:1": false, "localhost:1": false, "[::1]:1": false, "0.0.0.0:1": true, "192.168.1.2:1": true, "example.com:1": true} {
		if Exposed(addr) != exposed {
			t.Errorf("Exposed(%q) = %v", addr, !exposed)
		}
	}
}

func TestToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "mcp-token")
	tok, created, err := LoadOrCreateToken(path)
	if err != nil || !created || len(tok) != 64 {
		t.Fatalf("first use: %q %v %v", tok, created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", st.Mode().Perm())
	}
	again, created, err := LoadOrCreateToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("second use: %q %v %v", again, created, err)
	}
	other, _, _ := LoadOrCreateToken(filepath.Join(dir, "other"))
	if other == tok {
		t.Fatal("two token files hold the same token")
	}
	// Loose permissions are tightened.
	os.Chmod(path, 0o644)
	if _, _, err := LoadOrCreateToken(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v not tightened", st.Mode().Perm())
	}
	os.WriteFile(path, []byte("  \n"), 0o600)
	if _, _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("empty token file: %v", err)
	}
	// Concurrent first use agrees on one token.
	race := filepath.Join(dir, "race")
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _, _ = LoadOrCreateToken(race)
		}()
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] || g == "" {
			t.Fatalf("concurrent first use gave different tokens: %v", got)
		}
	}
	if p, err := TokenFile("rel/tok"); err != nil || !filepath.IsAbs(p) {
		t.Fatalf("TokenFile: %q %v", p, err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	if p, _ := TokenFile(""); p != filepath.Join(dir, "nexus", "mcp-token") {
		t.Fatalf("default token file = %q", p)
	}
}
