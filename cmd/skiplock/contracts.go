package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock/contract"
)

func init() { extraCommands = append(extraCommands, newContractsCmd) }

func newContractsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "contracts", Short: "Check contract files, and apply one to the database"}
	cmd.AddCommand(newContractsApplyCmd(g))
	cmd.AddCommand(addJSONFlag(&cobra.Command{
		Use:   "check FILE",
		Short: "Validate a contract file and list its kinds",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := loadContracts(args[0])
			if err != nil {
				return err
			}
			kinds := set.Kinds()
			if kinds == nil {
				kinds = []contract.KindInfo{}
			}
			answer := map[string]any{"file": args[0], "strict": set.Strict, "kinds": kinds}
			return output(cmd, answer, func(w io.Writer) error {
				fmt.Fprintf(w, "%s: valid, %d kinds, strict=%v\n", args[0], len(kinds), set.Strict)
				t := newTable(w, "KIND", "QUEUE", "PRIORITY", "MAX_RETRIES", "OPS", "UNIQUE")
				for _, k := range kinds {
					unique := "-"
					if k.Unique != nil {
						unique = k.Unique.Policy
						if k.Unique.Window != "" {
							unique += " " + k.Unique.Window
						}
					}
					ops := strings.Join(k.Ops, ",")
					if ops == "" {
						ops = "-"
					}
					t.row(k.Kind, k.Queue, k.Priority, k.MaxRetries, ops, unique)
				}
				return t.flush()
			})
		},
	}))
	return cmd
}

// loadContracts loads a contract file; a bad file is a usage error (exit 2)
// whose problems are joined on one line, each with its place.
func loadContracts(path string) (*contract.Set, error) {
	set, err := contract.Load(path)
	if err == nil {
		return set, nil
	}
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	msg := strings.Join(lines, "; ")
	var fe *contract.FileError
	if errors.As(err, &fe) || errors.Is(err, os.ErrNotExist) || strings.HasPrefix(msg, "load contracts") {
		return nil, usagef("contracts %s: %s", path, msg)
	}
	return nil, fmt.Errorf("contracts %s: %s", path, msg)
}
