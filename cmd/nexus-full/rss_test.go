//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nexus-harness/nexus/harness/mcpserver"
)

// maxPeakRSS is the issue-13 bound on `nexus mcp`'s peak resident memory
// after the largest request it accepts.
const maxPeakRSS = 64 << 20

// TestMCPPeakRSS drives the built `nexus mcp` with the largest request it
// accepts (an artifact_write whose 2 MiB content, escaped, makes a message
// just under the 4 MiB limit), then a 50 MB line (the attack,
// refused unread), and reads the process's peak RSS (VmHWM) from /proc.
// Run with -v to see the figure.
func TestMCPPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the nexus binary")
	}
	bin := buildNexus(t, t.TempDir())
	home, proj := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = proj, isolatedEnv(t, home)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewReaderSize(outPipe, 1<<16)
	answer := func() map[string]any {
		t.Helper()
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read answer: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("answer is not JSON: %.200s", line)
		}
		return m
	}
	io.WriteString(in, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "rss", "version": "0"}}))
	answer()

	// 2 MiB of content; newlines escape to two bytes, so about half of them
	// bring the message close to the 4 MiB limit.
	const content = 2 << 20
	nl := mcpserver.MaxMessageBytes - content - 512
	body := strings.Repeat("\n", nl) + strings.Repeat("x", content-nl)
	msg := toolCall(2, "nx_artifact_write", map[string]any{"filename": "big.md", "content": body})
	if len(msg) > mcpserver.MaxMessageBytes+1 || len(msg) < mcpserver.MaxMessageBytes-4096 {
		t.Fatalf("request of %d bytes is not just under the limit", len(msg))
	}
	io.WriteString(in, msg)
	if a := answer(); fmt.Sprint(a["result"].(map[string]any)["isError"]) == "true" {
		t.Fatalf("the largest request was refused: %.300v", a)
	}
	afterLargest := peakRSS(t, cmd.Process.Pid)

	// The 50 MB title: refused without being held.
	huge := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nx_task_add","arguments":{"context":"c","title":"` + strings.Repeat("t", 50<<20) + `"}}}` + "\n"
	io.WriteString(in, huge)
	if a := answer(); a["error"] == nil {
		t.Fatalf("a 50 MB request was accepted: %.300v", a)
	}
	afterHuge := peakRSS(t, cmd.Process.Pid)
	in.Close()
	cmd.Wait()
	t.Logf("peak RSS of nexus mcp: %.1f MiB after the largest accepted request (%d bytes), %.1f MiB after a refused 50 MB one (limit %d MiB)",
		float64(afterLargest)/(1<<20), len(msg), float64(afterHuge)/(1<<20), maxPeakRSS>>20)
	if afterHuge > maxPeakRSS {
		t.Fatalf("peak RSS %d bytes is over %d", afterHuge, maxPeakRSS)
	}
}

