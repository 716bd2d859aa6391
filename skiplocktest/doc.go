// Package skiplocktest helps tests of code that uses Skiplock: assert which
// jobs a piece of code inserted (RequireInserted, RequireNotInserted,
// RequireManyInserted, and their …Tx forms that look inside an open
// transaction), and run a worker on a job without starting a client (Work,
// Drain). Each helper fails the test through t with a message naming what
// was expected and what was found.
package skiplocktest
