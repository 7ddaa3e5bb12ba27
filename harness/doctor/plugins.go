package doctor

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// Plugins checks the plugin manifests nexus would discover and the digest
// of each plugin's executable; with Verify it also starts each plugin once
// (handshake, mutual TLS, Info) and stops it.
type Plugins struct {
	ProjectDir string
	UserDir    string   // "" = no user plugins
	Paths      []string // plugins.paths
	Disabled   []string // plugins.disabled
	Verify     bool
	// VerifyTimeout bounds each plugin's verification (default 15s).
	VerifyTimeout time.Duration
}

func (Plugins) Name() string { return "plugins" }

func (c Plugins) Run(ctx context.Context) []Finding {
	manifests, problems := pluginhost.Discover(c.ProjectDir, c.UserDir, c.Paths)
	var out []Finding
	for _, p := range problems {
		out = append(out, fault(p.Error(), "correct the manifest (nexus-plugin.yaml) as the message says, or remove the plugin's folder"))
	}
	var usable []*pluginhost.Manifest
	var names, disabled []string
	for _, m := range manifests {
		if slices.Contains(c.Disabled, m.Name) {
			disabled = append(disabled, m.Name)
			continue
		}
		exe := m.ExecutablePath()
		actual, err := pluginhost.FileSHA256(exe)
		switch {
		case err != nil:
			out = append(out, fault(fmt.Sprintf("plugin %s (%s): its executable cannot be read: %v", m.Name, m.Path, err),
				"build or reinstall the plugin so that the executable named in its manifest exists"))
		case actual != m.SHA256:
			out = append(out, fault(fmt.Sprintf("plugin %s refused: %s has sha256 %s but %s expects %s, so nexus will not start it", m.Name, exe, actual, m.Path, m.SHA256),
				fmt.Sprintf("if you built or updated the plugin yourself, set `sha256: %s` in %s; otherwise reinstall the plugin from its source", actual, m.Path)))
		default:
			usable = append(usable, m)
			names = append(names, m.Name)
		}
	}
	if c.Verify && len(usable) > 0 {
		out = append(out, c.verify(ctx, usable)...)
	}
	if allOK(out) {
		var msg string
		switch {
		case len(manifests) == 0:
			msg = "no plugins installed"
		case len(names) == 0:
			msg = "no plugins enabled"
		default:
			msg = fmt.Sprintf("%s, digests match: %s", plural(len(names), "plugin"), strings.Join(names, ", "))
			if c.Verify {
				msg += "; each started and answered its handshake"
			}
		}
		if len(disabled) > 0 {
			msg += "; disabled by plugins.disabled: " + strings.Join(disabled, ", ")
		}
		out = append([]Finding{ok("%s", msg)}, out...)
	}
	return out
}

func (c Plugins) verify(ctx context.Context, manifests []*pluginhost.Manifest) []Finding {
	timeout := c.VerifyTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	m, err := pluginhost.New(manifests, pluginhost.Options{
		ProjectDir:    c.ProjectDir,
		NoUserPlugins: true,
		StartTimeout:  timeout,
		Logger:        hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}),
	})
	if err != nil {
		return []Finding{fault("cannot prepare the plugins for verification: "+err.Error(), "run `nexus plugin verify NAME` for details")}
	}
	defer m.Close()
	var out []Finding
	for _, man := range manifests {
		vctx, cancel := context.WithTimeout(ctx, timeout)
		r, err := m.Verify(vctx, man.Name)
		cancel()
		switch {
		case err != nil:
			out = append(out, fault(fmt.Sprintf("plugin %s: %v", man.Name, err), "run `nexus plugin verify "+man.Name+"` for details"))
		case !r.OK:
			out = append(out, fault(fmt.Sprintf("plugin %s does not start correctly: %s", man.Name, r.Error),
				"rebuild the plugin against the current plugins/sdk, or disable it with plugins.disabled"))
		}
	}
	return out
}
