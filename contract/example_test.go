package contract_test

import (
	"errors"
	"fmt"

	"github.com/skiplock/skiplock/contract"
)

const contracts = `
version: 1
strict: true
kinds:
  file:
    queue: ingest
    ops: [ingest, update, delete]
    payload:
      type: object
      required: [collection, file_path]
      properties:
        collection: {type: string}
        file_path: {type: string, minLength: 1}
        size_bytes: {type: integer, minimum: 0}
    unique: {policy: active, scope: [payload.collection], fields: [payload.file_path]}
`

func Example() {
	set, err := contract.Parse([]byte(contracts))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := set.Apply(contract.Spec{
		Kind:    "file",
		Op:      "ingest",
		Payload: []byte(`{"collection": "docs", "file_path": "/src/main.go"}`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Queue, res.Priority, res.MaxRetries, res.IdempotencyKey, res.UniquePolicy)
	// Output: ingest 5 3 file:docs:e7d1fde3872fc53d active
}

func ExampleSet_Apply_refused() {
	set, _ := contract.Parse([]byte(contracts))
	for _, spec := range []contract.Spec{
		{Kind: "fil"},
		{Kind: "file", Op: "scan"},
		{Kind: "file", Op: "ingest", Payload: []byte(`{"collection": "docs", "file_path": "/a", "size_bytes": -1}`)},
	} {
		_, err := set.Apply(spec)
		var ve *contract.ValidationError
		if errors.As(err, &ve) {
			// An HTTP server answers 400 {"error": {"code": "invalid_argument", "field": ve.Field, "message": ve.Message}}.
			fmt.Printf("field=%s message=%s\n", ve.Field, ve.Message)
		}
	}
	// Output:
	// field=kind message=unknown kind "fil" (strict mode)
	// field=op message="scan" is not allowed for kind "file" (allowed: ingest, update, delete)
	// field=payload.size_bytes message=must be >= 0
}

func ExampleParse_errors() {
	_, err := contract.Parse([]byte("version: 1\nkinds:\n  file:\n    priorty: 5\n    unique: {policy: window, fields: [path]}\n"))
	fmt.Println(err)
	// Output:
	// kinds.file.priorty: unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff, ops, payload, unique, sql_enqueue)
	// kinds.file.unique.fields[0]: unknown reference "path": use payload.<property>[.<property>...], tenant, queue or op
	// kinds.file.unique.window: required for policy window
}