// peakRSS reads VmHWM (the resident set's high-water mark) of a process.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestMCPPeakRSSHostileRequests (issue 22.5, 22.10): small requests built
// to cost memory are refused before anything decodes them, so the ceiling
// for the largest accepted request (maxPeakRSS) holds for them too, sent
// one at a time or together. The peak is the process's high-water mark
// (VmHWM) once every answer is in. Not getrusage of the child: Go starts a
// child with vfork, and exec folds the parent's high-water mark (this test
// process's, 140 MB with the requests built) into the child's ru_maxrss.
// Run with -v to see the figures.
func TestMCPPeakRSSHostileRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the nexus binary")
	}
	bin := buildNexus(t, t.TempDir())
	const depth = 9990 // the 20 KB request
	deep := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nx_task_add","arguments":{"title":"t","context":"c","x":%s%s}}}`,
			id, strings.Repeat("[", depth), strings.Repeat("]", depth)) + "\n"
	}
	// The largest request accepted (as in TestMCPPeakRSS), n times.
	largest := func(id int) string {
		const content = 2 << 20
		nl := mcpserver.MaxMessageBytes - content - 512
		return toolCall(id, "nx_artifact_write", map[string]any{"filename": fmt.Sprintf("big%d.md", id), "content": strings.Repeat("\n", nl) + strings.Repeat("x", content-nl)})
	}
	hugeUnknown := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"check_decision","arguments":{"proposed_approach":"use sqlite","bogus":[` +
		strings.TrimSuffix(strings.Repeat("1,", 1000000), ",") + `]}}}` + "\n"
	for _, c := range []struct {
		name string
		args []string
		run  func(t *testing.T, send func(string), answer func() string, url func() string)
	}{
		{"stdio, one request nested 9,990 deep", []string{"mcp"}, func(t *testing.T, send func(string), answer func() string, _ func() string) {
			send(deep(1))
			if a := answer(); !strings.Contains(a, "limit of 64 levels") {
				t.Fatalf("answer %.300s", a)
			}
		}},
		{"stdio, 16 of them at once", []string{"mcp"}, func(t *testing.T, send func(string), answer func() string, _ func() string) {
			var all strings.Builder
			for i := range 16 {
				all.WriteString(deep(i + 1))
			}
			send(all.String())
			for range 16 {
				if a := answer(); !strings.Contains(a, "limit of 64 levels") {
					t.Fatalf("answer %.300s", a)
				}
			}
		}},
		{"http, 16 of them in parallel", []string{"mcp", "--http", "127.0.0.1:0"}, func(t *testing.T, _ func(string), _ func() string, url func() string) {
			postInParallel(t, url(), 16, deep, func(_ int, body string) bool { return strings.Contains(body, "limit of 64 levels") })
		}},
		{"stdio, 8 of the largest requests at once", []string{"mcp"}, func(t *testing.T, send func(string), answer func() string, _ func() string) {
			go func() {
				for i := range 8 {
					send(largest(i + 1))
				}
			}()
			for range 8 {
				if a := answer(); strings.Contains(a, `"isError":true`) || strings.Contains(a, `"error"`) {
					t.Fatalf("answer %.300s", a)
				}
			}
		}},
		{"http, 8 of the largest requests in parallel", []string{"mcp", "--http", "127.0.0.1:0"}, func(t *testing.T, _ func(string), _ func() string, url func() string) {
			postInParallel(t, url(), 8, largest, func(code int, body string) bool { return code == 200 && !strings.Contains(body, `"isError":true`) })
		}},
		{"stdio, check_decision with an unknown 1,000,000-item array", []string{"mcp"}, func(t *testing.T, send func(string), answer func() string, _ func() string) {
			send(hugeUnknown)
			if a := answer(); !strings.Contains(a, `unknown parameter \\\"bogus\\\" (this tool takes: context, cwd, project_id, proposed_approach)`) {
				t.Fatalf("answer %.300s", a)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, proj := t.TempDir(), t.TempDir()
			cmd := exec.Command(bin, c.args...)
			cmd.Dir, cmd.Env = proj, isolatedEnv(t, home, "NEXUS_MCP_TOKEN_FILE="+filepath.Join(home, "tok"))
			in, _ := cmd.StdinPipe()
			outPipe, _ := cmd.StdoutPipe()
			errPipe, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			out := bufio.NewReaderSize(outPipe, 1<<16)
			answer := func() string {
				t.Helper()
				line, err := out.ReadString('\n')
				if err != nil {
					t.Fatalf("read answer: %v", err)
				}
				return line
			}
			send := func(s string) { io.WriteString(in, s) }
			stderr := &lockedBuffer{}
			errLog := io.TeeReader(errPipe, stderr)
			url := func() string {
				u := waitForURL(t, errLog)
				tok, err := os.ReadFile(filepath.Join(home, "tok"))
				if err != nil {
					t.Fatal(err)
				}
				return u + " " + strings.TrimSpace(string(tok))
			}
			overHTTP := len(c.args) > 1
			if !overHTTP {
				go io.Copy(io.Discard, errLog)
				send(rpc(0, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "rss", "version": "0"}}))
				answer()
			}
			c.run(t, send, answer, url)
			peak := peakRSS(t, cmd.Process.Pid)
			if overHTTP {
				// Connections the client dialed and never used would hold
				// the server's graceful shutdown for 5 s.
				http.DefaultClient.CloseIdleConnections()
				cmd.Process.Signal(syscall.SIGTERM)
			}
			in.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("nexus mcp: %v; stderr:\n%s", err, stderr)
			}
			t.Logf("peak RSS of nexus mcp: %.1f MiB (limit %d MiB)", float64(peak)/(1<<20), maxPeakRSS>>20)
			if peak > maxPeakRSS {
				t.Fatalf("peak RSS %d bytes is over %d", peak, maxPeakRSS)
			}
		})
	}
}

// postInParallel sends n requests (msg(1) … msg(n)) at once over HTTP, in
// one session as a client would (without one the library refuses a call
// before decoding it), and fails on any answer ok refuses. server is
// "URL TOKEN".
func postInParallel(t *testing.T, server string, n int, msg func(id int) string, ok func(code int, body string) bool) {
	t.Helper()
	u, token, _ := strings.Cut(server, " ")
	init := rpc(0, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "rss", "version": "0"}})
	_, _, session := httpPost(t, u, "Bearer "+token, "", init)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body, _ := httpPost(t, u, "Bearer "+token, session, msg(i+1)); !ok(code, body) {
				errs <- fmt.Sprint(code, " ", body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("answer %.300s", e)
	}
}
