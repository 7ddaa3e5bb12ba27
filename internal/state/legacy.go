package state

// RemoveLegacyTracker deletes a pre-0.7 root-level
// .nexus/state/agent-tracker.json (nexus-core: harnesses SHOULD remove it
// silently at session start) and reports whether one was there. No lock is
// taken: a sidecar lock would itself be a new file at the state root, which
// the namespace rule forbids, and removal is atomic anyway.
func (s *Store) RemoveLegacyTracker() (bool, error) {
	p := s.L.LegacyTrackerPath()
	if !Exists(p) {
		return false, nil
	}
	return true, s.removeFile(p)
}
