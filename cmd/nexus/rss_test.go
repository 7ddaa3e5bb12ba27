//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
