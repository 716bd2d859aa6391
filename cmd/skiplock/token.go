package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/server"
)

func init() { extraCommands = append(extraCommands, newTokenCmd) }

func newTokenCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Create, list and revoke API tokens"}
	cmd.AddCommand(newTokenCreateCmd(g), newTokenListCmd(g), newTokenRevokeCmd(g))
	return cmd
}

func newTokenCreateCmd(g *globals) *cobra.Command {
	var role, tenant, name string
	cmd := &cobra.Command{
		Use:   "create --role ROLE",
		Short: "Create a token; it is printed once, on the last line",
		Long: `Create an API token. Roles: admin (everything), producer (enqueue and read),
worker (claim and report, and read), viewer (read). --tenant scopes the token
to one tenant's jobs. Only the token's SHA-256 is stored: the token is printed
once, alone on the last line of standard output.`,
		Example: `  skiplock token create --role worker --name transcoders
  skiplock token create --role producer --tenant acme`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !server.ValidRole(role) {
				return usagef("--role: %q is not one of %s", role, strings.Join(server.Roles, ", "))
			}
			if cmd.Flags().Changed("tenant") && tenant == "" {
				return usagef("--tenant: must not be empty; a token for all tenants is made by leaving the flag out")
			}
			if len(name) > 200 || len(tenant) > 200 {
				return usagef("--name and --tenant: at most 200 characters")
			}
			secret, err := server.NewToken()
			if err != nil {
				return err
			}
			db, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			if _, err := db.Driver.Migrator().Up(cmd.Context(), 0); err != nil {
				return fmt.Errorf("migrate the database: %w", err)
			}
			store, err := db.Tokens()
			if err != nil {
				return err
			}
			t, err := store.TokenCreate(cmd.Context(), &driver.Token{Name: name, Hash: server.HashToken(secret),
				Role: role, Tenant: tenant})
			if err != nil {
				return fmt.Errorf("create token: %w", err)
			}
			scope := "all tenants"
			if tenant != "" {
				scope = "tenant " + strconv.Quote(tenant)
			}
			return output(cmd, map[string]any{"token": newTokenView(t), "secret": secret}, func(w io.Writer) error {
				fmt.Fprintf(w, "token %d created: role %s, %s; it is shown only now:\n", t.ID, t.Role, scope)
				_, err := fmt.Fprintln(w, secret)
				return err
			})
		},
	}
	addJSONFlag(cmd)
	cmd.Flags().StringVar(&role, "role", "", "admin, producer, worker or viewer (required)")
	cmd.Flags().StringVar(&tenant, "tenant", "", "scope the token to this tenant")
	cmd.Flags().StringVar(&name, "name", "", "a name to recognise the token by")
	return cmd
}

func newTokenListCmd(g *globals) *cobra.Command {
	return addJSONFlag(&cobra.Command{Use: "list", Short: "List tokens (never their secrets)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := g.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			store, err := db.Tokens()
			if err != nil {
				return err
			}
			tokens, err := store.TokenList(cmd.Context())
			if err != nil {
				return fmt.Errorf("list tokens: %w", err)
			}
			views := make([]tokenView, len(tokens))
			for i, t := range tokens {
				views[i] = newTokenView(t)
			}
			return output(cmd, map[string]any{"tokens": views}, func(w io.Writer) error {
				t := newTable(w, "ID", "NAME", "ROLE", "TENANT", "CREATED")
				for _, v := range views {
					t.row(v.ID, v.Name, v.Role, v.Tenant, v.CreatedAt.Format(time.RFC3339))
				}
				return t.flush()
			})
		}})
}

func newTokenRevokeCmd(g *globals) *cobra.Command {
	return addJSONFlag(&cobra.Command{Use: "revoke ID", Short: "Revoke a token", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return usagef("ID: %q is not a token id (a positive integer)", args[0])
			}
			db, err := g.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			store, err := db.Tokens()
			if err != nil {
				return err
			}
			if err := store.TokenDelete(cmd.Context(), id); err != nil {
				return fmt.Errorf("revoke token %d: %w", id, err)
			}
			return output(cmd, map[string]any{"revoked": true, "id": id}, line("token %d revoked", id))
		}})
}

// tokenView is a token in --json; its secret is never stored.
type tokenView struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Tenant    string    `json:"tenant"`
	CreatedAt time.Time `json:"created_at"`
}

func newTokenView(t *driver.Token) tokenView {
	return tokenView{ID: t.ID, Name: t.Name, Role: t.Role, Tenant: t.Tenant, CreatedAt: skiplock.ViewTime(t.CreatedAt)}
}
