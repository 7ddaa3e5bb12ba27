package state

// IgnoresState reports whether the content of a .nexus/.gitignore ignores
// state/ (the rule EnsureTree applies), for diagnostics that must not create
// the tree.
func IgnoresState(gitignore string) bool { return ignoresState(gitignore) }
