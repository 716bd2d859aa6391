package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set by a release build:
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD)" ./cmd/skiplock
//
// Without them (go run, go build, go install) they come from the build
// information Go embeds: the module version and the VCS revision.
var (
	version = ""
	commit  = ""
)

// buildInfo is what `skiplock version` prints.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go_version"`
}

func currentBuild() buildInfo {
	info, _ := debug.ReadBuildInfo()
	return newBuildInfo(version, commit, info)
}

// newBuildInfo prefers the -X values and fills what they leave out from
// info (nil when the binary carries none).
func newBuildInfo(version, commit string, info *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: version, Commit: commit, GoVersion: runtime.Version()}
	if info == nil {
		return b.withDefaults()
	}
	if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && b.Commit == "":
			b.Commit = s.Value
		case s.Key == "vcs.modified" && commit == "":
			b.Modified = s.Value == "true"
		}
	}
	if info.GoVersion != "" {
		b.GoVersion = info.GoVersion
	}
	return b.withDefaults()
}

// withDefaults names what is unknown, e.g. in a `go run` build, which
// embeds no VCS information.
func (b buildInfo) withDefaults() buildInfo {
	if b.Version == "" {
		b.Version = "devel"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// String is the human form: "skiplock v1.2.3 (commit 1a2b3c4, go1.26.8)".
func (b buildInfo) String() string {
	c := b.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if b.Modified {
		c += ", modified"
	}
	return fmt.Sprintf("skiplock %s (commit %s, %s)", b.Version, c, b.GoVersion)
}

func newVersionCmd(*globals) *cobra.Command {
	return addJSONFlag(&cobra.Command{Use: "version", Short: "Print the version, commit and Go version",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := currentBuild()
			return output(cmd, b, func(w io.Writer) error {
				_, err := fmt.Fprintln(w, b)
				return err
			})
		}})
}
