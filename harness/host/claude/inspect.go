package claude

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/nexus-harness/nexus/harness/install"
	"github.com/nexus-harness/nexus/internal/safefile"
	"github.com/nexus-harness/nexus/plugins/decisions/decisionsapi"
)

// Registration is what Inspect finds of nexus in one scope's Claude Code
// files; `nexus doctor` compares it with what `nexus install claude` would
// write.
type Registration struct {
	Scope    string `json:"scope"`
	Settings string `json:"settings"`
	MCPFile  string `json:"mcp_file"`
	// Hooks maps an event to the commands of the handlers nexus's installer
	// wrote for it (recognised by ManagedFlag); events without one are absent.
	Hooks map[string][]string `json:"hooks"`
	// MCP is the server registered under MCPServerName (nil: none).
	MCP *MCPServer `json:"mcp,omitempty"`
	// Nauro is the server registered under decisionsapi.ServerName (nil: none):
	// the bundled decision store served on its own, when install wrote it.
	Nauro *MCPServer `json:"nauro,omitempty"`
	// Env is the settings file's "env": variables Claude Code sets for the
	// session, its hooks and MCP servers.
	Env map[string]string `json:"env,omitempty"`
	// Unreadable lists files that exist but are not JSON objects; nothing in
	// them was inspected.
	Unreadable []string `json:"unreadable,omitempty"`
}

// MCPServer is an mcpServers entry named MCPServerName (or
// decisionsapi.ServerName).
type MCPServer struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Env is the entry's own "env".
	Env map[string]string `json:"env,omitempty"`
	// Ours is true when the entry runs nexus with the argument mcp (as the
	// installer writes it); another tool's server of that name is not ours.
	Ours bool `json:"ours"`
}

// Installed reports whether the scope holds anything the installer writes.
func (r *Registration) Installed() bool {
	return len(r.Hooks) > 0 || (r.MCP != nil && r.MCP.Ours)
}

// Inspect reads the settings and MCP files of o's scope without changing
// them. o.Command helps recognise nexus's MCP server (see ourServer).
func Inspect(o InstallOptions) (*Registration, error) {
	settings, mcp, err := Paths(o)
	if err != nil {
		return nil, err
	}
	scope := o.Scope
	if scope == "" {
		scope = ScopeProject
	}
	r := &Registration{Scope: scope, Settings: settings, MCPFile: mcp, Hooks: map[string][]string{}}
	within := ""
	if scope == ScopeProject {
		within = o.Project
	}
	if root, err := readObject(settings, within, r); err != nil {
		return nil, err
	} else if root != nil {
		r.Env = stringMap(root, "env")
		hooks, _ := getAs[*object](root, "hooks")
		if hooks != nil {
			for ev, v := range hooks.All() {
				groups, _ := v.([]any)
				for _, h := range ourHandlers(groups) {
					c, _ := getAs[string](h, "command")
					r.Hooks[ev] = append(r.Hooks[ev], c)
				}
			}
		}
	}
	if root, err := readObject(mcp, within, r); err != nil {
		return nil, err
	} else if root != nil {
		servers, _ := getAs[*object](root, "mcpServers")
		if servers != nil {
			r.MCP = server(servers, MCPServerName, o.Command)
			r.Nauro = server(servers, decisionsapi.ServerName, o.Command)
		}
	}
	return r, nil
}

// server reads the mcpServers entry name (nil when there is none).
func server(servers *object, name, nexus string) *MCPServer {
	cur, ok := servers.Get(name)
	if !ok {
		return nil
	}
	s := &MCPServer{Ours: ourServer(cur, nexus)}
	if obj, ok := cur.(*object); ok {
		s.Command, _ = getAs[string](obj, "command")
		args, _ := getAs[[]any](obj, "args")
		for _, a := range args {
			if as, ok := a.(string); ok {
				s.Args = append(s.Args, as)
			}
		}
		s.Env = stringMap(obj, "env")
	}
	return s
}

// readObject parses a settings file; a missing file is (nil, nil) and one
// that is not a JSON object is recorded in r.Unreadable.
// A project's file is read beneath the project (within; "" for the
// user's own files, whose symlinks are followed), through install.MaxSettings,
// only when it is a regular file.
func readObject(path, within string, r *Registration) (*object, error) {
	var b []byte
	var err error
	if within != "" {
		b, err = safefile.ReadPathIn(within, path, install.MaxSettings)
	} else {
		b, err = safefile.ReadFile(path, install.MaxSettings)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil
	}
	root, err := install.ParseObject(b)
	if err != nil {
		r.Unreadable = append(r.Unreadable, fmt.Sprintf("%s: %v", path, err))
		return nil, nil
	}
	return root, nil
}

// HookExecutable returns the executable a hook command line starts with,
// undoing the quoting HookCommand applies.
func HookExecutable(command string) string {
	command = strings.TrimLeft(command, " \t")
	if !strings.HasPrefix(command, "'") {
		exe, _, _ := strings.Cut(command, " ")
		return exe
	}
	var b strings.Builder
	rest := command
	for strings.HasPrefix(rest, "'") {
		end := strings.IndexByte(rest[1:], '\'')
		if end < 0 {
			b.WriteString(rest[1:])
			return b.String()
		}
		b.WriteString(rest[1 : 1+end])
		rest = rest[end+2:]
		// '\'' is a quote closed, an escaped quote, and a quote reopened.
		if strings.HasPrefix(rest, `\'`) {
			b.WriteByte('\'')
			rest = rest[2:]
			continue
		}
		break
	}
	return b.String()
}

// stringMap returns the string members of object member k.
func stringMap(o *object, k string) map[string]string {
	m, _ := getAs[*object](o, k)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for name, v := range m.All() {
		if s, ok := v.(string); ok {
			out[name] = s
		}
	}
	return out
}

// SplitCommand splits a hook command line into words the way a POSIX shell
// would for the plain forms nexus writes and people type: words separated
// by blanks, single quotes, double quotes (with backslash escapes of " \\ $
// and `) and backslash escapes outside quotes. ok is false for anything
// else (expansions, operators, unterminated quotes): such a line is not run
// by the doctor.
func SplitCommand(line string) (words []string, ok bool) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				switch {
				case line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0:
					i++
					cur.WriteByte(line[i])
				case line[i] == '$' || line[i] == '`':
					return nil, false
				default:
					cur.WriteByte(line[i])
				}
			}
			if i >= len(line) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(line) {
				return nil, false
			}
			i++
			cur.WriteByte(line[i])
			inWord = true
		case strings.IndexByte("|&;<>()$`*?[]{}~#\n", c) >= 0:
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, len(words) > 0
}
