package vault

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/skiplock/skiplock"
)

// fakeS3 starts an S3-compatible server with bucket and answers its
// host:port; credentials are set in the environment as AWS_*.
func fakeS3(t *testing.T, bucket string) (string, *s3mem.Backend) {
	t.Helper()
	mem := s3mem.New()
	if err := mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	u, _ := url.Parse(srv.URL)
	return u.Host, mem
}

// TestS3Vault stores jobs in an S3 bucket under a prefix, reads them back,
// and a second vault opened on the same URL sees the same parts.
func TestS3Vault(t *testing.T) {
	host, mem := fakeS3(t, "archive")
	ctx := context.Background()
	loc := "s3://archive/skiplock/prod?endpoint=" + host + "&region=us-east-1&insecure=1"
	v, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != "s3://archive/skiplock/prod" {
		t.Fatalf("vault named %s", v)
	}
	base := time.Date(2026, 4, 2, 23, 10, 0, 0, time.UTC)
	var jobs []*skiplock.JobRow
	for i := range 40 {
		f := base.Add(time.Duration(i) * 2 * time.Minute) // two hours, the second the next day
		jobs = append(jobs, &skiplock.JobRow{ID: int64(100 + i), Kind: "k", Queue: "q", State: skiplock.StateCompleted,
			RunAt: base, CreatedAt: base, UpdatedAt: f, StartedAt: &base, FinishedAt: &f})
	}
	if _, err := v.Store(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Store(ctx, jobs[:10]); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := again.Parts(ctx, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Jobs[:29] != "jobs/date=2026-04-02/hour=23/" || parts[1].Jobs[:29] != "jobs/date=2026-04-03/hour=00/" {
		t.Fatalf("parts %+v, want one in each hour", parts)
	}
	for _, p := range parts {
		obj, err := mem.HeadObject("archive", "skiplock/prod/"+p.Jobs)
		if err != nil {
			t.Fatalf("object %s: %v", p.Jobs, err)
		}
		if obj.Size != p.Bytes {
			t.Fatalf("object %s is %d bytes, the manifest says %d", p.Jobs, obj.Size, p.Bytes)
		}
	}
	got := queryAll(t, again)
	if len(got) != len(jobs) {
		t.Fatalf("read back %d jobs, want %d", len(got), len(jobs))
	}
	m, err := again.Metrics(ctx, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m[0].Jobs+m[1].Jobs != 40 || m[0].Completed != m[0].Jobs {
		t.Fatalf("metrics %+v", m)
	}
}

// TestS3VaultMissingBucket: opening a vault on a bucket that does not
// exist fails, naming it.
func TestS3VaultMissingBucket(t *testing.T) {
	host, _ := fakeS3(t, "archive")
	_, err := Open(context.Background(), "s3://nope/x?endpoint="+host+"&insecure=1")
	if err == nil {
		t.Fatal("opened a vault on a missing bucket")
	}
	t.Log(err)
}
