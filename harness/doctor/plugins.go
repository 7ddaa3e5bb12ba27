package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nexus-harness/nexus/harness/pluginhost"
)

// Plugins checks the plugins exactly as the plugin host sees them
// (configured paths, .nexus/plugins/*/, the user's folder, built-ins,
// plugins.disabled, shadowing): every manifest problem, and the digest of
// every plugin's executable. With Verify it also starts each plugin once
// (handshake, mutual TLS, Info) and stops it.
type Plugins struct {
	// Options are the plugin host's options of the project (the caller
	// builds them as every command does); Logger is replaced.
	Options pluginhost.Options
	Verify  bool
	// VerifyTimeout bounds each plugin's verification (default 15s).
	VerifyTimeout time.Duration
}

func (Plugins) Name() string { return "plugins" }

func (c Plugins) Run(ctx context.Context) []Finding {
	o := c.Options
	o.Logger = pluginhost.NopLogger{}
	if c.VerifyTimeout > 0 {
		o.StartTimeout = c.VerifyTimeout
	} else if o.StartTimeout <= 0 {
		o.StartTimeout = 15 * time.Second
	}
	m, err := pluginhost.Open(o)
	if err != nil {
		return []Finding{fault("cannot read the plugin declarations: "+err.Error(), "run `nexus plugin list` for details")}
	}
	defer m.Close()
	var out []Finding
	for _, p := range m.Problems() {
		out = append(out, fault(p.Error(), "correct the manifest (nexus-plugin.yaml) as the message says, or remove the plugin's folder"))
	}
	var checked, builtin []string
	for _, man := range m.Manifests() {
		if man.Source == pluginhost.SourceBuiltin {
			builtin = append(builtin, man.Name)
		}
		d, err := m.Inspect(man.Name)
		switch {
		case err != nil:
			out = append(out, fault(fmt.Sprintf("plugin %s: %v", man.Name, err), "run `nexus plugin inspect "+man.Name+"`"))
			continue
		case d.DigestOK:
		case d.ActualSHA256 == "":
			out = append(out, fault(fmt.Sprintf("plugin %s (%s): %s", man.Name, man.Path, d.DigestError),
				"build or reinstall the plugin so that the executable named in its manifest exists"))
			continue
		default:
			out = append(out, fault(fmt.Sprintf("plugin %s refused: %s has sha256 %s but %s expects %s, so nexus will not start it",
				man.Name, man.ExecutablePath(), d.ActualSHA256, man.Path, man.SHA256),
				fmt.Sprintf("if you built or updated the plugin yourself, set `sha256: %s` in %s; otherwise reinstall the plugin from its source", d.ActualSHA256, man.Path)))
			continue
		}
		if man.Source != pluginhost.SourceBuiltin {
			checked = append(checked, man.Name)
		}
		if c.Verify {
			out = append(out, c.verify(ctx, m, man.Name)...)
		}
	}
	if allOK(out) {
		msg := "no plugins installed"
		if len(checked) > 0 {
			msg = fmt.Sprintf("%s, digests match: %s", plural(len(checked), "plugin"), strings.Join(checked, ", "))
		}
		if len(builtin) > 0 {
			msg += "; built in: " + strings.Join(builtin, ", ")
		}
		if c.Verify && len(checked)+len(builtin) > 0 {
			msg += "; each started and answered its handshake"
		}
		if len(o.Disabled) > 0 {
			msg += "; plugins.disabled: " + strings.Join(o.Disabled, ", ")
		}
		out = append([]Finding{ok("%s", msg)}, out...)
	}
	return out
}

func (c Plugins) verify(ctx context.Context, m *pluginhost.Manager, name string) []Finding {
	timeout := c.VerifyTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := m.Verify(vctx, name)
	switch {
	case err != nil:
		return []Finding{fault(fmt.Sprintf("plugin %s: %v", name, err), "run `nexus plugin verify "+name+"` for details")}
	case !r.OK:
		return []Finding{fault(fmt.Sprintf("plugin %s does not start correctly: %s", name, r.Error),
			"rebuild the plugin against the current plugins/sdk, or disable it with plugins.disabled")}
	}
	return nil
}
