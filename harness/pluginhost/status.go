package pluginhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/nexus-harness/nexus/plugins/sdk"
)

// State is a plugin's lifecycle state.
type State string

const (
	StateStopped    State = "stopped"    // not started yet (or closed)
	StateStarting   State = "starting"   // a start is in flight
	StateRunning    State = "running"    // a process is serving
	StateRestarting State = "restarting" // crashed or failed to start; will retry
)

// PluginStatus is one line of `nexus plugin list`.
type PluginStatus struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Source     Source   `json:"source"`
	Manifest   string   `json:"manifest"`
	Executable string   `json:"executable"`
	Priority   int      `json:"priority"`
	Tools      []string `json:"tools"`  // exposed names
	Events     []string `json:"events"` // lifecycle order
	State      State    `json:"state"`
	PID        int      `json:"pid,omitempty"`
	Restarts   int      `json:"restarts"`
	LastError  string   `json:"last_error,omitempty"`
}

// List describes every usable plugin, in name order, without starting any.
// Problems lists the manifests that could not be used.
func (m *Manager) List() []PluginStatus {
	out := make([]PluginStatus, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.procs[n].status())
	}
	return out
}

func (p *proc) status() PluginStatus {
	man := p.man
	st := PluginStatus{
		Name: man.Name, Version: man.Version, Source: man.Source, Manifest: man.Path,
		Executable: man.ExecutablePath(), Priority: man.Priority, Events: man.EventNames(),
		Tools: []string{},
	}
	if st.Events == nil {
		st.Events = []string{}
	}
	for _, t := range man.Tools {
		if ref, ok := p.m.tools[man.exposedName(t.Name)]; ok && ref.Plugin == man.Name {
			st.Tools = append(st.Tools, ref.Name)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.inst != nil && !p.inst.exited():
		st.State, st.PID = StateRunning, p.inst.pid
	case p.starting != nil:
		st.State = StateStarting
	case p.failures > 0 || p.inst != nil:
		st.State = StateRestarting
	default:
		st.State = StateStopped
	}
	st.Restarts = p.restarts
	if p.lastErr != nil {
		st.LastError = p.lastErr.Error()
	}
	return st
}

// PluginDetail is `nexus plugin inspect NAME`: the status, the whole
// manifest and the executable's digest, checked without starting it.
type PluginDetail struct {
	PluginStatus
	Declaration  *Manifest `json:"declaration"`
	ActualSHA256 string    `json:"actual_sha256,omitempty"`
	DigestOK     bool      `json:"digest_ok"`
	DigestError  string    `json:"digest_error,omitempty"`
}

// Inspect describes one plugin and checks its executable's digest.
func (m *Manager) Inspect(name string) (*PluginDetail, error) {
	p, ok := m.procs[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q: %w is declared with that name", name, ErrUnknownPlugin)
	}
	d := &PluginDetail{PluginStatus: p.status(), Declaration: p.man}
	actual, err := checkDigest(p.man, nil)
	d.ActualSHA256 = actual
	d.DigestOK = err == nil
	if err != nil {
		d.DigestError = err.Error()
	}
	return d, nil
}

// VerifyReport is `nexus plugin verify NAME`: a fresh process is started
// (checksum, handshake, mTLS, Info, Configure), described and stopped.
type VerifyReport struct {
	Name           string                  `json:"name"`
	OK             bool                    `json:"ok"`
	Error          string                  `json:"error,omitempty"`
	ExpectedSHA256 string                  `json:"expected_sha256"`
	ActualSHA256   string                  `json:"actual_sha256,omitempty"`
	Protocol       int                     `json:"protocol,omitempty"`
	MTLS           bool                    `json:"mtls"`
	StartTime      time.Duration           `json:"start_time,omitempty"`
	Info           *sdk.Info               `json:"info,omitempty"`
	Tools          []Tool                  `json:"tools"`
	Subscriptions  map[string]Subscription `json:"subscriptions"`
	// Notes are differences between the manifest and what the plugin says
	// about itself; they do not fail verification.
	Notes []string `json:"notes,omitempty"`
}

// Verify starts a separate process of the plugin (the managed one, if any,
// is left alone), checks it end to end and stops it. A plugin that cannot
// be verified gives a report with OK false and Error set; the error return
// is only for an unknown name or a closed manager.
func (m *Manager) Verify(ctx context.Context, name string) (*VerifyReport, error) {
	p, ok := m.procs[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q: %w is declared with that name", name, ErrUnknownPlugin)
	}
	if m.isClosed() {
		return nil, ErrClosed
	}
	r := &VerifyReport{
		Name: name, ExpectedSHA256: p.man.SHA256, MTLS: !m.opts.DisableMTLS,
		Tools: []Tool{}, Subscriptions: p.man.Events,
	}
	if r.Subscriptions == nil {
		r.Subscriptions = map[string]Subscription{}
	}
	if actual, err := FileSHA256(p.man.ExecutablePath()); err == nil {
		r.ActualSHA256 = actual
	}
	type launched struct {
		inst *instance
		err  error
	}
	done := make(chan launched, 1)
	go func() {
		inst, err := p.launch(ctx, false)
		done <- launched{inst, err}
	}()
	var l launched
	select {
	case l = <-done:
	case <-ctx.Done():
		go func() {
			if l := <-done; l.inst != nil {
				l.inst.client.Kill()
			}
		}()
		r.Error = fmt.Sprintf("plugin %s: verification stopped: %v", name, ctx.Err())
		return r, nil
	}
	if l.err != nil {
		r.Error = l.err.Error()
		var de *DigestError
		if errors.As(l.err, &de) {
			r.ActualSHA256 = de.Actual
		}
		return r, nil
	}
	defer l.inst.client.Kill()
	r.OK = true
	r.Protocol, r.StartTime, r.Info, r.Notes = l.inst.protocol, l.inst.startDur, l.inst.info, l.inst.notes
	for _, t := range p.man.Tools {
		spec, ok := l.inst.tools[t.Name]
		if !ok {
			continue
		}
		r.Tools = append(r.Tools, Tool{ToolRef: toolRef(p.man, t, m.opts.ToolTimeout), Spec: spec})
		if err := compileToolSchema(spec.InputSchema); err != nil {
			r.OK = false
			r.Error = fmt.Sprintf("tool %s: input schema is not a usable JSON Schema: %v", t.Name, err)
		}
	}
	return r, nil
}

// compileToolSchema checks that a tool's input schema compiles (draft
// 2020-12 unless it says otherwise), as nexus's argument validation will
// need it to.
func compileToolSchema(s []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "urn:nexus:plugin-tool-input"
	if err := c.AddResource(url, doc); err != nil {
		return err
	}
	_, err = c.Compile(url)
	return err
}
