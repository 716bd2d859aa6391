package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/server"
)

// jsonlBatch is how many lines `enqueue --jsonl` inserts at a time: memory
// stays bounded by one batch, however long the input.
const jsonlBatch = 5000

// jsonlMaxLine bounds one line: the largest payload the server takes,
// with room for the other fields.
const jsonlMaxLine = 2*server.DefaultMaxPayloadBytes + 64<<10

// jsonlFlags are the flags that still apply with --jsonl; the job flags
// do not, as each line carries its own fields.
var jsonlFlags = map[string]bool{"jsonl": true, "partial": true, "contracts": true, "database-url": true, "listen-database-url": true}

// jsonlInput is the stream of job specs and what is known of its size.
type jsonlInput struct {
	lines   *bufio.Scanner
	counter *countingReader
	size    int64 // bytes of a regular file; 0 when unknown
	line    int   // number of the last line read
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func openJSONL(cmd *cobra.Command, path string) (*jsonlInput, func(), error) {
	in := &jsonlInput{counter: &countingReader{r: cmd.InOrStdin()}}
	closeIn := func() {}
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, usagef("--jsonl: %v", err)
		}
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			f.Close()
			return nil, nil, usagef("--jsonl: %s is a directory", path)
		}
		if err == nil && st.Mode().IsRegular() {
			in.size = st.Size()
		}
		in.counter.r, closeIn = f, func() { f.Close() }
	}
	in.lines = bufio.NewScanner(in.counter)
	in.lines.Buffer(make([]byte, 64<<10), int(jsonlMaxLine))
	return in, closeIn, nil
}

// next answers up to max jobs; none at the end of the input. A bad line
// is a usage error naming its number; the jobs before it on the same
// batch come back with it.
func (in *jsonlInput) next(max int) ([]skiplock.InsertManyParams, error) {
	jobs := make([]skiplock.InsertManyParams, 0, max)
	for len(jobs) < max && in.lines.Scan() {
		in.line++
		raw := bytes.TrimSpace(in.lines.Bytes())
		if len(raw) == 0 {
			continue
		}
		job, err := parseLine(raw)
		if err != nil {
			return jobs, usagef("line %d: %v", in.line, err)
		}
		jobs = append(jobs, job)
	}
	if err := in.lines.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return jobs, usagef("line %d: longer than %d bytes", in.line+1, jsonlMaxLine)
		}
		return jobs, fmt.Errorf("read --jsonl input: %w", err)
	}
	return jobs, nil
}

// parseLine reads one line's job spec. Invalid JSON is named with its
// column, a line that is no object with what it is.
func parseLine(raw []byte) (skiplock.InsertManyParams, error) {
	if !json.Valid(raw) {
		return skiplock.InsertManyParams{}, errors.New("invalid JSON" + jsonColumn(raw))
	}
	if raw[0] != '{' {
		return skiplock.InsertManyParams{}, fmt.Errorf("must be a JSON object, got %s", jsonKind(raw[0]))
	}
	job, err := skiplock.ParseJobSpec(raw, "", 0)
	var ve *skiplock.ValidationError
	if errors.As(err, &ve) && ve.Field == "" {
		return job, &usageError{err: errors.New(ve.Message)}
	}
	return job, err
}

// runJSONL inserts the job specs of path ("-": stdin), all in one
// transaction, or batch by batch with partial.
func runJSONL(cmd *cobra.Command, g *globals, path string, partial bool) error {
	var extra error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if !jsonlFlags[f.Name] && extra == nil {
			extra = usagef("--%s: does not apply with --jsonl (each line sets its own fields)", f.Name)
		}
	})
	if extra != nil {
		return extra
	}
	in, closeIn, err := openJSONL(cmd, path)
	if err != nil {
		return err
	}
	defer closeIn()
	c, closeDB, err := g.client(cmd.Context())
	if err != nil {
		return err
	}
	defer closeDB()
	bar := newProgress(cmd.ErrOrStderr(), "inserted", in.size)
	start := time.Now()
	var n int
	if partial {
		n, err = insertPartial(cmd.Context(), c, in, bar)
	} else {
		n, err = insertAll(cmd.Context(), c, in, bar)
	}
	bar.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "inserted %s jobs %s\n", thousands(int64(n)), rateLine(n, time.Since(start)))
	return nil
}

// insertAll inserts every line or none.
func insertAll(ctx context.Context, c *skiplock.Client, in *jsonlInput, bar *progress) (int, error) {
	done := 0
	n, err := c.InsertStream(ctx, func() ([]skiplock.InsertManyParams, error) {
		bar.update(done, in.counter.n)
		jobs, err := in.next(jsonlBatch)
		done += len(jobs)
		return jobs, err
	})
	if err != nil {
		return 0, fmt.Errorf("%w (nothing was inserted)", err)
	}
	return n, nil
}

// insertPartial commits batch by batch; on a bad line it first inserts
// the lines before it, so that the count reported is where to resume.
func insertPartial(ctx context.Context, c *skiplock.Client, in *jsonlInput, bar *progress) (int, error) {
	done := 0
	for {
		first := in.line + 1
		jobs, bad := in.next(jsonlBatch)
		if len(jobs) > 0 {
			if _, err := c.InsertMany(ctx, jobs); err != nil {
				return done, fmt.Errorf("%w (%s jobs inserted before)", batchErr(first, in.line, err), thousands(int64(done)))
			}
			done += len(jobs)
			bar.update(done, in.counter.n)
		}
		if bad != nil {
			return done, fmt.Errorf("%w (%s jobs inserted before it)", bad, thousands(int64(done)))
		}
		if len(jobs) == 0 {
			return done, nil
		}
	}
}

// batchErr names the lines of a batch that the database refused.
func batchErr(first, last int, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("lines %d-%d: %w", first, last, err)
}
