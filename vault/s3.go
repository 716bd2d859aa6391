package vault

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Backend keeps objects in a bucket of an S3-compatible store under a
// prefix. A part is written to a local temporary file and uploaded whole:
// an object appears only when its upload (or multipart upload) completes.
type s3Backend struct {
	client         *minio.Client
	bucket, prefix string
	url            string
}

// newS3Backend opens s3://bucket/prefix?endpoint=host:port&region=…&insecure=1;
// credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN, the region also from AWS_REGION.
func newS3Backend(ctx context.Context, u *url.URL) (*s3Backend, error) {
	if u.Host == "" {
		return nil, badLocation("vault url %q: no bucket (s3://BUCKET/PREFIX)", u.Redacted())
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" && k != "insecure" {
			return nil, badLocation("vault url: unknown parameter %q (endpoint, region, insecure)", k)
		}
	}
	endpoint := q.Get("endpoint")
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
	}
	region := q.Get("region")
	if region == "" {
		region = cmpOr(os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION"))
	}
	insecure := false
	switch q.Get("insecure") {
	case "", "0", "false":
	case "1", "true":
		insecure = true
	default:
		return nil, badLocation("vault url: insecure=%q is not 1 or 0", q.Get("insecure"))
	}
	client, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewEnvAWS(), Secure: !insecure, Region: region})
	if err != nil {
		return nil, badLocation("vault url: endpoint %q: %v", endpoint, err)
	}
	ok, err := client.BucketExists(ctx, u.Host)
	if err != nil {
		return nil, fmt.Errorf("vault %s: reach bucket %q: %w", u.Redacted(), u.Host, err)
	}
	if !ok {
		return nil, fmt.Errorf("vault %s: bucket %q does not exist", u.Redacted(), u.Host)
	}
	u.RawQuery = ""
	return &s3Backend{client: client, bucket: u.Host, prefix: strings.Trim(u.Path, "/"), url: u.String()}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *s3Backend) String() string { return s.url }

func (s *s3Backend) key(k string) string { return path.Join(s.prefix, k) }

func (s *s3Backend) create(_ context.Context, key string) (pendingObject, error) {
	f, err := os.CreateTemp("", "skiplock-vault-*")
	if err != nil {
		return nil, err
	}
	return &s3Object{File: f, s: s, key: s.key(key)}, nil
}

type s3Object struct {
	*os.File
	s   *s3Backend
	key string
}

func (o *s3Object) commit(ctx context.Context) error {
	defer o.abort()
	st, err := o.Stat()
	if err != nil {
		return err
	}
	if _, err := o.Seek(0, 0); err != nil {
		return err
	}
	_, err = o.s.client.PutObject(ctx, o.s.bucket, o.key, o.File, st.Size(),
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("upload %s: %w", o.key, err)
	}
	return nil
}

func (o *s3Object) abort() {
	_ = o.Close()
	_ = os.Remove(o.Name())
}

// sweep has nothing to remove: an object appears only when its upload
// completes, and an upload's local file is the process's own.
func (s *s3Backend) sweep(context.Context) error { return nil }

func notFound(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == minio.NoSuchKey || code == "NotFound"
}

func (s *s3Backend) open(ctx context.Context, key string) (object, int64, error) {
	size, err := s.size(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, err
	}
	return obj, size, nil
}

func (s *s3Backend) size(ctx context.Context, key string) (int64, error) {
	info, err := s.client.StatObject(ctx, s.bucket, s.key(key), minio.StatObjectOptions{})
	if notFound(err) {
		return 0, errNotExist
	}
	if err != nil {
		return 0, err
	}
	return info.Size, nil
}

func (s *s3Backend) remove(ctx context.Context, key string) error {
	err := s.client.RemoveObject(ctx, s.bucket, s.key(key), minio.RemoveObjectOptions{})
	if err != nil && !notFound(err) {
		return err
	}
	return nil
}
