// Package docs has no code: its tests keep README.md and docs/*.md true.
// Every relative link and #anchor must resolve, and every function a
// code-map table names must be declared in the Go file its row links.
package docs
