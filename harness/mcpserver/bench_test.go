package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/nexus-harness/nexus/internal/testenv"
)

// BenchmarkStdioToolCall measures the MCP tools/call round trip against the
// real `nexus mcp` binary over its stdin/stdout pipes, with the server warm
// (initialized, schemas compiled, files cached): write one request line,
// read its answer line. It reports the median and p99 per call.
//
//	go test -run '^$' -bench StdioToolCall -benchtime 2000x ./harness/mcpserver/
func BenchmarkStdioToolCall(b *testing.B) {
	bin := buildNexus(b)
	cases := []struct {
		name, tool string
		args       map[string]any
	}{
		{"context", "nx_context", map[string]any{}},
		{"task_list", "nx_task_list", map[string]any{}},
		{"task_update", "nx_task_update", map[string]any{"id": 1, "status": "in_progress"}},
		{"task_add", "nx_task_add", map[string]any{"title": "bench", "context": "c"}},
		{"plan_decide", "nx_plan_decide", map[string]any{"issue_id": 1, "decision": "d"}},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			s := startServer(b, bin)
			defer s.close()
			s.call(b, "nx_task_add", map[string]any{"title": "first", "context": "c"})
			s.call(b, "nx_plan_start", map[string]any{"topic": "bench", "issues": []any{"one"}, "research_summary": "r"})
			for i := 0; i < 200; i++ { // warm up
				s.call(b, bc.tool, bc.args)
			}
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if bc.tool == "nx_task_add" && i%20 == 19 {
					// Keep the list at a working size: a cycle with
					// thousands of tasks measures JSON size, not MCP.
					b.StopTimer()
					s.call(b, "nx_task_close", nil)
					b.StartTimer()
				}
				t0 := time.Now()
				s.call(b, bc.tool, bc.args)
				times = append(times, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "ms-p99")
		})
	}
}

type benchServer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startServer(b *testing.B, bin string) *benchServer {
	b.Helper()
	home, proj := b.TempDir(), b.TempDir()
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = proj
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "NEXUS_CORE_DIR=" + testenv.CoreDir(b)}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &benchServer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	s.roundTrip(b, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "0"}})
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *benchServer) roundTrip(b *testing.B, method string, params any) map[string]any {
	s.id++
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		b.Fatal(err)
	}
	resp, err := s.out.ReadBytes('\n')
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp, &m); err != nil || m["id"] != float64(s.id) || m["error"] != nil {
		b.Fatalf("answer %s to request %d", resp, s.id)
	}
	return m
}

func (s *benchServer) call(b *testing.B, tool string, args map[string]any) {
	m := s.roundTrip(b, "tools/call", map[string]any{"name": tool, "arguments": args})
	if res, _ := m["result"].(map[string]any); res["isError"] == true {
		b.Fatalf("%s failed: %v", tool, res)
	}
}

func (s *benchServer) close() {
	s.in.Close()
	s.cmd.Wait()
}
