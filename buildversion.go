package skiplock

import (
	"runtime/debug"
	"sync"
)

const modulePath = "github.com/skiplock/skiplock"

// Version answers the version of the Skiplock module built into this
// program, as Go records it: "v1.4.0" for a release (go install …@v1.4.0,
// or a dependency at that version), a pseudo-version for a commit, "devel"
// when built from a checkout Go could not stamp. Files Skiplock writes
// (the vault's Parquet created_by) carry it, with Commit.
func Version() string { return build().version }

// Commit answers the VCS revision the program was built from, when Go
// recorded one (a build in a checkout), else "unknown".
func Commit() string { return build().commit }

type buildStamp struct{ version, commit string }

var build = sync.OnceValue(func() buildStamp {
	b := buildStamp{version: "devel", commit: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			b.commit = s.Value
		}
	}
	var m *debug.Module
	if info.Main.Path == modulePath {
		m = &info.Main
	}
	for _, d := range info.Deps {
		if m == nil && d.Path == modulePath {
			m = d
		}
	}
	if m != nil && m.Replace != nil {
		m = m.Replace // a local replacement has no version: devel
	}
	if m != nil && m.Version != "" && m.Version != "(devel)" {
		b.version = m.Version
	}
	return b
})
