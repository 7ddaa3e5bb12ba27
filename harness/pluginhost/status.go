package pluginhost

import (
	"fmt"
	"time"

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
		out = append(out, m.status(m.byName[n]))
	}
	return out
}

func (m *Manager) status(man *Manifest) PluginStatus {
	st := PluginStatus{
		Name: man.Name, Version: man.Version, Source: man.Source, Manifest: man.Path,
		Executable: man.ExecutablePath(), Priority: man.Priority, Events: man.EventNames(),
		Tools: []string{}, State: StateStopped,
	}
	if st.Events == nil {
		st.Events = []string{}
	}
	for _, t := range man.Tools {
		if ref, ok := m.tools[man.exposedName(t.Name)]; ok && ref.Plugin == man.Name {
			st.Tools = append(st.Tools, ref.Name)
		}
	}
	m.mu.Lock()
	b := m.backend
	m.mu.Unlock()
	if b != nil {
		rt := b.Runtime(man.Name)
		st.State, st.PID, st.Restarts, st.LastError = rt.State, rt.PID, rt.Restarts, rt.LastError
		if st.State == "" {
			st.State = StateStopped
		}
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
	man, ok := m.byName[name]
	if !ok {
		return nil, fmt.Errorf("plugin %q: %w is declared with that name", name, ErrUnknownPlugin)
	}
	d := &PluginDetail{PluginStatus: m.status(man), Declaration: man}
	actual, err := CheckDigest(man, nil)
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
