//go:build !linux

package main

func fsKind(string) string { return "unknown" }
