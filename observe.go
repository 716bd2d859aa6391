package skiplock

import (
	"context"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Stats are totals over all jobs, live and archived: by state and kind, and
// finished in the last minute and hour.
type Stats = driver.Stats

// Stats counts jobs by state and kind, and jobs finished recently.
func (c *Client) Stats(ctx context.Context) (*Stats, error) { return c.driver.JobStats(ctx) }

// JobsChangedSince answers up to limit jobs, live or archived, updated after
// since, oldest change first: the feed of an event stream.
func (c *Client) JobsChangedSince(ctx context.Context, since time.Time, limit int) ([]*JobRow, error) {
	return c.driver.JobChangedSince(ctx, since, limit)
}

// AllStates lists every job state, live ones first.
func AllStates() []JobState { return slices.Clone(driver.AllStates) }

// Token is an API token of the HTTP server; only the SHA-256 of its secret
// is stored.
type Token = driver.Token

// TokenStore keeps API tokens.
type TokenStore = driver.TokenStore

// Tokens answers the store of API tokens in the client's database.
func (c *Client) Tokens() TokenStore { return c.driver }

// Database names the client's database: "postgres" or "sqlite".
func (c *Client) Database() string { return c.driver.Name() }

// Ping answers whether the database answers a read (of the small token
// table).
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.driver.TokenCount(ctx)
	return err
}
