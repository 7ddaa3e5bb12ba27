package memory

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/nexus-harness/nexus/memory/shellread"
)

// ReadPaths returns the files a finished host tool call read, as cleaned
// absolute paths (relative ones resolved against cwd). It knows:
//
//   - file-read tools (Read, read, view, read_file, as hosts name them):
//     the file named by file_path, filePath or path;
//   - shell tools (Bash, bash, shell, run_shell_command): the files read by
//     the viewers package shellread recognises; a command line it cannot
//     analyse with certainty yields nothing;
//   - the search tool (Grep) only when it prints matching content
//     (output_mode "content") of one named file, mirroring shell grep;
//     listing matching file names or counts is a scan.
//
// Everything else reads nothing: writes and edits, globs, directory
// listings, web tools, and MCP tools (nexus's own memory tools write or
// report on files; they never hand a file's content to an agent).
func ReadPaths(tool string, input []byte, cwd string) []string {
	if strings.HasPrefix(tool, "mcp__") {
		return nil
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := in[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	abs := func(p string) []string {
		if p == "" || strings.ContainsRune(p, 0) {
			return nil
		}
		if !filepath.IsAbs(p) {
			if cwd == "" || !filepath.IsAbs(cwd) {
				return nil
			}
			p = filepath.Join(cwd, p)
		}
		return []string{filepath.Clean(p)}
	}
	switch tool {
	case "Read", "read", "view", "read_file", "ReadFile":
		return abs(str("file_path", "filePath", "path"))
	case "Bash", "bash", "shell", "run_shell_command":
		cmd := str("command", "cmd")
		if cmd == "" || cwd != "" && !filepath.IsAbs(cwd) {
			return nil
		}
		files, ok := shellread.Reads(cmd, cwd)
		if !ok {
			return nil
		}
		return files
	case "Grep", "grep":
		if str("output_mode") != "content" || str("glob", "type") != "" {
			return nil
		}
		return abs(str("path"))
	}
	return nil
}

// ReadsOf returns the memory files a finished host tool call read: the
// record keys (see Observe) of those ReadPaths that are regular files
// inside .nexus/memory/. Directories (a Grep over the folder), files
// elsewhere and symlinks leading out of the folder are dropped.
func (m *Manager) ReadsOf(tool string, input []byte, cwd string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range ReadPaths(tool, input, cwd) {
		key, err := m.resolve(p)
		if err != nil || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, key)
	}
	return out
}
