package main

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/input"
)

// wantsJSON tells whether the command line asked for --json: the flag's
// value when it was parsed, else the argument itself (a command line whose
// flags did not parse still wants its error in the form it asked for).
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if f := cmd.Flags().Lookup("json"); f != nil && f.Changed {
			return f.Value.String() == "true"
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// jsonError is the HTTP API's error body: {"error": {"code", "message",
// "field"}}, field when one input is at fault.
type jsonError struct {
	Error jsonErrorBody `json:"error"`
}

type jsonErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// writeJSONError writes err as the API would answer it, on one line.
func writeJSONError(w io.Writer, err error, msg string) {
	body := jsonErrorBody{Code: errorCode(err), Message: msg}
	var ve *skiplock.ValidationError
	var ie *input.Error
	switch {
	case errors.As(err, &ve):
		body.Field = ve.Field
	case errors.As(err, &ie):
		body.Field = ie.Field
	case strings.HasPrefix(msg, "--"):
		// A flag's error names it first: "--state: unknown state …".
		if name, _, ok := strings.Cut(msg[2:], ":"); ok && !strings.ContainsAny(name, " \"'") {
			body.Field = name
		}
	}
	b, _ := json.Marshal(jsonError{Error: body})
	_, _ = w.Write(append(b, '\n'))
}

// errorCode answers the API's code for err: the codes of docs/api.md.
func errorCode(err error) string {
	switch {
	case errors.Is(err, skiplock.ErrTooLarge):
		return "payload_too_large"
	case errors.Is(err, skiplock.ErrNotFound):
		return "not_found"
	case errors.Is(err, skiplock.ErrWrongState), errors.Is(err, skiplock.ErrLeaseLost):
		return "conflict"
	case isInputError(err):
		return "invalid_argument"
	}
	return "unavailable"
}
