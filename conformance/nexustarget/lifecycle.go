package nexustarget

// defaultLifecycle is nexus's lifecycle handlers; nil until
// harness/lifecycle provides them.
var defaultLifecycle Lifecycle
