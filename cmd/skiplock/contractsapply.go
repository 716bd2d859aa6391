package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

// contractsWin reads --contracts-win: "" (refuse), "stored" or "file".
func contractsWin(v string) (skiplock.ContractsWin, error) {
	switch v {
	case "":
		return skiplock.ContractsRefuse, nil
	case "stored":
		return skiplock.ContractsStoredWins, nil
	case "file":
		return skiplock.ContractsConfigWins, nil
	}
	return "", usagef("--contracts-win: %q is not stored or file", v)
}

// contractsErr makes a contract file that differs from the stored set a
// usage error (exit 2) that says what to do.
func contractsErr(err error) error {
	if errors.Is(err, skiplock.ErrContractsDiffer) {
		return usagef("--contracts: %v: run `skiplock contracts apply FILE`, or pass --contracts-win stored|file", err)
	}
	return err
}

// newContractsApplyCmd stores a contract file in the database as the next
// version, which every client, server and command then enforces.
func newContractsApplyCmd(g *globals) *cobra.Command {
	return addJSONFlag(&cobra.Command{
		Use:   "apply FILE",
		Short: "Store a contract file in the database: every client, server and command enforces it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := loadContracts(args[0])
			if err != nil {
				return err
			}
			c, closeDB, err := (&globals{databaseURL: g.databaseURL}).client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			stored, err := c.ContractsApply(cmd.Context(), set)
			if err != nil {
				return err
			}
			answer := map[string]any{"version": stored.Version, "digest": stored.Digest, "strict": stored.Strict,
				"kinds": set.Kinds()}
			return output(cmd, answer, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "contracts version %d applied: %d kinds, strict=%v\n", stored.Version,
					len(set.Kinds()), stored.Strict)
				return err
			})
		},
	})
}
