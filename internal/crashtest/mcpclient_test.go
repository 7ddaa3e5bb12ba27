package crashtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// mcpClient speaks newline-delimited JSON-RPC to one `nexus mcp` process.
// A call returns only once its answer is read: the answer is the
// acknowledgement of the write, and the next request is sent after it.
type mcpClient struct {
	p   *proc
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// errGone: the server's output ended (it was killed).
var errGone = errors.New("mcp server gone")

// startMCP starts `nexus mcp` and SIGKILLs it after killAfter (< 0: never).
func startMCP(cmd *exec.Cmd, killAfter time.Duration) (*mcpClient, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p, err := startKilled(cmd, killAfter)
	if err != nil {
		return nil, err
	}
	return &mcpClient{p: p, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

func (c *mcpClient) request(method string, params any) (json.RawMessage, error) {
	c.id++
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		return nil, errGone
	}
	resp, err := c.out.ReadBytes('\n')
	if err != nil {
		return nil, errGone
	}
	var m struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(resp, &m); err != nil || m.ID != c.id {
		return nil, fmt.Errorf("answer %q to request %d", resp, c.id)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: JSON-RPC error %s", method, m.Error)
	}
	return m.Result, nil
}

// initialize runs the MCP handshake.
func (c *mcpClient) initialize() error {
	if _, err := c.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "crashtest", "version": "0"},
	}); err != nil {
		return err
	}
	if _, err := c.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return errGone
	}
	return nil
}

// call runs a tool and returns its structured result. A tool that
// answers with isError is an error (the tests only make valid calls).
func (c *mcpClient) call(tool string, args map[string]any) (map[string]any, error) {
	raw, err := c.request("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, err
	}
	var res struct {
		IsError    bool           `json:"isError"`
		Structured map[string]any `json:"structuredContent"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%s result %s: %v", tool, raw, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s %v failed: %s", tool, args, raw)
	}
	return res.Structured, nil
}

// close ends the session (end of input) and waits for the server.
func (c *mcpClient) close() (killed bool, err error) {
	c.in.Close()
	return c.p.wait()
}
