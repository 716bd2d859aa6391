// Package contract loads job kind contracts and applies them to jobs.
//
// A contract file (YAML, or the same structure as JSON) declares the job
// kinds a deployment accepts: for each kind its queue, priority, retries,
// lease, timeout and backoff, the ops its jobs may carry, a JSON Schema
// (draft 2020-12) for its payload, and how an idempotency key is derived
// from a job. Parse and Load check the file and name the place of every
// problem (*FileError); Set.Apply checks a job against its kind and fills
// in what the job left out, naming the field at fault when it refuses one
// (*ValidationError). docs/contracts.md describes the format.
//
// The package is a leaf: it imports no other skiplock package.
package contract
