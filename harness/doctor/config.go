package doctor

import (
	"context"
	"fmt"
	"strings"
)

// Config reports whether the configuration loads: the files it read, or
// each layer (file, variables and flags) that does not load, with the key
// and how to fix it. The composition root (harness/compose) loads the
// configuration once and fills it in.
type Config struct {
	// Files are the configuration files read, lowest layer first.
	Files []string
	// Problems are the layers that do not load.
	Problems []ConfigProblem
}

// ConfigProblem is one layer of the configuration that does not load.
type ConfigProblem struct {
	// What names the layer ("the project configuration FILE").
	What string
	Err  error
	// Fix says how to fix it.
	Fix string
}

func (Config) Name() string { return "config" }

func (c Config) Run(context.Context) []Finding {
	if len(c.Problems) == 0 {
		if len(c.Files) == 0 {
			return []Finding{ok("no configuration files; built-in defaults, NEXUS_* variables and flags apply")}
		}
		return []Finding{ok("loaded %s", strings.Join(c.Files, ", "))}
	}
	var out []Finding
	for _, p := range c.Problems {
		out = append(out, fault(fmt.Sprintf("%s does not load: %v", p.What, p.Err), p.Fix))
	}
	return out
}
