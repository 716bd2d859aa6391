// Package pgrole makes a login role whose sessions see one schema: behind a
// pooler in transaction mode a URL's search_path is not kept, so a test or
// a bench that needs a schema of its own reaches it as a role of its own
// (ALTER ROLE … SET search_path), the way a deployment sets its schema.
package pgrole

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// ForSchema creates a login role named like schema whose sessions start in
// schema, on admin's server; a superuser's role is a superuser (tests
// terminate sessions, read pg_stat_activity), another's is a member of the
// admin role with all rights on the schema. drop drops the role.
func ForSchema(ctx context.Context, admin *pgx.Conn, schema string) (role string, drop func(context.Context) error, err error) {
	role = schema
	var super bool
	var current string
	if err := admin.QueryRow(ctx, `SELECT rolsuper, rolname FROM pg_roles WHERE rolname = current_user`).Scan(&super, &current); err != nil {
		return "", nil, fmt.Errorf("read the current role: %w", err)
	}
	id, sch := pgx.Identifier{role}.Sanitize(), pgx.Identifier{schema}.Sanitize()
	create := "CREATE ROLE " + id + " LOGIN SUPERUSER"
	if !super {
		create = "CREATE ROLE " + id + " LOGIN IN ROLE " + pgx.Identifier{current}.Sanitize()
	}
	for _, stmt := range []string{create, "GRANT ALL ON SCHEMA " + sch + " TO " + id,
		"ALTER ROLE " + id + " SET search_path = " + sch} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			_, _ = admin.Exec(ctx, "DROP ROLE IF EXISTS "+id)
			return "", nil, fmt.Errorf("make a role for schema %s: %w", schema, err)
		}
	}
	return role, func(ctx context.Context) error {
		_, err := admin.Exec(ctx, "DROP ROLE IF EXISTS "+id)
		return err
	}, nil
}

// WithUser answers rawURL with its user set to user (no password: the
// pooler and the server trust it, or the pooler's auth_query answers).
func WithUser(rawURL, user string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", rawURL, err)
	}
	u.User = url.User(user)
	return u.String(), nil
}
